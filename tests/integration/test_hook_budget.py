"""A hook keeps every event whose payload arrived: a large one at a short cap, a late one.

Real ``thatch buffer-tool`` processes. A 7 MB payload at a 100 ms cap takes
most of the cap to read and to spool; a harness that writes stdin 200 ms
after starting the hook leaves a third of the default 300 ms cap. Either way
the event must reach the spool or the daemon.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from thatch import wire

from integration.conftest import THATCH, claude_payload
from integration.hook_runs import Hooks

SESSION = "budget-session"
LARGE_EVENTS = 8
LATE_EVENTS = 8
#: When the harness writes stdin, after starting the hook (seconds).
STDIN_DELAY = 0.2


def tool_payload(number: int, output_bytes: int = 100) -> bytes:
    """A PostToolUse payload with its own tool-use id and ``output_bytes`` of output."""
    payload = claude_payload(
        "post_tool_use",
        session_id=SESSION,
        tool_use_id=f"toolu_budget_{number:03d}",
        tool_name="Bash",
        tool_input={"command": f"cat big-{number}.log"},
        tool_response={"stdout": f"run {number}\n" + "x" * output_bytes},
    )
    return json.dumps(payload).encode()


def spooled_ids(hooks: Hooks) -> list[str]:
    """The tool-use ids of the events in the spool folder (finished files only)."""
    folder = Path(hooks.located.spool_dir)
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    return [wire.decode(path.read_bytes())["payload"]["tool_use_id"] for path in files]


def run_large(hooks: Hooks, number: int, env: dict[str, str]) -> None:
    completed = hooks.run(
        "buffer-tool",
        stdin=tool_payload(number, output_bytes=7 * 1024 * 1024),
        env={"THATCH_HOOK_TIMEOUT_MS": "100", **env},
    )
    assert completed.returncode == 0
    assert completed.stdout == b""
    assert completed.stderr == b""


def test_large_events_at_a_short_cap_are_all_spooled_without_a_daemon(hooks: Hooks) -> None:
    for number in range(LARGE_EVENTS):
        run_large(hooks, number, {})
    expected = [f"toolu_budget_{number:03d}" for number in range(LARGE_EVENTS)]
    assert sorted(spooled_ids(hooks)) == expected
    # Each hook said why it spooled, in one line.
    assert len(hooks.log_lines()) == LARGE_EVENTS


def session_pending(daemon: Any) -> int:
    """How many tool calls the daemon holds in the session's queue."""
    sessions = daemon.call("status")["sessions"]
    return next((s["pending"] for s in sessions if s["session_id"] == SESSION), 0)


@pytest.mark.slow
def test_large_events_at_a_short_cap_all_reach_a_running_daemon(hooks: Hooks, daemon: Any) -> None:
    for number in range(LARGE_EVENTS):
        run_large(hooks, number, {})
    # What the hooks could not hand over live is in the spool; the daemon replays it.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = daemon.call("status")
        if status["spool_backlog"] == 0 and session_pending(daemon) >= LARGE_EVENTS:
            break
        time.sleep(0.5)
    assert daemon.call("status")["spool_backlog"] == 0
    # Every event once: the event ids make a replay of an event taken live a no-op.
    assert session_pending(daemon) == LARGE_EVENTS


def start_late(hooks: Hooks, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], float]:
    """Start ``thatch buffer-tool`` with nothing on stdin yet; returns it and when it started."""
    started = time.monotonic()
    process = subprocess.Popen(
        [str(THATCH), "buffer-tool"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=hooks.cwd,
        env={**hooks.env, **env},
    )
    return process, started


def run_late(hooks: Hooks, number: int, env: dict[str, str]) -> None:
    process, started = start_late(hooks, env)
    time.sleep(max(started + STDIN_DELAY - time.monotonic(), 0))
    stdout, stderr = process.communicate(tool_payload(number), timeout=60)
    assert process.returncode == 0
    assert stdout == b""
    assert stderr == b""


#: The default cap: the variable the fixture sets is taken away.
DEFAULT_CAP = {"THATCH_HOOK_TIMEOUT_MS": ""}


def test_a_stdin_written_late_is_spooled_without_a_daemon(hooks: Hooks) -> None:
    for number in range(LATE_EVENTS):
        run_late(hooks, number, DEFAULT_CAP)
    assert len(spooled_ids(hooks)) == LATE_EVENTS


def test_a_stdin_written_late_reaches_the_daemon(hooks: Hooks) -> None:
    fake = hooks.daemon(lambda request: {"ok": True, "output": ""})
    for number in range(LATE_EVENTS):
        run_late(hooks, number, DEFAULT_CAP)
    delivered = {request["payload"]["tool_use_id"] for request in fake.requests}
    assert len(delivered | set(spooled_ids(hooks))) == LATE_EVENTS
