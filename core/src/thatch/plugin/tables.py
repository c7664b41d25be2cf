"""Config tables that plugins declare: ``[receptor]``, ``[storage.sqlite]``...

A plugin returns :class:`ConfigTable` objects from ``thatch_config_tables``.
Core validates the user's config file against them when it loads (an
unknown key or a value of the wrong type is a :class:`ConfigError` naming
the file, the key and the fix), fills in defaults, and hands the table to
the plugin as ``config.table(NAME)``. ``thatch doctor`` lists every declared
table and ``docs/configuration.md`` documents each key (a test keeps it so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

#: The TOML value types a key may take.
KeyType = type[bool] | type[int] | type[float] | type[str] | type[list]


@attrs.frozen
class ConfigKey:
    """One key of a plugin's table."""

    name: str
    type: KeyType
    default: Any
    #: One line for ``thatch doctor`` and the docs.
    help: str
    #: Further check of a well-typed value; returns what is wrong ("" or None: fine).
    check: Callable[[Any], str | None] | None = attrs.field(default=None, eq=False)


@attrs.frozen
class ConfigTable:
    """A table of the config file that belongs to one plugin."""

    #: The table's dotted name (``receptor``, ``storage.sqlite``).
    name: str
    #: The keys; no others are allowed.
    keys: tuple[ConfigKey, ...]
    #: One line on what the table configures.
    help: str = ""
