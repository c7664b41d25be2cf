"""The ``thatch`` command.

``main`` parses arguments and runs one command. Errors a user can meet
(:class:`thatch.plugin.errors.ThatchError`) print one clear line on stderr and exit
non-zero; they never show a traceback.

A subcommand thatch does not have (``thatch echo``) is what a hook left by
an older setup runs, and a harness takes exit 2 from a hook as "block this
prompt". So when stdin is not a terminal (a harness pipes the hook's payload
there) such a command ends with status 0, one note on stderr and one log
line. At a terminal, and for a bad use of a real command, argparse's usage
error and exit 2 stay.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

    from thatch.hookcmd.args import HookArgs
    from thatch.plugin.errors import ThatchError


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used as the console script).

    Plugins are loaded for parsing only when the command line names no core
    command (see :mod:`thatch.cli.plugin_cli`), or to run ``thatch setup``.
    """
    from thatch.cli import plugin_cli
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
            plugin_cli.add_commands(parser, plugin_command_parents(), _home_of(words))
        except ThatchError as exc:
            # Run by a harness, an unknown command stays a stray hook: it fails open.
            if _attended() or _unknown_command(words, parser) is None:
                return _report(exc)
            return _ignore_stray_hook(words, f"the plugins could not be loaded: {exc}")
    if not _attended() and _unknown_command(words, parser) is not None:
        return _ignore_stray_hook(words)
    if not _attended() and _hook_command(words) is not None:
        hook_args = _parse_hook_line(words, parser)
        if hook_args is None:
            return 0
        return _run(lambda: int(hook_args.run(hook_args) or 0))
    args = parse_arguments(words, parser)
    return _run(lambda: int(args.run(args) or 0))


def _attended() -> bool:
    """Whether a person may be typing: stdin is a terminal."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # stdin closed
        return False


def _unknown_command(words: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """The first positional word of ``words`` when it names no command of ``parser``, else None."""
    from thatch.cli.plugin_cli import command_names
    from thatch.plugin.launcher import subcommand

    command = subcommand(words)
    if command is None:
        return None
    return None if command in command_names(parser) else command


def _ignore_stray_hook(words: Sequence[str], why: str = "") -> int:
    """Answer a command thatch does not have, run with no one at a terminal: note it, exit 0."""
    import os
    import shlex

    from thatch import logfile, rundir

    command = shlex.join(["thatch", *words])
    message = (
        f"ignored `{command}`: this thatch has no such command (a hook left by an older "
        "setup?); run thatch setup to replace it, or thatch doctor to see where it is"
    )
    if why:
        message += f" ({why})"
    print(f"thatch: {message}", file=sys.stderr)
    home = _home_of(words)
    logfile.append(rundir.locate(os.environ, home=home).log_path, "hook", message)
    return 0


def _hook_command(words: Sequence[str]) -> str | None:
    """The hook command ``words`` run (``hook``, ``reminder``, ...), or None."""
    from thatch.hookcmd import HOOK_COMMANDS
    from thatch.plugin.launcher import subcommand

    command = subcommand(words)
    return command if command in HOOK_COMMANDS else None


def _parse_hook_line(
    words: Sequence[str], parser: argparse.ArgumentParser
) -> argparse.Namespace | None:
    """``words`` parsed, or None once an argument error was answered as a hook must be.

    The hook fast path left these words to argparse (an option it does not
    know, a missing or extra argument: a hook written by a newer setup, run
    by an older thatch). A harness takes exit 2 as "block this prompt", so
    argparse's usage error becomes one note on stderr and exit 0, and the
    event is spooled as the words name it (see :func:`_keep_hook_event`).
    """
    import io

    from thatch.cli.parser import parse_arguments

    saved, sys.stderr = sys.stderr, io.StringIO()
    try:
        return parse_arguments(words, parser)
    except SystemExit as exc:
        said = sys.stderr.getvalue()
        sys.stderr = saved
        if exc.code in (0, None):
            sys.stderr.write(said)
            raise
        lines = [line for line in said.splitlines() if line.strip()]
        error = lines[-1].partition("error: ")[2] if lines else f"exit status {exc.code}"
        _keep_hook_event(words, error or lines[-1])
        return None
    finally:
        sys.stderr = saved


def _keep_hook_event(words: Sequence[str], error: str) -> None:
    """Answer a hook command argparse refused: one note on stderr and the log, exit 0.

    When the words still name the event (the command, and for ``hook`` its
    harness and event, the first words that are not options), its payload
    is read and spooled, not sent: the daemon records it when it replays
    the spool (tool calls queued, the prompt counted), but nothing is
    printed, since what the words that could not be parsed asked for is not
    known. Otherwise (``thatch hook`` alone) there is no event to record
    and stdin is not read; the note says so.
    """
    import os
    import shlex

    from thatch import logfile, rundir

    line = shlex.join(["thatch", *words])
    args = _lenient_hook_args(words)
    head = (
        f"ignored the arguments of `{line}` ({error}): a hook written by a newer setup? "
        "run thatch setup to rewrite it"
    )
    if args is None:
        note = f"{head}; the payload was not read (the command does not name its harness and event)"
        print(f"thatch: {note}", file=sys.stderr)
        logfile.append(rundir.locate(os.environ, home=_home_of(words)).log_path, "hook", note)
        return
    note = f"{head}; the event was spooled for the daemon, not answered"
    print(f"thatch: {note}", file=sys.stderr)
    from thatch.hookcmd.command import run_hook

    run_hook(args, spool_only=note)


def _lenient_hook_args(words: Sequence[str]) -> HookArgs | None:
    """The hook command, harness and event ``words`` name, unknown options aside; None if
    a positional argument is missing."""
    from thatch.hookcmd import HOOK_COMMANDS, HookArgs

    positionals: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--home":
            skip = True
        elif not word.startswith("-") or word == "-":
            positionals.append(word)
    if not positionals or positionals[0] not in HOOK_COMMANDS:
        return None
    command, rest = positionals[0], positionals[1:]
    wanted = HOOK_COMMANDS[command]
    if len(rest) < wanted:
        return None
    harness, event = (rest[0], rest[1]) if wanted else (None, None)
    return HookArgs(command, harness, event, _home_of(words), json="--json" in words)


def _home_of(words: Sequence[str]) -> str | None:
    for index, word in enumerate(words):
        if word == "--home" and index + 1 < len(words):
            return words[index + 1]
        if word.startswith("--home="):
            return word.partition("=")[2]
    return None


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
