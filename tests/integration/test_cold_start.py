"""A cold start loses nothing: with no daemon running, a session start still prints its
reminder and the first prompt still prints its recall (real console script, daemon, model).

The hooks run as a harness runs them: the console script by its absolute
path, a PATH without the project's virtual environment, a HOME of their
own, and THATCH_NO_AUTOSTART unset, so the hook starts the daemon itself.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_daemon import write_hook_table
from thatch import rundir

from .conftest import THATCH, Runner, claude_payload, kill_daemon

pytestmark = pytest.mark.slow

SESSION = "cold-session"


class Hooks:
    """``thatch hook claude EVENT`` run the way Claude Code runs it."""

    def __init__(self, home: Path, project: Path, user_home: Path) -> None:
        self.home = home
        self.project = project
        # Only what a harness passes on; the venv's bin folder is not on PATH.
        self.env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(user_home)}
        self.env["THATCH_HOME"] = str(home)
        # Generous on a busy machine: this test is about what is printed, not
        # how soon (bench/cold_start.py measures that, with the default).
        self.env["THATCH_HOOK_COLD_START_MS"] = "60000"
        assert str(THATCH.parent) not in self.env["PATH"].split(os.pathsep)

    def run(self, event: str, payload: dict[str, Any]) -> str:
        completed = subprocess.run(
            [str(THATCH), "hook", "claude", event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=self.project,
            env=self.env,
            timeout=120,
            check=False,
        )
        assert completed.returncode == 0
        assert completed.stderr == ""
        return completed.stdout

    def spooled(self) -> list[Path]:
        folder = Path(rundir.locate({}, home=str(self.home)).spool_dir)
        return sorted(folder.glob("*.json")) if folder.is_dir() else []


@pytest.fixture
def hooks(home: Path, thatch: Runner, tmp_path: Path) -> Iterator[Hooks]:
    from thatch.daemon.client import DaemonClient

    project = tmp_path / "project"
    project.mkdir()
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    # As after `thatch setup`: the hooks know which events wait for the daemon.
    write_hook_table(home)
    yield Hooks(home, project, user_home)
    # Whatever happened, the daemon a hook started is stopped.
    thatch("daemon", "stop", check=False)
    kill_daemon(DaemonClient(str(home)), signal.SIGKILL)


def daemon_running(thatch: Runner) -> bool:
    return thatch("daemon", "status", check=False).returncode == 0


def test_with_no_daemon_the_session_start_and_the_first_prompt_are_answered(
    hooks: Hooks, thatch: Runner
) -> None:
    thatch("remember", "tabs", "The user indents Python code with tabs", "--store", "global")
    assert not daemon_running(thatch)

    where = {"session_id": SESSION, "cwd": str(hooks.project)}
    started = hooks.run("SessionStart", claude_payload("session_start", **where))
    assert "[thatch] Memory for this session" in started
    assert daemon_running(thatch)  # the hook started it
    assert hooks.spooled() == []  # taken live; the spooled copy was removed

    thatch("daemon", "stop")
    assert not daemon_running(thatch)
    asked = claude_payload(
        "user_prompt_submit", prompt="how should I indent this python code?", **where
    )
    answered = hooks.run("UserPromptSubmit", asked)
    assert "[thatch] Memories that may bear on this prompt" in answered
    assert "The user indents Python code with tabs" in answered
    assert hooks.spooled() == []

    # Each event was taken once: the prompt is counted once, not again by a replay.
    status = json.loads(thatch("daemon", "status", "--json").stdout)
    (session,) = [s for s in status["sessions"] if s["session_id"] == SESSION]
    assert session["prompts"] == 1
    assert status["spool_backlog"] == 0
