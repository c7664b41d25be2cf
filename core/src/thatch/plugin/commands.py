"""CLI subcommands a plugin adds to ``thatch`` (``thatch receptor ...``).

A plugin returns :class:`Command` objects from ``thatch_commands``. Core adds
each as a subcommand of ``thatch``, after its own, with ``--home`` and
``--json``; a name that clashes with a core command or another plugin's is
refused when the CLI is built, naming the plugin and the command. Plugins
are loaded for this only when the command line names no core command. The
command's output goes through :class:`CommandContext`, so it follows
``--json`` and the terminal-safety rules of core's own commands.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.plugin.config import Config


@runtime_checkable
class CommandContext(Protocol):
    """What a plugin command runs with."""

    #: The loaded settings (``config.table(NAME)`` for the plugin's own table).
    config: Config
    #: Whether the user asked for ``--json`` (every plugin command takes it).
    json: bool

    def open(self) -> Thatch:
        """The Python API for the current project (opens storage; close it when done)."""

    def emit(self, data: Any, text: str) -> None:
        """Print ``data`` as JSON under ``--json``, else ``text`` (made terminal-safe)."""

    def note(self, message: str) -> None:
        """Tell the person at the terminal ``message`` on stderr (made terminal-safe)."""


#: Runs the command with its parsed arguments; returns the exit code (None: 0).
#: Raise :class:`thatch.plugin.errors.ThatchError` for anything the user can fix.
CommandRunner = Callable[[argparse.Namespace, CommandContext], "int | None"]


@attrs.frozen
class Command:
    """One ``thatch NAME ...`` subcommand."""

    name: str
    #: One line for ``thatch --help``.
    help: str
    run: CommandRunner
    #: Adds the command's arguments (and its own subcommands) to its parser.
    #: The ``run`` default of the namespace is core's: do not set it.
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
