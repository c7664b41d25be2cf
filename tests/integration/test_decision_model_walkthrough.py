"""The walkthrough of docs/decision-model.md is what ``thatch predictions`` prints.

Its first two ``console`` blocks (recording feedback, then an opposite kept
apart) are run in order on a fresh home with the real model, and every
command's output must be the block's lines under it, word for word.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from integration.conftest import Runner

DOC = Path(__file__).parents[2] / "docs" / "decision-model.md"


def _console_blocks(text: str) -> list[str]:
    return re.findall(r"^```console\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def _commands(block: str) -> list[tuple[list[str], list[str]]]:
    """Each ``$ $T ...`` command (continuations joined) with the lines printed under it."""
    found: list[tuple[list[str], list[str]]] = []
    lines = block.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.startswith("$ $T "):
            continue
        command = line[len("$ $T ") :]
        while command.endswith("\\"):
            command = command[:-1] + " " + lines[index].strip()
            index += 1
        printed = []
        while index < len(lines) and not lines[index].startswith("$ "):
            printed.append(lines[index])
            index += 1
        found.append((shlex.split(command), printed))
    return found


def test_the_walkthrough_prints_what_the_doc_shows(thatch: Runner) -> None:
    blocks = _console_blocks(DOC.read_text(encoding="utf-8"))[:2]
    steps = [step for block in blocks for step in _commands(block)]
    assert len(steps) == 7
    for args, printed in steps:
        said = thatch("predictions", *args).stdout.splitlines()
        assert said == printed, " ".join(args)
