"""``thatch receptor status [SESSION]``: a live session's axes (being written)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thatch.plugin import CommandContext


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``thatch receptor status``'s arguments."""
    parser.add_argument("session", nargs="?", help="the session (default: the latest)")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def run(args: argparse.Namespace, context: CommandContext) -> int:
    """``thatch receptor status``."""
    context.emit({}, "no live session")
    return 0
