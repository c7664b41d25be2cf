"""What a hook leaves on disk, and in which order the daemon takes it (real console script,
daemon and model).

- a spooled event the daemon did not take holds no secret on disk, and is
  replayed, redacted, once a daemon runs;
- a tool's name is redacted like its input and output, in the nudge and in
  the session store;
- after a cold start (a stopped daemon, one killed, a stale socket), the
  first prompt is answered after the tool batch spooled ahead of it.

The hooks run as a harness runs them: the console script by its absolute
path, a PATH without the project's virtual environment, a HOME of their own.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .claude_hooks import ClaudeHooks, claude_hooks
from .conftest import Runner, claude_payload, daemon_pid

pytestmark = pytest.mark.slow

# Built by concatenation so the repository holds no string that looks like a live key.
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "ZyXwVuTsRqZyXwVuTsRqZyXwVuTsRqpOnMlK"


@pytest.fixture
def hooks(home: Path, thatch: Runner, tmp_path: Path) -> Iterator[ClaudeHooks]:
    yield from claude_hooks(home, thatch, tmp_path)


def batch_with(session: str, hooks: ClaudeHooks, **first_call: Any) -> dict[str, Any]:
    """The recorded PostToolBatch, its first call (Bash) changed."""
    payload = claude_payload("post_tool_batch", **hooks.where(session))
    payload["tool_calls"][0].update(first_call)
    return payload


def wait_for(check: Any, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def session_status(thatch: Runner, session: str) -> dict[str, Any] | None:
    status = json.loads(thatch("daemon", "status", "--json").stdout)
    return next((s for s in status["sessions"] if s["session_id"] == session), None)


def test_a_spooled_event_holds_no_secret_and_is_replayed_redacted(
    hooks: ClaudeHooks, thatch: Runner
) -> None:
    stdout = f"AWS_KEY={AWS_KEY} GITHUB={GITHUB_TOKEN}\n1 failed, 41 passed"
    batch = batch_with(
        "s1", hooks, tool_response={"stdout": stdout, "stderr": "", "interrupted": False}
    )
    assert hooks.run("PostToolBatch", batch, THATCH_NO_AUTOSTART="1") == ""

    (path,) = hooks.spooled()
    text = path.read_text()
    assert AWS_KEY not in text
    assert GITHUB_TOKEN not in text
    request = json.loads(text)
    # Only the payload's strings changed: the envelope the replay needs is whole.
    assert request["op"] == "hook"
    assert (request["command"], request["harness"], request["event"]) == (
        "hook",
        "claude",
        "PostToolBatch",
    )
    assert path.name.endswith(f"-{request['event_id']}.json")
    response = request["payload"]["tool_calls"][0]["tool_response"]["stdout"]
    assert response.startswith("AWS_KEY=[REDACTED:aws-access-key-id] GITHUB=[REDACTED:github-")
    assert request["payload"]["session_id"] == "s1"

    thatch("daemon", "start")
    wait_for(lambda: hooks.spooled() == [])
    status = session_status(thatch, "s1")
    assert status is not None
    assert status["pending"] == 3  # the batch's three calls, queued from the replay
    stored = hooks.sessions_db()
    assert AWS_KEY not in stored
    assert GITHUB_TOKEN not in stored
    assert "[REDACTED:aws-access-key-id]" in stored
    assert "1 failed, 41 passed" in stored


def test_a_tool_name_is_redacted_in_the_nudge_and_the_session_store(
    hooks: ClaudeHooks, thatch: Runner
) -> None:
    thatch("daemon", "start")
    assert (
        hooks.run("PostToolBatch", batch_with("s2", hooks, tool_name=f"Bash-{GITHUB_TOKEN}")) == ""
    )
    prompt = claude_payload("user_prompt_submit", **hooks.where("s2"))
    answered = hooks.run("UserPromptSubmit", prompt)
    assert "[1] Bash-[REDACTED:github-token]" in answered
    assert GITHUB_TOKEN not in answered
    # What was delivered is noted after the answer.
    wait_for(lambda: "delivered" in hooks.sessions_db() and "[1] Bash-" in hooks.sessions_db())
    stored = hooks.sessions_db()
    assert "Bash-[REDACTED:github-token]" in stored
    assert GITHUB_TOKEN not in stored


def stale_socket(hooks: ClaudeHooks) -> None:
    """A socket file nothing listens on, as a daemon killed by kill -9 leaves it."""
    path = hooks.located.socket_path
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as leftover:
        leftover.bind(path)
    assert os.path.exists(path)


@pytest.mark.parametrize("how", ["stopped", "killed", "stale socket"])
def test_after_a_cold_start_the_first_prompt_sees_the_batch_spooled_before_it(
    hooks: ClaudeHooks, thatch: Runner, how: str
) -> None:
    from thatch.daemon.client import DaemonClient

    thatch("daemon", "start")
    if how == "killed":
        client = DaemonClient(str(hooks.home))
        pid = daemon_pid(client)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        client.wait_stopped(timeout=30)
        assert os.path.exists(hooks.located.socket_path)  # left behind
    else:
        thatch("daemon", "stop")
        if how == "stale socket":
            stale_socket(hooks)

    # Spooled, and starts the daemon; an event nobody reads does not wait for it.
    assert hooks.run("PostToolBatch", batch_with("s4", hooks)) == ""
    prompt = claude_payload("user_prompt_submit", **hooks.where("s4"))
    # Waits for the daemon starting; must be answered after the batch is replayed.
    answered = hooks.run("UserPromptSubmit", prompt)
    assert 'session_id="s4"' in answered
    assert "[1] Bash" in answered
    assert "[3] Grep" in answered
    assert hooks.spooled() == []
    status = session_status(thatch, "s4")
    assert status is not None
    assert status["prompts"] == 1
