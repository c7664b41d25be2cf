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
        except (OSError, ValueError):
            pass  # a closed or broken pipe: the harness has gone, nothing to keep
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.shutdown()
    os._exit(status)


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
