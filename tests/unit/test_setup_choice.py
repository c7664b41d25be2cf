"""Which harnesses `thatch setup` configures: flags, then questions on a terminal, then --yes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from thatch.cli import setup_commands
from thatch.plugin.config import Config
from thatch.plugin.harness import HarnessBase
from thatch.plugin.launcher import Launcher
from thatch.plugin.setup import Detection, OwnedFile

LAUNCHER = Launcher(("thatch",), "`thatch` on your PATH is this installation")


class Target(HarnessBase):
    def __init__(self, name: str, found: bool) -> None:
        self.name, self.title, self.found = name, name.title(), found

    def detect(self, context: Any) -> Detection:
        return Detection(found=self.found)

    def changes(self, context: Any) -> list[OwnedFile]:
        folder = context.project or context.user_home
        return [OwnedFile(folder / f"{self.name}.txt", f"written by {self.name}\n")]


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


def test_a_terminal_is_asked_scope_harnesses_and_the_plan(
    targets: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # "maybe" is not an answer: asked again, never taken as no.
    answers = iter(["", "maybe", "", "y", "y"])
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or next(answers))
    config = Config.load(tmp_path, environ={})
    namespace = args(tmp_path, project=None)
    monkeypatch.chdir(tmp_path)
    chosen = setup_commands._interview(targets, namespace, config, LAUNCHER)
    assert chosen == ["claude", "cursor"]
    shown = capsys.readouterr().out
    assert "registers" in shown  # the intro says what setup does
    assert "scope: this project" in shown
    assert "please answer n or y" in shown
    assert f"create {tmp_path / 'claude.txt'}" in shown  # the plan, before anything is written
    assert "harnesses will run: thatch\n  because" in shown
    assert not (tmp_path / "claude.txt").exists()
    assert [prompt.split(" [")[0] for prompt in asked] == [
        f"set up for this project ({tmp_path}) or for all your projects?",
        "set up Claude (detected)?",
        "set up Claude (detected)?",
        "set up Cursor?",
        "\nwrite these files? (d shows the diff)",
    ]


def test_the_interview_can_choose_global_and_show_the_diff(
    targets: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    answers = iter(["global", "y", "n", "d", "n"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    namespace = args(tmp_path, project=None)
    chosen = setup_commands._interview(
        targets, namespace, Config.load(tmp_path, environ={}), LAUNCHER
    )
    assert chosen is None  # declined after seeing the diff
    out = capsys.readouterr().out
    assert "scope: all your projects" in out
    assert "+written by claude" in out
    assert "nothing written" in out
    assert namespace.global_scope


def test_end_of_input_stops_the_interview(
    targets: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def closed(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", closed)
    config = Config.load(tmp_path, environ={})
    assert setup_commands._interview(targets, args(tmp_path), config, LAUNCHER) is None


def test_scripts_get_nothing_unless_yes(
    targets: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Config.load(tmp_path, environ={})
    assert setup_commands._choose(targets, args(tmp_path), config) == []
    assert setup_commands._choose(targets, args(tmp_path, yes=True), config) == ["claude"]
    # Removing config is never guessed.
    assert setup_commands._choose(targets, args(tmp_path, yes=True, uninstall=True), config) == []
