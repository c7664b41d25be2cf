"""Subcommands plugins add to ``thatch`` (``thatch_commands``), and what they run with.

Plugins are loaded for the command line only when it may need them: when
its subcommand is none of core's (``thatch receptor ...``), or when there is
none (``thatch --help`` lists plugin commands too; ``thatch --version``
does not). ``thatch search ...`` and the other core commands never load
them for parsing, and the hook commands never reach argparse at all (see
:func:`thatch.cli.console_main`).

A plugin command gets ``--home`` and ``--json`` like core's reading
commands, and a :class:`PluginCommandContext` whose output follows
``--json`` and the terminal-safety rules of :mod:`thatch.cli.output`.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch.cli import output
from thatch.plugin.errors import PluginConflictError, ThatchError

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.plugin.commands import Command
    from thatch.plugin.config import Config
    from thatch.plugins import Plugins


def command_names(parser: argparse.ArgumentParser) -> frozenset[str]:
    """The subcommands ``parser`` has now."""
    return frozenset(_subcommands(parser).choices)


def wanted(words: Sequence[str], parser: argparse.ArgumentParser) -> bool:
    """Whether parsing ``words`` may need the plugins' commands: no core command is named."""
    from thatch.plugin.launcher import subcommand

    command = subcommand(words)
    if command is None:
        # `thatch --version` is how doctor checks that a configured command starts: no plugins.
        return "--version" not in words
    return command not in command_names(parser)


def add_commands(
    parser: argparse.ArgumentParser,
    parents: Sequence[argparse.ArgumentParser],
    home: str | None,
) -> None:
    """Load the plugins ``home``'s config allows and add their commands to ``parser``.

    :param parents: the parsers each command inherits options from (``--home``, ``--json``).
    :raises PluginConflictError: a plugin command has the name of a core command
        (or two plugins offer one name), naming the plugin and the command.
    """
    from thatch.plugin.config import Config
    from thatch.plugins import Plugins

    config = Config.load(home)
    try:
        plugins = Plugins.load(config)
        commands = plugins.commands()
        _refuse_core_names(plugins, commands, command_names(parser))
        subcommands = _subcommands(parser)
        for name, command in commands.items():
            sub = subcommands.add_parser(
                name, help=command.help, description=command.help, parents=list(parents)
            )
            if command.arguments is not None:
                command.arguments(sub)
            sub.set_defaults(run=functools.partial(run_command, command, config, plugins))
    except ThatchError:
        raise
    except Exception as exc:
        # A plugin that fails to import, or adds an argument twice: one line, not a traceback.
        raise ThatchError(
            f"the plugins' commands could not be loaded ({type(exc).__name__}: {exc}); "
            "fix or remove the plugin (THATCH_PLUGIN_MODULES, [plugins] blocked in the "
            "config file); 'thatch plugins' lists them"
        ) from exc


def _refuse_core_names(
    plugins: Plugins, commands: Mapping[str, Command], core: frozenset[str]
) -> None:
    from thatch.config.plugin_tables import provider

    for name in commands:
        if name in core:
            owner = provider(plugins, "thatch_commands", name)
            raise PluginConflictError(
                f"plugin '{owner}' adds the command 'thatch {name}', which thatch has already; "
                f"upgrade or uninstall the plugin, or add '{owner}' to [plugins] blocked "
                "in the config file"
            )


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any]:
    # argparse keeps its subcommands nowhere public.
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    raise LookupError("the thatch parser has no subcommands")


def run_command(
    command: Command, config: Config, plugins: Plugins, args: argparse.Namespace
) -> int:
    """Run a plugin command with its context; the plugin's tables are checked first."""
    from thatch.config.plugin_tables import with_plugin_tables

    context = PluginCommandContext(
        with_plugin_tables(config, plugins), plugins, json=bool(getattr(args, "json", False))
    )
    return command.run(args, context) or 0


class PluginCommandContext:
    """What a plugin command runs with (:class:`thatch.plugin.commands.CommandContext`)."""

    def __init__(self, config: Config, plugins: Plugins, *, json: bool = False) -> None:
        self.config = config
        self.plugins = plugins
        #: Whether the user asked for ``--json``.
        self.json = json

    def open(self) -> Thatch:
        """The Python API for the current folder's project, on the plugins already loaded."""
        from thatch.api import Thatch

        return Thatch(self.config, self.plugins, Path.cwd())

    def emit(self, data: Any, text: str) -> None:
        """``data`` as JSON under ``--json``, else ``text``; control characters made visible."""
        if self.json:
            output.print_json(data)
        else:
            output.say(text)

    def note(self, message: str) -> None:
        """A message for the person at the terminal, on stderr (stdout stays data)."""
        output.note(message)
