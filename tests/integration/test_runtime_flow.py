"""A Claude Code session end to end: real hook commands, the real daemon, the real model."""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from thatch import rundir

from .conftest import THATCH, Runner, claude_payload, daemon_pid, kill_daemon, make_repo

pytestmark = pytest.mark.slow


def hook(thatch: Runner, command: str, payload: Any, *args: str, cwd: Path | None = None) -> str:
    """Run a hook command the way Claude Code does; it must always exit 0."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    completed = thatch(command, *args, input=text, cwd=cwd)
    assert completed.returncode == 0
    return completed.stdout


def session_status(daemon: Any, session_id: str) -> dict[str, Any] | None:
    status = daemon.call("status")
    return next((s for s in status["sessions"] if s["session_id"] == session_id), None)


def tool(daemon: Any, name: str, project: Path, **arguments: Any) -> Any:
    answer = daemon.call("call", tool=name, arguments=arguments, cwd=str(project), env={})
    assert answer["ok"], answer
    assert not answer["is_error"], answer
    return answer["result"]


def test_tool_batch_then_escalating_extraction_then_recall_and_decisions(
    daemon: Any, thatch: Runner, tmp_path: Path
) -> None:
    project = make_repo(tmp_path / "shop", "git@github.com:acme/shop.git")
    session = "flow-session"
    where = {"session_id": session, "cwd": str(project)}

    start = hook(thatch, "reminder", claude_payload("session_start", **where), cwd=project)
    assert "acme/shop" in start

    assert hook(thatch, "buffer-batch", claude_payload("post_tool_batch", **where)) == ""
    assert session_status(daemon, session)["pending"] == 3

    prompt = claude_payload("user_prompt_submit", **where)
    nudges = [hook(thatch, "flush-tools", prompt, cwd=project) for _ in range(4)]
    for text in nudges:
        assert f'session_id="{session}"' in text
        # Every queued tool call is listed.
        assert "[1] Bash" in text
        assert "[3] Grep" in text
    # The firmer forms' longer headers leave less room for each call's text.
    assert all('{"command":"uv run pytest -' in text for text in nudges[:2])
    # What they ran and returned: the shorter polite header leaves room for the
    # command whole and for the head and tail of its output (the data framing
    # takes a share of the budget too).
    assert "uv run pytest -q tests/payments" in nudges[0]
    assert "FAILED tests/payments/test_refund.py" in nudges[0]
    assert "1 failed, 41 passed" in nudges[0]
    assert "Money amounts are integers in cents everywhere; never floats." in nudges[0]
    polite, still_polite, insistent, shouting = (text.splitlines()[0] for text in nudges)
    assert not polite.isupper()
    assert still_polite == polite  # one ignored nudge is no reason to insist
    assert not insistent.isupper()
    assert "ignored" in insistent
    assert shouting.isupper()
    assert session_status(daemon, session)["pending"] == 3  # peeked, never drained

    # The agent does what the nudge asks: saves a fact, then acknowledges.
    tool(
        daemon,
        "memory_remember",
        project,
        label="refunds-via-ledger",
        content="Refunds must go through the ledger service, never by editing the orders table.",
    )
    assert tool(daemon, "extraction_done", project, session_id=session)["drained"] == 3
    tool(
        daemon,
        "prediction_update",
        project,
        matcher="implementing refunds or other money movements",
        prediction="Route every money movement through the ledger service",
        signal="create",
    )

    after = hook(thatch, "flush-tools", prompt, cwd=project)
    assert "extraction_done" not in after
    assert "[thatch] Memories" in after
    assert "refunds-via-ledger" in after
    assert "[thatch] User decision model" in after
    assert "ledger service" in after

    # The same memory is not shown again on the next prompt.
    again = hook(thatch, "flush-tools", prompt, cwd=project)
    assert "refunds-via-ledger" not in again


def test_json_output_is_claude_hook_specific_output(
    daemon: Any, thatch: Runner, tmp_path: Path
) -> None:
    project = make_repo(tmp_path / "shop", "git@github.com:acme/shop.git")
    where = {"session_id": "json-session", "cwd": str(project)}
    out = hook(thatch, "reminder", claude_payload("session_start", **where), "--json", cwd=project)
    answer = json.loads(out)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "acme/shop" in answer["hookSpecificOutput"]["additionalContext"]


def test_two_sessions_share_one_daemon_and_keep_their_queues(
    daemon: Any, thatch: Runner, tmp_path: Path
) -> None:
    pid = daemon_pid(daemon)
    calls = []
    for session, count in (("session-a", 2), ("session-b", 5)):
        for i in range(count):
            calls.append(
                claude_payload(
                    "post_tool_use",
                    session_id=session,
                    tool_use_id=f"{session}-{i}",
                    tool_input={"command": f"echo {session} step {i}"},
                    tool_name="Bash",
                    tool_response={"stdout": f"{session} output {i}"},
                )
            )
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda p: hook(thatch, "buffer-tool", p), calls))
    assert session_status(daemon, "session-a")["pending"] == 2
    assert session_status(daemon, "session-b")["pending"] == 5
    nudge = hook(
        thatch, "flush-tools", claude_payload("user_prompt_submit", session_id="session-a")
    )
    assert "session-a output" in nudge
    assert "session-b" not in nudge
    assert daemon_pid(daemon) == pid


@pytest.mark.parametrize(
    "payload",
    [
        {"session_id": 5, "hook_event_name": "PostToolUse", "tool_name": "Bash"},
        {"session_id": "s", "tool_name": ["Bash"]},
        {"session_id": "s", "tool_calls": "not a list"},
    ],
    ids=["session-id-number", "tool-name-list", "tool-calls-string"],
)
def test_wrong_types_answer_nothing_and_log_one_line(
    daemon: Any, thatch: Runner, home: Path, payload: dict[str, Any]
) -> None:
    log = Path(rundir.locate(home=str(home)).log_path)
    before = log.read_text().count("bad payload")
    command = "buffer-batch" if "tool_calls" in payload else "buffer-tool"
    assert hook(thatch, command, payload) == ""
    assert log.read_text().count("bad payload") == before + 1


def test_kill_9_during_1000_tool_calls_loses_and_doubles_nothing(
    daemon: Any, thatch: Runner, home: Path
) -> None:
    session = "kill-session"
    cap_seconds = 0.3

    def one(i: int) -> tuple[int, float]:
        payload = claude_payload(
            "post_tool_use",
            session_id=session,
            tool_use_id=f"toolu_{i:04d}",
            tool_name="Bash",
            tool_input={"command": f"echo {i}"},
            tool_response={"stdout": str(i)},
        )
        started = time.monotonic()
        completed = subprocess.run(
            [str(THATCH), "buffer-tool"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env={**__import__("os").environ, "THATCH_HOME": str(home)},
            timeout=60,
            check=False,
        )
        assert completed.stdout == ""
        return completed.returncode, time.monotonic() - started

    with ThreadPoolExecutor(max_workers=4) as pool:
        first = list(pool.map(one, range(300)))
        kill_daemon(daemon, 9)
        rest = list(pool.map(one, range(300, 1000)))
    results = first + rest
    assert all(code == 0 for code, _ in results)
    # Within the cap: process start-up (~30 ms, more on a busy machine) plus 300 ms.
    assert max(elapsed for _, elapsed in results) < cap_seconds + 2.0

    daemon.ensure_running()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = daemon.call("status")
        mine = session_status(daemon, session)
        if status["spool_backlog"] == 0 and mine and mine["pending"] >= 1000:
            break
        time.sleep(0.5)
    assert status["spool_backlog"] == 0
    assert session_status(daemon, session)["pending"] == 1000
