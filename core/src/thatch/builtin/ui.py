"""Built-in ``ui``: ``thatch ui``, a local web page over memories and the decision model.

The web libraries load only when the command runs, so no other command or
hook pays for importing them.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from thatch.plugin.specs import hookimpl

if TYPE_CHECKING:
    from thatch.plugin.commands import Command, CommandContext


@hookimpl
def thatch_commands() -> tuple[Command, ...]:
    """``thatch ui [--port N] [--no-open]``."""
    from thatch.plugin.commands import Command

    return (
        Command(
            name="ui",
            help="a local web page to see and tend memories and the decision model",
            run=run,
            arguments=add_arguments,
        ),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=int, default=0, help="the port on 127.0.0.1 (default: any free one)"
    )
    parser.add_argument(
        "--no-open", action="store_true", help="print the URL only; do not open a browser"
    )


def run(args: argparse.Namespace, context: CommandContext) -> int:
    """Serve the page until Ctrl-C."""
    import webbrowser

    from thatch.plugin.errors import InvalidInputError
    from thatch.ui.server import UiServer

    if not 0 <= args.port <= 65535:
        raise InvalidInputError(f"--port {args.port} is not a port; give 1-65535, or 0 for any")
    th = context.open()
    try:
        try:
            server = UiServer(th, args.port)
        except OSError as exc:
            raise InvalidInputError(f"cannot listen on 127.0.0.1:{args.port}: {exc}") from None
        context.emit(
            {"url": server.url},
            f"thatch ui at {server.url}\n(the URL holds this run's access token; Ctrl-C stops)",
        )
        # Before serving: a caller reading a pipe (a script, a test) needs the URL now.
        sys.stdout.flush()
        if not args.no_open:
            webbrowser.open(server.url)
        server.run()
    finally:
        th.close()
    return 0
