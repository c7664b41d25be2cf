"""Config tables that plugins declare: ``[receptor]``, ``[storage.postgres]``...

A plugin returns :class:`ConfigTable` objects from ``thatch_config_tables``.
Core validates the user's config file against them when it loads with the
plugins (an unknown key, a value of the wrong type or one the key's check
refuses is a :class:`ConfigError` naming the file, the table, the key and
the fix), fills in defaults, and hands the table to the plugin as
``config.table(NAME)``. ``thatch doctor`` lists every declared table, and a
test keeps each key documented in the plugin's README or ``docs/``.

A table may be a sub-table of one of core's (``storage.postgres``) but not
one of core's own (:data:`thatch.plugin.config.CORE_TABLES`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from thatch.plugin.errors import ConfigError

#: The TOML value types a key may take.
KeyType = type[bool] | type[int] | type[float] | type[str] | type[list[Any]] | type[dict[str, Any]]
#: How each type is named in error messages.
_TYPE_NAMES: dict[type, str] = {
    bool: "true or false",
    int: "a whole number",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "a table",
}


def _fits(value: object, kind: type) -> bool:
    """Whether ``value`` is of ``kind`` as TOML has it: a bool is no number, an int is a float."""
    if kind is bool or isinstance(value, bool):
        return kind is bool and isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def _default_fits(key: ConfigKey, attribute: attrs.Attribute[Any], default: object) -> None:
    if default is not None and not _fits(default, key.type):
        raise TypeError(
            f"config key {key.name!r}: the default {default!r} is not {_TYPE_NAMES[key.type]}"
        )


@attrs.frozen
class ConfigKey:
    """One key of a plugin's table."""

    name: str
    type: KeyType = attrs.field(validator=attrs.validators.in_(tuple(_TYPE_NAMES)))
    #: Used when the file leaves the key out; None: the key has no value then.
    default: Any = attrs.field(validator=_default_fits)
    #: One line for ``thatch doctor`` and the docs.
    help: str
    #: Further check of a well-typed value; returns what is wrong ("" or None: fine).
    check: Callable[[Any], str | None] | None = attrs.field(default=None, eq=False)
    #: How a string value is shown in error messages, for a key whose value may hold a
    #: secret (a password in a connection string): the value without it. None: as written.
    shown: Callable[[str], str] | None = attrs.field(default=None, eq=False)

    def read(self, value: object, where: str) -> Any:
        """``value`` checked (``where`` is ``config file PATH: TABLE.KEY``); floats as floats."""
        if not _fits(value, self.type):
            raise ConfigError(
                f"{where} = {self._show(value)} is not {_TYPE_NAMES[self.type]}; {self._fix()}"
            )
        problem = self.check(value) if self.check is not None else None
        if problem:
            raise ConfigError(f"{where} = {self._show(value)}: {problem}; {self._fix()}")
        return float(value) if self.type is float else value  # type: ignore[arg-type]

    def _show(self, value: object) -> str:
        if self.shown is None:
            return repr(value)
        # A value of another type is not shown at all: it could hold the secret too.
        return repr(self.shown(value)) if isinstance(value, str) else f"a {type(value).__name__}"

    def _fix(self) -> str:
        if self.default is None:
            return f"set {_TYPE_NAMES[self.type]} ({self.help})"
        return (
            f"set {_TYPE_NAMES[self.type]}, e.g. {self.name} = {_toml(self.default)}, or remove it"
        )


def _key_tuple(keys: Iterable[ConfigKey]) -> tuple[ConfigKey, ...]:
    """The keys as the table keeps them (a typed converter: ``tuple`` alone loses the item type)."""
    return tuple(keys)


def _unique_keys(
    table: ConfigTable, attribute: attrs.Attribute[Any], keys: tuple[ConfigKey, ...]
) -> None:
    names = [key.name for key in keys]
    doubled = sorted({name for name in names if names.count(name) > 1})
    if doubled:
        raise ValueError(f"config table [{table.name}] declares {', '.join(doubled)} twice")


@attrs.frozen
class ConfigTable:
    """A table of the config file that belongs to one plugin."""

    #: The table's dotted name (``receptor``, ``storage.postgres``).
    name: str
    #: The keys; no others are allowed.
    keys: tuple[ConfigKey, ...] = attrs.field(converter=_key_tuple, validator=_unique_keys)
    #: One line on what the table configures.
    help: str = ""

    def defaults(self) -> dict[str, Any]:
        """The table as a file that leaves it out gives it."""
        return {key.name: key.default for key in self.keys}

    def read(self, sections: Mapping[str, Any], source: Path) -> dict[str, Any]:
        """This table of the parsed config file ``sections``, checked, with defaults filled in.

        :param sections: the whole parsed file (:attr:`thatch.plugin.config.Config.sections`).
        :param source: the file, named in errors.
        """
        raw = self.find(sections, source)
        by_name = {key.name: key for key in self.keys}
        unknown = sorted(set(raw) - set(by_name))
        if unknown:
            known = ", ".join(by_name) or "none"
            raise ConfigError(
                f"config file {source}: [{self.name}] has no key {unknown[0]!r} "
                f"(its keys: {known}); remove it or correct its name"
            )
        values = self.defaults()
        for name, value in raw.items():
            values[name] = by_name[name].read(value, f"config file {source}: {self.name}.{name}")
        return values

    def find(self, sections: Mapping[str, Any], source: Path) -> Mapping[str, Any]:
        """The raw table at this dotted name ({} when the file has none)."""
        found: Mapping[str, Any] = sections
        for depth, part in enumerate(self.name.split(".")):
            value = found.get(part, {})
            if not isinstance(value, Mapping):
                dotted = ".".join(self.name.split(".")[: depth + 1])
                raise ConfigError(
                    f"config file {source}: {dotted} must be a table; "
                    f"write it as [{dotted}] with keys under it"
                )
            found = value
        return found


def _toml(value: object) -> str:
    """A default as it would be written in the config file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return repr(value)
