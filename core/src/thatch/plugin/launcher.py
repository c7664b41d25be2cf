"""How a harness runs thatch: the command setup writes into hooks and MCP entries.

A harness starts hook commands and MCP servers from the user's own
environment: the PATH of the shell (or desktop session) that started it,
never the PATH of ``uv run`` or of an activated virtualenv. So the bare
name ``thatch`` is written only when that PATH finds this very
installation; otherwise setup writes the absolute path of this
installation's console script, which runs from any PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

#: The README's daily-use install, named in the reasons and fixes.
DAILY_INSTALL = "uv tool install --compile-bytecode '.[all]' in the thatch checkout"


@attrs.frozen
class Launcher:
    """The command line that runs thatch, and why setup chose it."""

    command: tuple[str, ...]
    #: One sentence for the user: which command was written and why.
    reason: str

    @property
    def bare(self) -> bool:
        return self.command == ("thatch",)


def user_path(environ: Mapping[str, str] | None = None) -> str:
    """``PATH`` without the entries ``uv run`` or an activated virtualenv put there.

    That is the PATH a harness started from the user's shell passes on to
    the commands it runs. The running interpreter's own ``bin`` folder is
    dropped when it belongs to a virtualenv: a daily-use install puts its
    console script on PATH by a link elsewhere, never by that folder.
    """
    env = os.environ if environ is None else environ
    dropped = {_clean(Path(env["VIRTUAL_ENV"]) / "bin")} if env.get("VIRTUAL_ENV") else set()
    if sys.prefix != sys.base_prefix:
        dropped.add(_clean(Path(sys.prefix) / "bin"))
    entries = env.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(
        entry for entry in entries if entry and _clean(Path(entry)) not in dropped
    )


def this_installation() -> Path:
    """The console script of the thatch that is running now."""
    return Path(sys.executable).with_name("thatch")


def direct_command() -> tuple[str, ...]:
    """This installation's command by absolute path: it runs the same from any PATH."""
    ours = this_installation()
    # ``python -m thatch`` from a tree without a console script.
    return (str(ours),) if ours.exists() else (sys.executable, "-m", "thatch")


def choose(environ: Mapping[str, str] | None = None) -> Launcher:
    """The command harnesses should run, for the user whose environment is ``environ``."""
    ours = this_installation()
    found = shutil.which("thatch", path=user_path(environ))
    if found and ours.exists() and same_installation(Path(found), ours):
        return Launcher(("thatch",), f"`thatch` on your PATH ({found}) is this installation")
    if found:
        why = f"the `thatch` on your PATH ({found}) is another installation"
    else:
        why = "`thatch` is not on your PATH outside this environment (uv run, a virtualenv)"
    return Launcher(
        direct_command(),
        f"{why}, and harnesses run commands with your PATH; for the bare name, install "
        f"thatch for daily use ({DAILY_INSTALL}), then run setup again from it",
    )


def same_installation(found: Path, ours: Path) -> bool:
    """Whether the script ``found`` on PATH runs the same thatch as ``ours``.

    A link to our script is; so is a copy whose ``#!`` line names our
    interpreter (installers that copy rather than link scripts).
    """
    try:
        if found.resolve() == ours.resolve():
            return True
        with found.open("rb") as script:
            first = script.readline(4096)
    except OSError:
        return False
    if not first.startswith(b"#!"):
        return False
    interpreter = first[2:].strip().split(b" ")[0].decode("utf-8", "replace")
    return _clean(Path(interpreter).parent) == _clean(ours.parent)


def _clean(path: Path) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(str(path))))


def harness_which(program: str) -> str | None:
    """Where a harness started from the user's shell finds ``program`` (None: nowhere)."""
    return shutil.which(program, path=user_path())


def program_problem(program: str, which: Callable[[str], str | None] = harness_which) -> str | None:
    """Why a harness cannot start ``program``, as a phrase after "runs" (None: it can).

    :param program: a bare name (looked up with ``which``) or a path.
    :param which: finds a bare name the way the harness would; tests pass a fake.
    """
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return None
        return f"'{program}', which is not an executable file"
    if which(program) is None:
        return f"'{program}', which is not on the PATH harnesses run commands with"
    return None


def unrunnable_fix(setup_command: str) -> str:
    """The fix for a command a harness cannot start: setup again, or the daily-use install."""
    return (
        f"run `{setup_command}` again (it writes thatch's absolute path), "
        f"or install thatch for daily use: {DAILY_INSTALL}"
    )


def subcommand(words: Sequence[str]) -> str | None:
    """The subcommand word of ``thatch``'s arguments, past ``--home DIR`` and other options.

    None when there is none (or ``--`` comes first). Setup reads hook
    commands other setups wrote with it; the console script, its own argv.
    """
    found = positional_words(words)
    return found[0] if found else None


def positional_words(words: Sequence[str]) -> list[str]:
    """The words of ``thatch``'s arguments that are no option, nor ``--home``'s value.

    Read up to ``--``, past which thatch's own words end.
    """
    found: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--home":
            skip = True
        elif word == "--":
            break
        elif not word.startswith("-"):
            found.append(word)
    return found
