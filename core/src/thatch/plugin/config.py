"""thatch's settings: the TOML config file, then environment overrides.

Precedence, highest first: environment variables (``THATCH_DB_PATH``,
``THATCH_MODEL``, ``THATCH_MODEL_PATH``, ``THATCH_RECALL_THRESHOLD``,
``THATCH_PREDICTION_THRESHOLD``), the config file
(``<config dir>/config.toml``), built-in defaults. Plugins read their own
tables from :attr:`Config.sections`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from thatch.paths import Paths
from thatch.plugin.errors import ConfigError

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_BACKEND = "sqlite"

EXAMPLE = """\
# thatch config (TOML). Every key is optional.
[plugins]
blocked = []            # plugin names never loaded, e.g. ["receptor"]

[storage]
backend = "sqlite"
# db_path = "/path/to/thatch.db"

[embedder]
model = "sentence-transformers/all-MiniLM-L6-v2"
# model_path = "/path/to/a/local/model/folder"

[thresholds]
# recall = 0.36          # override the calibrated cosine thresholds (also THATCH_RECALL_THRESHOLD)
# dedup = 0.74
# prediction = 0.45      # decision-model firing (also THATCH_PREDICTION_THRESHOLD)
"""


@attrs.frozen
class Config:
    """Everything a plugin or the engine needs to know about this installation."""

    paths: Paths
    db_path: Path
    storage_backend: str = DEFAULT_BACKEND
    model: str = DEFAULT_MODEL
    model_path: Path | None = None
    blocked_plugins: tuple[str, ...] = ()
    recall_threshold: float | None = None
    dedup_threshold: float | None = None
    prediction_threshold: float | None = None
    #: The whole parsed config file, for plugins' own tables.
    sections: Mapping[str, Any] = attrs.field(factory=dict)

    def backend_for(self, part: str) -> str:
        """The backend that keeps ``part``: ``memories``, ``decisions`` or ``predictions``."""
        return self.storage_backend

    @classmethod
    def load(
        cls,
        home: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Config:
        """Read the config file under ``home`` (or the user's) and apply the environment."""
        env = os.environ if environ is None else environ
        paths = Paths.resolve(home, env)
        data = _read_toml(paths.config_file)
        plugins = _table(data, "plugins", paths.config_file)
        storage = _table(data, "storage", paths.config_file)
        embedder = _table(data, "embedder", paths.config_file)
        thresholds = _table(data, "thresholds", paths.config_file)

        db_path = env.get("THATCH_DB_PATH") or storage.get("db_path")
        model_path = env.get("THATCH_MODEL_PATH") or embedder.get("model_path")
        return cls(
            paths=paths,
            db_path=Path(db_path).expanduser() if db_path else paths.default_db_path,
            storage_backend=str(storage.get("backend", DEFAULT_BACKEND)),
            model=env.get("THATCH_MODEL") or str(embedder.get("model", DEFAULT_MODEL)),
            model_path=Path(model_path).expanduser() if model_path else None,
            blocked_plugins=tuple(_string_list(plugins, "blocked", paths.config_file)),
            recall_threshold=_threshold(env, "recall", thresholds, paths.config_file),
            dedup_threshold=_unit_float(thresholds, "dedup", paths.config_file),
            prediction_threshold=_threshold(env, "prediction", thresholds, paths.config_file),
            sections=data,
        )


#: The ``[thresholds]`` keys an environment variable overrides, and an example value.
THRESHOLD_VARIABLES = {
    "recall": ("THATCH_RECALL_THRESHOLD", "0.36"),
    "prediction": ("THATCH_PREDICTION_THRESHOLD", "0.45"),
}


def _threshold(
    env: Mapping[str, str], key: str, thresholds: Mapping[str, Any], path: Path
) -> float | None:
    """``thresholds.KEY``, unless its environment variable (which wins) is set."""
    variable, example = THRESHOLD_VARIABLES[key]
    raw = env.get(variable, "").strip()
    if not raw:
        return _unit_float(thresholds, key, path)
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not -1.0 <= value <= 1.0:
        raise ConfigError(
            f"{variable}={raw!r} is not a cosine; "
            f"set a number between -1 and 1, e.g. {example}, or unset it"
        )
    return value


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not valid TOML ({exc}); fix or delete it"
        ) from exc


def _table(data: Mapping[str, Any], key: str, path: Path) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"config file {path}: [{key}] must be a table, like:\n{EXAMPLE}")
    return value


def _string_list(table: Mapping[str, Any], key: str, path: Path) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f'config file {path}: {key} must be a list of names, e.g. {key} = ["x"]')
    return value


def _unit_float(table: Mapping[str, Any], key: str, path: Path) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1.0 <= value <= 1.0:
        raise ConfigError(
            f"config file {path}: thresholds.{key} = {value!r} is not a cosine; "
            "use a number between -1 and 1, e.g. 0.35"
        )
    return float(value)
