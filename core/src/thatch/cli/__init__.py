"""The ``thatch`` command.

``main`` parses arguments and runs one command. Errors a user can meet
(:class:`thatch.errors.ThatchError`) print one clear line on stderr and exit
non-zero; they never show a traceback.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used as the console script)."""
    from thatch.cli.parser import build_parser
    from thatch.errors import ThatchError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = int(args.run(args) or 0)
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


def console_main() -> None:
    """Entry point of the console script.

    Hook commands are answered before argparse or any heavy module loads:
    they run on every prompt and tool call and must stay on the standard
    library (see :mod:`thatch.hookcmd`).
    """
    from thatch.hookcmd import main as hook_main

    status = hook_main(sys.argv[1:])
    sys.exit(main() if status is None else status)
