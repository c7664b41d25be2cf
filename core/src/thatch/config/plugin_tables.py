"""The config tables plugins declare, read with the plugins; and which plugin offers a part.

A config file is checked against the tables only once the plugins are
loaded (the plugins to load are in the file): :func:`load` does both, and
:func:`with_plugin_tables` checks a config already loaded. A table of the
file that no loaded plugin declares and core does not read is not an error
(its plugin may have been uninstalled, or blocked): ``thatch doctor`` warns
about it, through :func:`doctor_checks`, as it does about a key of one of
core's own tables that nothing reads (most often a typo, which would
otherwise leave the setting at its default without a word).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from thatch.plugin.config import CORE_TABLES, Config
from thatch.plugin.errors import PluginConflictError, ThatchError
from thatch.plugins import Plugins

if TYPE_CHECKING:
    from thatch.plugin.tables import ConfigTable


def load(
    home: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> tuple[Config, Plugins]:
    """The config and the plugins it allows, the plugins' tables read from the file."""
    config = Config.load(home, environ)
    plugins = Plugins.load(config, environ)
    return with_plugin_tables(config, plugins), plugins


def with_plugin_tables(config: Config, plugins: Plugins) -> Config:
    """``config`` with every table the plugins declare checked and filled in.

    Raises :class:`ConfigError` for a bad value in the file, and
    :class:`PluginConflictError` for a plugin that declares one of core's
    own tables (or two that declare one table).
    """
    declared = plugins.config_tables()
    for name in declared:
        if name in CORE_TABLES:
            owner = provider(plugins, "thatch_config_tables", name)
            raise PluginConflictError(
                f"plugin '{owner}' declares the config table [{name}], which is thatch's own; "
                f"the plugin must name its table otherwise (e.g. [{name}.{owner}]), "
                "or add it to [plugins] blocked in the config file"
            )
    return config.with_tables(declared.values())


def provider(plugins: Plugins, hook: str, name: str) -> str:
    """The first plugin whose ``hook`` offers the part called ``name`` ("?" when none does)."""
    return next(iter(plugins.providers(hook, name)), "?")


#: How a check went, as ``thatch doctor`` shows it.
Status = Literal["ok", "warn", "fail"]


class TableCheck(NamedTuple):
    """One line of ``thatch doctor`` about config tables, in the order of its ``Check``."""

    name: str
    status: Status
    detail: str
    fix: str = ""


def doctor_checks(home: str | None = None) -> list[TableCheck]:
    """Doctor's lines: each declared table (or why they cannot be read), then stray tables."""
    try:
        config = Config.load(home)
        plugins = Plugins.load(config)
        checked = with_plugin_tables(config, plugins)
    except ThatchError as exc:
        return [TableCheck("config tables", "fail", str(exc), "fix the config file as it says")]
    declared = plugins.config_tables()
    checks = [
        TableCheck(
            f"config table [{name}]",
            "ok",
            f"from plugin {provider(plugins, 'thatch_config_tables', name)}: "
            + _describe(table, checked.table(name)),
        )
        for name, table in declared.items()
    ]
    checks.extend(
        TableCheck(
            f"config table [{name}]",
            "warn",
            f"{config.paths.config_file} has a [{name}] table that no loaded plugin declares",
            "install or unblock the plugin it is for, or remove the table",
        )
        for name in undeclared_tables(config.sections, declared)
    )
    for dotted, close in unread_core_keys(config.sections):
        table, _, key = dotted.partition(".")
        hint = f"; did you mean {close}?" if close else ""
        checks.append(
            TableCheck(
                f"config key {dotted}",
                "warn",
                f"{config.paths.config_file} sets {key} in [{table}], which thatch does not "
                f"read, so it changes nothing{hint}",
                f"rename it to {close.partition('.')[2]}" if close else "remove it",
            )
        )
    return checks


#: Keys of core's tables read outside core's schema: by a plugin (thatch-sqlite's
#: memory map, which the daemon also turns off unless it is set).
READ_ELSEWHERE = frozenset({"storage.mmap_mb"})


def unread_core_keys(sections: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """Each key of core's tables in the file that nothing reads, with the nearest known key.

    Sub-tables (``[storage.postgres]``) are left to the plugins that declare them.
    """
    # Imported here: the schema is read only when doctor asks.
    from thatch.config.schema import core_keys

    known = {f"{table.name}.{key.name}" for table, key in core_keys()} | READ_ELSEWHERE
    unread = []
    for name in sorted(CORE_TABLES):
        table = sections.get(name)
        if not isinstance(table, Mapping):
            continue
        for key, value in table.items():
            dotted = f"{name}.{key}"
            if isinstance(value, Mapping) or dotted in known:
                continue
            siblings = sorted(k for k in known if k.startswith(f"{name}."))
            close = difflib.get_close_matches(dotted, siblings, n=1, cutoff=0.8)
            unread.append((dotted, close[0] if close else None))
    return unread


def undeclared_tables(
    sections: Mapping[str, Any], declared: Mapping[str, ConfigTable]
) -> list[str]:
    """The file's top-level tables that neither core reads nor a loaded plugin declares.

    A table holding only declared sub-tables (``[storage.postgres]``) counts as declared.
    """
    owned = {name.partition(".")[0] for name in declared} | CORE_TABLES
    return sorted(
        name for name, value in sections.items() if isinstance(value, Mapping) and name not in owned
    )


def _describe(table: ConfigTable, values: Mapping[str, Any]) -> str:
    """``what it is for: key = value, ...`` as doctor lists it."""
    shown = ", ".join(f"{key} = {values[key]!r}" for key in values)
    return f"{table.help + ': ' if table.help else ''}{shown or 'no keys'}"
