"""The runtime's settings: ``[nudges]``, ``[hooks]`` and ``[daemon]`` in the config file.

::

    [nudges]
    budget = 2000          # characters injected per prompt, all nudges together
    repeat_window = 10     # a memory shown in a session waits this many prompts
    min_prompt_chars = 10  # shorter prompts get no recall nudge

    [hooks]
    timeout_ms = 300       # hard cap of a hook command (also THATCH_HOOK_TIMEOUT_MS)
    cold_start_ms = 6000   # how long a session start or prompt waits for a daemon that
                           # is starting or warming up (also THATCH_HOOK_COLD_START_MS)

    [daemon]
    idle_minutes = 30      # exit after this long without a request; 0 = never
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from thatch.plugin.errors import ConfigError

if TYPE_CHECKING:
    from thatch.plugin.config import Config

T = TypeVar("T")

#: (table, key, settings field, lowest allowed, integer only)
_FIELDS = (
    ("nudges", "budget", "budget", 200, True),
    ("nudges", "repeat_window", "repeat_window", 0, True),
    ("nudges", "min_prompt_chars", "min_prompt_chars", 0, True),
    ("hooks", "timeout_ms", "hook_timeout_ms", 50, True),
    ("hooks", "cold_start_ms", "hook_cold_start_ms", 0, True),
    ("daemon", "idle_minutes", "idle_minutes", 0, False),
)


def runtime_settings(config: Config, cls: type[T]) -> T:
    """Build ``cls`` (:class:`thatch.runtime.RuntimeSettings`) from the config file."""
    path = config.paths.config_file
    values: dict[str, Any] = {}
    for table_name, key, field, lowest, integer in _FIELDS:
        table = config.sections.get(table_name, {})
        if not isinstance(table, Mapping):
            raise ConfigError(f"config file {path}: [{table_name}] must be a table")
        if key not in table:
            continue
        value = table[key]
        kind = int if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kind) or value < lowest:
            wanted = "a whole number" if integer else "a number"
            raise ConfigError(
                f"config file {path}: {table_name}.{key} = {value!r}; "
                f"use {wanted} of at least {lowest}"
            )
        values[field] = value
    return cls(**values)
