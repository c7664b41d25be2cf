"""Start the commands setup wrote the way a harness does, to see that they run.

A harness runs a hook command through ``/bin/sh`` and an MCP server by
spawning its program, both with the user's own PATH (never ``uv run``'s).
A command can look right and still fail there: a bare ``thatch`` the
harness's PATH does not find, an absolute path into a deleted virtualenv
(its interpreter is gone, the shell says "not found"). So each distinct
way of starting thatch is run once with ``--version`` in that environment.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterable, Iterator
from typing import Any

import attrs

from thatch.plugin.launcher import user_path

#: A leading ``NAME=value`` word of a shell command sets a variable.
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: Seconds one ``thatch --version`` may take (a cold interpreter without bytecode caches).
PROBE_TIMEOUT = 20.0


@attrs.frozen
class Launch:
    """One way a config starts thatch: through the shell (hooks) or directly (MCP servers)."""

    #: The words that start thatch, without its subcommand (``THATCH_HOME=x /p/thatch``).
    words: tuple[str, ...]
    shell: bool

    @property
    def program(self) -> str:
        """The program that runs: the first word after the variable assignments."""
        words = [shlex.split(w)[0] if self.shell else w for w in self.words]
        return next(word for word in words if not (self.shell and _ASSIGNMENT.match(word)))

    def __str__(self) -> str:
        return " ".join(self.words) if self.shell else shlex.join(self.words)


def launches(values: Iterable[Any]) -> list[Launch]:
    """The distinct ways the JSON ``values`` (hook entries, MCP entries) start thatch."""
    found: dict[Launch, None] = {}
    for value in values:
        for launch in _walk(value):
            found.setdefault(launch)
    return list(found)


def problem(launch: Launch) -> str | None:
    """Why ``launch`` fails as the harness starts it (None: ``--version`` answered)."""
    env = {**os.environ, "PATH": user_path()}
    env.pop("VIRTUAL_ENV", None)
    if launch.shell:
        argv = ["/bin/sh", "-c", " ".join([*launch.words, "--version"])]
    else:
        argv = [*launch.words, "--version"]
    try:
        done = subprocess.run(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        return "not found"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not be started ({exc})"
    if done.returncode == 0:
        return None
    said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    if done.returncode in (126, 127):
        return f"cannot be started from the harness's PATH ({said})"
    return f"fails with exit status {done.returncode} ({said})"


def _walk(value: Any) -> Iterator[Launch]:
    if isinstance(value, dict):
        command = value.get("command")
        if isinstance(command, str) and "thatch" in command:
            args = value.get("args")
            if isinstance(args, list):  # an MCP server: program and arguments, no shell
                yield from _prefix([command, *map(str, args)], shell=False)
            else:  # a hook: one shell command line
                yield from _shell_line(command)
        elif isinstance(command, list) and any("thatch" in str(word) for word in command):
            yield from _prefix([str(word) for word in command], shell=False)
        for key, inner in value.items():
            if key != "command":
                yield from _walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _walk(inner)


def _shell_line(line: str) -> Iterator[Launch]:
    try:
        words = shlex.split(line)
    except ValueError:
        return
    assignments = []
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        assignments.append(f"{name}={shlex.quote(value)}")
    for launch in _prefix(words, shell=True):
        quoted = tuple(shlex.quote(word) for word in launch.words)
        yield Launch((*assignments, *quoted), shell=True)


def _prefix(words: list[str], *, shell: bool) -> Iterator[Launch]:
    """The words up to thatch itself: ``thatch``, ``/p/thatch`` or ``python -m thatch``."""
    for index, word in enumerate(words):
        if word == "thatch" or word.endswith(os.sep + "thatch"):
            if index == 0 or words[index - 1] == "-m":
                yield Launch(tuple(words[: index + 1]), shell)
            return
