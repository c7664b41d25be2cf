"""The ``thatch`` command.

``main`` parses arguments and runs one command. Errors a user can meet
(:class:`thatch.plugin.errors.ThatchError`) print one clear line on stderr and exit
non-zero; they never show a traceback.

A command line a harness runs (no one at a terminal) never gets argparse's
exit 2, which a harness takes as "block this prompt": see
:mod:`thatch.cli.unattended`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from thatch.plugin.errors import ThatchError


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used as the console script).

    Plugins are loaded for parsing only when the command line names no core
    command (see :mod:`thatch.cli.plugin_cli`), or to run ``thatch setup``.
    """
    from thatch.cli import plugin_cli, unattended
    from thatch.cli.parser import (
        build_parser,
        parse_arguments,
        plugin_command_parents,
        setup_harnesses,
    )
    from thatch.plugin.errors import ThatchError

    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(setup_harnesses(words))
    if plugin_cli.wanted(words, parser):
        try:
            plugin_cli.add_commands(parser, plugin_command_parents(), unattended.home_of(words))
        except ThatchError as exc:
            # Run by a harness, an unknown command stays a stray hook: it fails open.
            if unattended.attended() or unattended.unknown_command(words, parser) is None:
                return _report(exc)
            return unattended.ignore_stray_hook(words, f"the plugins could not be loaded: {exc}")
    if not unattended.attended() and unattended.unknown_command(words, parser) is not None:
        return unattended.ignore_stray_hook(words)
    if not unattended.attended() and unattended.hook_command(words) is not None:
        hook_args = unattended.parse_hook_line(words, parser)
        if hook_args is None:
            return 0
        return _run(lambda: int(hook_args.run(hook_args) or 0))
    args = parse_arguments(words, parser)
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

    if sys.stdin is None or sys.stdout is None or sys.stderr is None:
        # Python found one of them closed (``thatch hook ... >&-``).
        _fill_closed_streams()
    argv = sys.argv[1:]
    status = hook_main(argv)
    if status is not None:
        _end_hook(status)
    status = _mcp_main(argv)
    sys.exit(main() if status is None else status)


def _end_hook(status: int) -> None:
    """End a hook command at once, without the interpreter's clean-up.

    The hook has written its answer with ``os.write`` and closed its spool
    file; all that is left is tearing the interpreter down, which costs
    about as much as the hook's own imports while the harness waits for the
    process to end (docs/benchmarks.md, "Where the hook process's time
    goes"). Whatever sits in Python's buffers is written first.
    """
    import os

    for stream in (sys.stdout, sys.stderr):
        # Not contextlib.suppress: a hook command does not import contextlib.
        try:  # noqa: SIM105
            stream.flush()
        except (OSError, ValueError, AttributeError):
            # A closed or broken pipe: the harness has gone, nothing to keep.
            # AttributeError: a stream Python found closed at start is None.
            pass
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.shutdown()
    os._exit(status)


def _fill_closed_streams() -> None:
    """Put ``/dev/null`` on whichever of file descriptors 0, 1 and 2 is closed.

    Otherwise the next file opened (the spool file, the log) takes that
    number, and the hook's answer written to "stdout" would land in it. A
    stream Python left as None becomes one on ``/dev/null``: ``print(...,
    file=sys.stderr)`` with None would write to stdout, the agent's context.
    Only called when a stream is None, so the usual hook pays nothing.
    """
    import os

    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            null = os.open(os.devnull, os.O_RDWR)
        except OSError:
            return
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    if sys.stdin is None:
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115


def _mcp_main(argv: list[str]) -> int | None:
    """Serve ``thatch mcp`` if that is what ``argv`` asks for; None otherwise."""
    from thatch import mcp_relay as mcp_relay

    args = mcp_relay.parse_args(argv)
    if args is None:
        return None
    return _run(lambda: mcp_relay.main(args))


def _run(command: Callable[[], int]) -> int:
    """Run one command: a user's error is one line on stderr and a non-zero status."""
    from thatch.plugin.errors import ThatchError

    try:
        status = command()
    except ThatchError as exc:
        status = _report(exc)
    except KeyboardInterrupt:
        print("thatch: interrupted", file=sys.stderr)
        status = 130
    except BrokenPipeError:
        # `thatch export | head` closed the pipe: not an error for the user.
        sys.stderr.close()
        status = 0
    return status


def _report(error: ThatchError) -> int:
    """A user's error as one line on stderr; returns its exit status."""
    print(f"thatch: {error}", file=sys.stderr)
    return error.exit_code
