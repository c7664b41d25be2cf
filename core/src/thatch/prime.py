"""``thatch prime``: let an installed agent CLI explore the project and save what it learns.

The first harness found on PATH runs the project-primer workflow once,
non-interactively; thatch exits with its status.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence

import attrs

from thatch.plugin.errors import ThatchError

PRIMER_PROMPT = """\
Prime thatch's memory for this repository. Use the thatch-project-primer skill if you \
have it. Otherwise: first call memory_recall for "build", "test", "conventions" and \
"layout" to see what is already saved; then explore the repository (README, build and \
CI files, the main source folders, tests) and save each durable fact with \
memory_remember, one fact per memory under a short kebab-case label: how to build, test \
and run it, its layout, its conventions, and gotchas a newcomer would hit. Skip what is \
already saved or would change soon. End with a list of the labels you saved.\
"""


@attrs.frozen
class Harness:
    """An agent CLI that can run one prompt without a terminal."""

    name: str
    binary: str
    #: The command line for a prompt, given the binary's path.
    command: Callable[[str, str], list[str]]


#: In the order ``thatch prime`` tries them: the most installed first, so a user
#: with several gets the one they most likely set up (Claude Code, then Cursor).
#: ``cursor-agent -p`` would stop at a prompt to approve thatch's MCP server,
#: which nobody can answer without a terminal: ``--approve-mcps`` approves it.
HARNESSES = (
    Harness("claude", "claude", lambda path, prompt: [path, "-p", prompt]),
    Harness("cursor", "cursor-agent", lambda path, prompt: [path, "-p", "--approve-mcps", prompt]),
    Harness("opencode", "opencode", lambda path, prompt: [path, "run", prompt]),
)


class NoHarnessError(ThatchError):
    """No supported agent CLI is on PATH."""


def choose(
    wanted: str | None = None, which: Callable[[str], str | None] = shutil.which
) -> list[str]:
    """The command line that primes the project with the first (or the wanted) harness found."""
    candidates = [h for h in HARNESSES if wanted in (None, h.name, h.binary)]
    if not candidates:
        names = ", ".join(h.name for h in HARNESSES)
        raise NoHarnessError(f"unknown harness {wanted!r}; choose one of: {names}")
    for harness in candidates:
        path = which(harness.binary)
        if path:
            return harness.command(path, PRIMER_PROMPT)
    looked = ", ".join(h.binary for h in candidates)
    raise NoHarnessError(
        f"none of {looked} is on PATH; install one (npm install -g @anthropic-ai/claude-code, "
        "or Cursor's cursor-agent, or npm install -g opencode-ai) and run "
        "'thatch setup' for it first"
    )


def run(command: Sequence[str]) -> int:
    """Run the harness in the foreground; its output goes straight to the terminal."""
    import subprocess

    return subprocess.run(list(command), check=False).returncode
