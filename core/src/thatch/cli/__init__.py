"""The ``thatch`` command.

``main`` parses arguments and runs one command. Errors a user can meet
(:class:`thatch.errors.ThatchError`) print one clear line on stderr and exit
non-zero; they never show a traceback.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used as the console script)."""
    from thatch.cli.parser import parse_arguments

    args = parse_arguments(argv)
    return _run(lambda: int(args.run(args) or 0))


def console_main() -> None:
    """Entry point of the console script.

    Hook commands are answered before argparse or any heavy module loads:
    they run on every prompt and tool call and must stay on the standard
    library (see :mod:`thatch.hookcmd`). So is ``thatch mcp``, a relay to
    the MCP server in the daemon (see :mod:`thatch.mcp_relay`): a harness
    waits for it to answer before its first turn.
    """
    from thatch.hookcmd import main as hook_main
    from thatch.private import tighten_umask

    # Before anything is created: the libraries' files too (the model cache) stay ours.
    tighten_umask()

    argv = sys.argv[1:]
    status = hook_main(argv)
    if status is None:
        status = _mcp_main(argv)
    sys.exit(main() if status is None else status)


def _mcp_main(argv: list[str]) -> int | None:
    """Serve ``thatch mcp`` if that is what ``argv`` asks for; None otherwise."""
    from thatch import mcp_relay

    args = mcp_relay.parse_args(argv)
    if args is None:
        return None
    return _run(lambda: mcp_relay.main(args))


def _run(command: Callable[[], int]) -> int:
    """Run one command: a user's error is one line on stderr and a non-zero status."""
    from thatch.errors import ThatchError

    try:
        status = command()
    except ThatchError as exc:
        print(f"thatch: {exc}", file=sys.stderr)
        status = exc.exit_code
    except KeyboardInterrupt:
        print("thatch: interrupted", file=sys.stderr)
        status = 130
    except BrokenPipeError:
        # `thatch export | head` closed the pipe: not an error for the user.
        sys.stderr.close()
        status = 0
    return status
