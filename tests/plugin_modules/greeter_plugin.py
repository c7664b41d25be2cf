"""A plugin that is not installed, for the command and config-table tests.

Registered with ``THATCH_PLUGIN_MODULES=greeter_plugin`` and this folder on
the path. It adds ``thatch greet`` and declares the ``[greeter]`` table.
``GREETER_IMPORTED`` names a file it touches when imported, so a test sees
whether a command loaded the plugins.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from pathlib import Path

from thatch.plugin import Command, CommandContext, ConfigKey, ConfigTable, hookimpl

if os.environ.get("GREETER_IMPORTED"):
    Path(os.environ["GREETER_IMPORTED"]).touch()


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="who to greet")
    parser.add_argument("--shout", action="store_true", help="in capitals")


def _greet(args: argparse.Namespace, context: CommandContext) -> int:
    table = context.config.table("greeter")
    text = " ".join([f"{table['word']} {args.name}"] * table["times"])
    text = text.upper() if args.shout else text
    context.emit({"greeting": text, "name": args.name}, text)
    return 3 if args.name == "nobody" else 0


def _positive(value: int) -> str | None:
    return None if value >= 1 else "must be at least 1"


@hookimpl
def thatch_commands() -> Iterable[Command]:
    return [Command("greet", "say hello to someone", _greet, _arguments)]


@hookimpl
def thatch_config_tables() -> Iterable[ConfigTable]:
    return [
        ConfigTable(
            "greeter",
            (
                ConfigKey("word", str, "hello", "the greeting word"),
                ConfigKey("times", int, 1, "how many times to greet", check=_positive),
            ),
            help="how thatch greet greets",
        )
    ]
