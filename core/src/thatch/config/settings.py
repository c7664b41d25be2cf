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
from typing import TYPE_CHECKING, Any

import attrs

from thatch.plugin.errors import ConfigError

if TYPE_CHECKING:
    from thatch.plugin.config import Config

#: (table, key, settings field, lowest allowed, integer only)
_FIELDS = (
    ("nudges", "budget", "budget", 200, True),
    ("nudges", "repeat_window", "repeat_window", 0, True),
    ("nudges", "min_prompt_chars", "min_prompt_chars", 0, True),
    ("hooks", "timeout_ms", "hook_timeout_ms", 50, True),
    ("hooks", "cold_start_ms", "hook_cold_start_ms", 0, True),
    ("daemon", "idle_minutes", "idle_minutes", 0, False),
)


def _values(config: Config) -> dict[str, Any]:
    """The fields of :class:`RuntimeSettings` the config file sets, each checked."""
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
    return values


@attrs.frozen
class RuntimeSettings:
    """The ``[nudges]``, ``[hooks]`` and ``[daemon]`` tables of the config file."""

    #: Characters of injected context per prompt, all nudges together.
    budget: int = 2000
    #: A memory shown in a session is not shown again within this many prompts.
    repeat_window: int = 10
    #: Prompts shorter than this get no recall nudge.
    min_prompt_chars: int = 10
    #: Hard cap of a hook command, in milliseconds.
    hook_timeout_ms: int = 300
    #: How long a hook whose answer the agent reads waits for a daemon that is
    #: starting or loading its model, in milliseconds (0: never past the cap).
    hook_cold_start_ms: int = 6000
    #: The daemon exits after this many minutes without a request (0: never).
    idle_minutes: float = 30.0

    @classmethod
    def from_config(cls, config: Config) -> RuntimeSettings:
        """The settings of ``config``'s file; ConfigError naming the key for a bad value."""
        return cls(**_values(config))
