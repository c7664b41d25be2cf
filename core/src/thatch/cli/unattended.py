"""A command line no one typed: what a harness runs gets exit 0, never argparse's 2.

A subcommand thatch does not have (``thatch echo``) is what a hook left by
an older setup runs, and an option it does not know (``--new-option``) what
a newer setup writes; a harness takes exit 2 from a hook as "block this
prompt". So when stdin is not a terminal (a harness pipes the hook's payload
there) such a command line ends with status 0, one note on stderr and one
log line, and a hook command's event is spooled when the line still names
it. At a terminal, and for a bad use of a command that is no hook, argparse's
usage error and exit 2 stay.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from thatch.hookcmd.args import HookArgs


def attended() -> bool:
    """Whether a person may be typing: stdin is a terminal."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # stdin closed
        return False


def unknown_command(words: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """The first positional word of ``words`` when it names no command of ``parser``, else None."""
    from thatch.cli.plugin_cli import command_names
    from thatch.plugin.launcher import subcommand

    command = subcommand(words)
    if command is None:
        return None
    return None if command in command_names(parser) else command


def ignore_stray_hook(words: Sequence[str], why: str = "") -> int:
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
    home = home_of(words)
    logfile.append(rundir.locate(os.environ, home=home).log_path, "hook", message)
    return 0


def hook_command(words: Sequence[str]) -> str | None:
    """The hook command ``words`` run (``hook``, ``reminder``, ...), or None."""
    from thatch.hookcmd import HOOK_COMMANDS
    from thatch.plugin.launcher import subcommand

    command = subcommand(words)
    return command if command in HOOK_COMMANDS else None


def parse_hook_line(
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
        logfile.append(rundir.locate(os.environ, home=home_of(words)).log_path, "hook", note)
        return
    note = f"{head}; the event was spooled for the daemon, not answered"
    print(f"thatch: {note}", file=sys.stderr)
    from thatch.hookcmd.command import run_hook

    run_hook(args, spool_only=note)


def _lenient_hook_args(words: Sequence[str]) -> HookArgs | None:
    """The hook command, harness and event ``words`` name, unknown options aside; None if
    a positional argument is missing."""
    from thatch.hookcmd import HOOK_COMMANDS, HookArgs
    from thatch.plugin.launcher import positional_words

    positionals = positional_words(words)
    if not positionals or positionals[0] not in HOOK_COMMANDS:
        return None
    command, rest = positionals[0], positionals[1:]
    wanted = HOOK_COMMANDS[command]
    if len(rest) < wanted:
        return None
    harness, event = (rest[0], rest[1]) if wanted else (None, None)
    return HookArgs(command, harness, event, home_of(words), json="--json" in words)


def home_of(words: Sequence[str]) -> str | None:
    for index, word in enumerate(words):
        if word == "--home" and index + 1 < len(words):
            return words[index + 1]
        if word.startswith("--home="):
            return word.partition("=")[2]
    return None
