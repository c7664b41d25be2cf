"""``thatch prime``: let an installed agent CLI explore the project and save what it learns.

The first installed harness whose program is on PATH (in the order of
their names) runs the project-primer workflow once, non-interactively, as
its ``prime_command`` says; thatch exits with its status.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from thatch.plugin.errors import ThatchError

if TYPE_CHECKING:
    from thatch.plugin.harness import Harness

PRIMER_PROMPT = """\
Prime thatch's memory for this repository. Use the thatch-project-primer skill if you \
have it. Otherwise: first call memory_recall for "build", "test", "conventions" and \
"layout" to see what is already saved; then explore the repository (README, build and \
CI files, the main source folders, tests) and save each durable fact with \
memory_remember, one fact per memory under a short kebab-case label: how to build, test \
and run it, its layout, its conventions, and gotchas a newcomer would hit. Skip what is \
already saved or would change soon. End with a list of the labels you saved.\
"""


class NoHarnessError(ThatchError):
    """No supported agent CLI is on PATH."""


def choose(
    wanted: str | None = None,
    which: Callable[[str], str | None] = shutil.which,
    harnesses: Iterable[Harness] | None = None,
) -> list[str]:
    """The command line that primes the project with the first (or the wanted) harness found.

    ``harnesses`` are tried in their order (default: the installed ones, by
    name); ``wanted`` is a harness's name or its program's.
    """
    commands = _commands(_installed() if harnesses is None else harnesses)
    candidates = [(h, c) for h, c in commands if wanted in (None, h.name, c[0])]
    if not candidates:
        names = ", ".join(h.name for h, _ in commands) or "none (install a harness plugin)"
        raise NoHarnessError(f"unknown harness {wanted!r}; choose one of: {names}")
    for _, command in candidates:
        path = which(command[0])
        if path:
            return [path, *command[1:]]
    looked = ", ".join(command[0] for _, command in candidates)
    hints = ", or ".join(h.install_hint for h, _ in candidates if h.install_hint)
    how = f"install one ({hints})" if hints else "install one"
    raise NoHarnessError(f"none of {looked} is on PATH; {how} and run 'thatch setup' for it first")


def _commands(harnesses: Iterable[Harness]) -> list[tuple[Harness, list[str]]]:
    """Each harness that can prime, with its command line for the primer prompt."""
    found = []
    for harness in harnesses:
        command = harness.prime_command(PRIMER_PROMPT)
        if command:
            found.append((harness, list(command)))
    return found


def _installed() -> list[Harness]:
    from thatch.plugin.config import Config
    from thatch.plugins import Plugins

    return list(Plugins.load(Config.load(None)).harnesses().values())


def run(command: Sequence[str]) -> int:
    """Run the harness in the foreground; its output goes straight to the terminal."""
    import subprocess

    return subprocess.run(list(command), check=False).returncode
