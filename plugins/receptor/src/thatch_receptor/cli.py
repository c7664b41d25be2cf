"""``thatch receptor``: its subcommands, each in a module of its own."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thatch.plugin import CommandContext


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``receptor``'s subcommands: ``replay`` and ``status``."""
    from thatch_receptor import replay, status

    commands = parser.add_subparsers(dest="receptor_command", metavar="COMMAND", required=True)
    replay.add_arguments(
        commands.add_parser(
            "replay",
            help="feed recorded events through a fresh receptor: one line per firing",
            description="Feed recorded events through a fresh receptor and show what it read. "
            "It decides as the daemon does, with the built-in rules and your "
            "receptor-rules.json (in the config folder) over them; --rules FILE instead of "
            "yours, --default-rules without. No plugin is loaded, so no plugin's sources "
            "or rules apply.",
        )
    )
    status.add_arguments(
        commands.add_parser(
            "status",
            help="a live session's axes, firings and deliveries",
            description="Show what the daemon's receptor reads of a live session.",
        )
    )


def run(args: argparse.Namespace, context: CommandContext) -> int:
    """Run the subcommand the user named."""
    from thatch_receptor import replay, status

    if args.receptor_command == "status":
        return status.run(args, context)
    return replay.run(args, context)
