"""A cold start loses nothing: with no daemon running, a session start still prints its
reminder and the first prompt still prints its recall (real console script, daemon, model).

The hooks run as a harness runs them: the console script by its absolute
path, a PATH without the project's virtual environment, a HOME of their
own, and THATCH_NO_AUTOSTART unset, so the hook starts the daemon itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .claude_hooks import ClaudeHooks, claude_hooks
from .conftest import Runner, claude_payload

pytestmark = pytest.mark.slow

SESSION = "cold-session"


@pytest.fixture
def hooks(home: Path, thatch: Runner, tmp_path: Path) -> Iterator[ClaudeHooks]:
    yield from claude_hooks(home, thatch, tmp_path)


def daemon_running(thatch: Runner) -> bool:
    return thatch("daemon", "status", check=False).returncode == 0


def test_with_no_daemon_the_session_start_and_the_first_prompt_are_answered(
    hooks: ClaudeHooks, thatch: Runner
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
