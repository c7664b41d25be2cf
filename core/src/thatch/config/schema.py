"""Every key core reads from the config file, as data: its type, default and help.

Core's tables are described with the same :class:`~thatch.plugin.tables.ConfigTable`
records plugins declare through ``thatch_config_tables``, so one description
serves validation, ``thatch doctor`` and the docs. :func:`example` renders
the config file example that ``docs/user-guide.md`` shows;
``tests/unit/test_docs_coverage.py`` fails when the loaders read a key that
is not listed here, when a key listed here is no longer read, or when the
guide's example or reference leaves one out.

Environment variables that override a key are named in its help.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from thatch.plugin.tables import ConfigKey, ConfigTable


def _at_least(lowest: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value >= lowest else f"use a number of at least {lowest}"

    return check


def _between(lowest: float, highest: float) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if lowest <= value <= highest else f"use a number from {lowest} to {highest}"

    return check


_COSINE = _between(-1.0, 1.0)

TABLES: tuple[ConfigTable, ...] = (
    ConfigTable(
        "plugins",
        (ConfigKey("blocked", list, [], 'plugin names never loaded, e.g. ["decision-nudge"]'),),
        "which installed plugins load",
    ),
    ConfigTable(
        "storage",
        (
            ConfigKey(
                "backend", str, "sqlite", "the storage backend of every part not named below"
            ),
            *(
                ConfigKey(part, str, None, f"the backend that keeps the {part}")
                for part in ("memories", "decisions", "predictions")
            ),
            ConfigKey(
                "db_path",
                str,
                None,
                "the database file (also THATCH_DB_PATH)",
            ),
            ConfigKey(
                "stores",
                dict,
                None,
                "store-name patterns and the backend that keeps each one's memories "
                "(first match wins)",
            ),
        ),
        "where memories, the decision model and the prediction log are kept",
    ),
    ConfigTable(
        "embedder",
        (
            ConfigKey(
                "model",
                str,
                "sentence-transformers/all-MiniLM-L6-v2",
                "the embedding model's name (also THATCH_MODEL)",
            ),
            ConfigKey(
                "model_path",
                str,
                None,
                "a local model folder instead of the installed one (also THATCH_MODEL_PATH)",
            ),
        ),
        "how text becomes vectors",
    ),
    ConfigTable(
        "thresholds",
        (
            ConfigKey(
                "recall",
                float,
                None,
                "the cosine a memory needs to be recalled (also THATCH_RECALL_THRESHOLD)",
                _COSINE,
            ),
            ConfigKey(
                "dedup",
                float,
                None,
                "the cosine over which a new memory is a near duplicate",
                _COSINE,
            ),
            ConfigKey(
                "prediction",
                float,
                None,
                "the cosine a decision-model situation needs to fire "
                "(also THATCH_PREDICTION_THRESHOLD)",
                _COSINE,
            ),
        ),
        "overrides of the embedder's calibrated cosines",
    ),
    ConfigTable(
        "nudges",
        (
            ConfigKey(
                "budget",
                int,
                2000,
                "characters injected per prompt, all nudges together",
                _at_least(200),
            ),
            ConfigKey(
                "repeat_window",
                int,
                10,
                "a memory shown in a session waits this many prompts",
                _at_least(0),
            ),
            ConfigKey(
                "min_prompt_chars", int, 10, "shorter prompts get no recall nudge", _at_least(0)
            ),
        ),
        "what is added to a prompt",
    ),
    ConfigTable(
        "hooks",
        (
            ConfigKey(
                "timeout_ms",
                int,
                300,
                "hard cap of every hook command (also THATCH_HOOK_TIMEOUT_MS)",
                _at_least(50),
            ),
            ConfigKey(
                "cold_start_ms",
                int,
                6000,
                "how long a session start or prompt waits for a daemon that is starting or "
                "loading its model; 0: never past the cap (also THATCH_HOOK_COLD_START_MS)",
                _at_least(0),
            ),
        ),
        "the hook commands' time limits",
    ),
    ConfigTable(
        "daemon",
        (
            ConfigKey(
                "idle_minutes",
                float,
                30,
                "the daemon exits after this long without a request or MCP session; 0: never",
                _at_least(0),
            ),
        ),
        "the background process",
    ),
    ConfigTable(
        "predictions",
        (
            ConfigKey(
                "population_prior",
                bool,
                True,
                "start new predictions at the store's confirm rate once it has evidence",
            ),
            ConfigKey(
                "edge_weight_from_cosine",
                bool,
                False,
                "a new link to an existing situation weighs the cosine that matched it",
            ),
            ConfigKey(
                "cosine_power",
                float,
                1.3,
                "score = cosine ** power × weight × confidence",
                _between(0.1, 5.0),
            ),
            ConfigKey(
                "prompt_intent",
                bool,
                False,
                "fire with the model's calibrated prompt-intent shift and margin",
            ),
            ConfigKey(
                "prompt_map",
                bool,
                True,
                "fire on the cosine of prompt and matcher moved by the model's learnt maps",
            ),
        ),
        "how the decision model scores (docs/decision-model.md)",
    ),
)

#: What the example shows for a key with no default value.
_EXAMPLE_VALUES = {
    "storage.memories": '"sqlite"',
    "storage.decisions": '"sqlite"',
    "storage.predictions": '"sqlite"',
    "storage.db_path": '"/path/to/thatch.db"',
    "storage.stores": '{ "acme/*" = "postgres" }',
    "embedder.model_path": '"/path/to/a/local/model/folder"',
    "thresholds.recall": "0.36",
    "thresholds.dedup": "0.74",
    "thresholds.prediction": "0.45",
}


def core_keys() -> Iterator[tuple[ConfigTable, ConfigKey]]:
    """Every core key with its table, in the order the example lists them."""
    for table in TABLES:
        for key in table.keys:
            yield table, key


def dotted_names() -> set[str]:
    """Every core key as ``table.key``."""
    return {f"{table.name}.{key.name}" for table, key in core_keys()}


def example() -> str:
    """The config file example: every table, each key commented out at its default."""
    lines = [
        "# thatch config (TOML). Every key is optional: uncomment a line to change it.",
        "# Values are the defaults, or examples where thatch works the default out.",
    ]
    for table in TABLES:
        lines.append(f"\n[{table.name}]")
        lines.extend(f"# {key.name} = {_example_value(table, key)}" for key in table.keys)
    return "\n".join(lines) + "\n"


def _example_value(table: ConfigTable, key: ConfigKey) -> str:
    if key.default is None:
        return _EXAMPLE_VALUES[f"{table.name}.{key.name}"]
    return json.dumps(key.default)
