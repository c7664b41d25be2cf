"""Parity with the original's UC-005 through the real console script: an older setup's hooks."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .conftest import Runner, as_json, at_terminal


def test_uc005_an_unknown_command_run_as_a_hook_exits_0_with_a_note(
    thatch: Runner, home: Path
) -> None:
    completed = thatch("echo", "hello", input='{"hook_event_name": "Stop"}', check=False)
    assert completed.returncode == 0  # Claude Code would take 2 as "block the prompt"
    assert completed.stdout == ""
    assert "ignored `thatch echo hello`" in completed.stderr
    assert "thatch setup" in completed.stderr
    (log,) = home.glob("**/thatch.log")
    assert "ignored `thatch echo hello`" in log.read_text()


def test_uc005_an_unknown_command_typed_at_a_terminal_still_exits_2(home: Path) -> None:
    completed = at_terminal(["echo", "hello"], {**os.environ, "THATCH_HOME": str(home)}, 300)
    assert completed.returncode == 2
    assert "invalid choice: 'echo'" in completed.stderr


def test_uc005_a_bad_use_of_a_real_command_still_exits_2_without_a_terminal(
    thatch: Runner,
) -> None:
    completed = thatch("search", input="", check=False)
    assert completed.returncode == 2


def test_uc005_dry_run_shows_the_migration_with_its_reason(
    thatch: Runner, tmp_path: Path, user_home: Path
) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    old = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "thatch echo"}]}]}}
    settings = project / ".claude" / "settings.json"
    settings.write_text(json.dumps(old))
    env = {"HOME": str(user_home)}

    preview = thatch("setup", "--claude", "--dry-run", cwd=project, env=env)
    removed = [line for line in preview.stdout.splitlines() if line.startswith("-")]
    assert any("thatch echo" in line for line in removed)
    assert "migrated from an older thatch setup" in preview.stdout
    assert json.loads(settings.read_text()) == old  # a dry run writes nothing

    applied = as_json(thatch("setup", "--claude", "--json", cwd=project, env=env))
    assert any("thatch echo" in note for note in applied[0]["notes"])
    assert "thatch echo" not in settings.read_text()
