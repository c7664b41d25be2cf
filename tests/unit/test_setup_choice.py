"""Which harnesses `thatch setup` configures: flags, then questions on a terminal, then --yes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from thatch.cli import setup_commands
from thatch.config import Config
from thatch.setup.model import Detection


class Target:
    def __init__(self, name: str, found: bool) -> None:
        self.name, self.title, self.found = name, name.title(), found

    def detect(self, context: Any) -> Detection:
        return Detection(found=self.found)


def args(tmp_path: Path, **overrides: Any) -> argparse.Namespace:
    values = {"harnesses": None, "uninstall": False, "yes": False, "global_scope": False}
    return argparse.Namespace(**{**values, "project": str(tmp_path), **overrides})


@pytest.fixture
def targets() -> dict[str, Any]:
    return {"claude": Target("claude", True), "cursor": Target("cursor", False)}


def test_flags_win(targets: dict[str, Any], tmp_path: Path) -> None:
    chosen = setup_commands._choose(
        targets, args(tmp_path, harnesses=["cursor", "cursor"]), Config.load(tmp_path, environ={})
    )
    assert chosen == ["cursor"]


def test_a_terminal_is_asked_with_detected_harnesses_as_the_default(
    targets: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    answers = iter(["", "y"])  # Enter keeps the default: yes for the detected claude
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    config = Config.load(tmp_path, environ={})
    assert setup_commands._choose(targets, args(tmp_path), config) == ["claude", "cursor"]
    answers = iter(["n", ""])
    assert setup_commands._choose(targets, args(tmp_path), config) == []


def test_scripts_get_nothing_unless_yes(
    targets: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    config = Config.load(tmp_path, environ={})
    assert setup_commands._choose(targets, args(tmp_path), config) == []
    assert setup_commands._choose(targets, args(tmp_path, yes=True), config) == ["claude"]
    # Removing config is never guessed.
    assert setup_commands._choose(targets, args(tmp_path, yes=True, uninstall=True), config) == []
