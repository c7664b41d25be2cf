"""Starting the daemon detached, and the backstop timer."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from thatch.hookcmd import autostart, backstop

PROBE = """
import json, os, sys
out = {
    "own_session": os.getsid(0) == os.getpid(),
    "stdio": [os.path.realpath(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)]
    if os.path.isdir("/proc/self/fd") else None,
    "home": os.environ.get("THATCH_HOME"),
}
with open(sys.argv[1], "w") as handle:
    json.dump(out, handle)
"""


def test_spawn_detaches_into_its_own_session_with_null_stdio(tmp_path: Path) -> None:
    result = tmp_path / "probe.json"
    pid = autostart._spawn(
        [sys.executable, "-c", PROBE, str(result)], {**os.environ, "THATCH_HOME": "/h"}
    )
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    probe = json.loads(result.read_text())
    assert probe["own_session"] is True
    assert probe["home"] == "/h"
    if probe["stdio"] is not None:
        assert probe["stdio"] == [os.devnull] * 3


def test_start_daemon_passes_the_home_and_stamps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(autostart, "_spawn", lambda argv, env: calls.append((argv, env)) or 1)
    runtime = tmp_path / "run"
    said = autostart.start_daemon(str(runtime), {"PATH": "/bin"}, "/abs/home")
    assert (said.note, said.coming, said.pid) == ("starting the daemon", True, 1)
    ((argv, env),) = calls
    assert argv[0] == sys.executable
    assert env == {"PATH": "/bin", "THATCH_HOME": "/abs/home"}
    assert (runtime / autostart.STAMP_NAME).exists()
    assert oct(os.stat(runtime).st_mode & 0o777) == oct(0o700)
    again = autostart.start_daemon(str(runtime), {}, None)
    # Started by someone else just now: still worth waiting for, but not ours to watch.
    assert (again.note, again.coming, again.pid) == (
        "the daemon was started moments ago",
        True,
        None,
    )
    assert len(calls) == 1


def test_a_start_that_is_not_spaced_out_spawns_even_after_a_recent_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    monkeypatch.setattr(autostart, "_spawn", lambda argv, env: calls.append(argv) or 7)
    assert autostart.start_daemon(str(tmp_path), {}, None).pid == 7
    now = autostart.start_daemon(str(tmp_path), {}, None, spaced=False)
    assert (now.note, now.pid) == ("starting the daemon", 7)
    assert len(calls) == 2
    # Still stamped: the tool calls that follow do not spawn again.
    assert autostart.start_daemon(str(tmp_path), {}, None).pid is None
    assert len(calls) == 2


def test_a_disabled_autostart_says_no_daemon_is_coming(tmp_path: Path) -> None:
    said = autostart.start_daemon(str(tmp_path), {autostart.NO_AUTOSTART_VAR: "1"}, None)
    assert not said.coming
    assert said.pid is None
    assert autostart.NO_AUTOSTART_VAR in said.note


@pytest.mark.parametrize(("code", "status"), [("0", 0), ("3", 3)])
def test_exit_status_of_a_started_process(code: str, status: int) -> None:
    pid = autostart._spawn([sys.executable, "-c", f"raise SystemExit({code})"], dict(os.environ))
    deadline = time.monotonic() + 30
    while (seen := autostart.exit_status(pid)) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen == status


def test_exit_status_is_none_while_running_and_for_strangers() -> None:
    pid = autostart._spawn([sys.executable, "-c", "import time; time.sleep(30)"], {})
    try:
        assert autostart.exit_status(pid) is None
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    # Reaped already (or never ours): nothing to wait for, so "running".
    assert autostart.exit_status(pid) is None


@pytest.mark.parametrize(("value", "spawns"), [("1", 0), ("yes", 0), ("0", 1), ("", 1)])
def test_no_autostart_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, spawns: int
) -> None:
    calls: list[object] = []
    monkeypatch.setattr(autostart, "_spawn", lambda argv, env: calls.append(argv) or 1)
    autostart.start_daemon(str(tmp_path), {autostart.NO_AUTOSTART_VAR: value}, None)
    assert len(calls) == spawns


def test_a_stamp_from_the_future_does_not_block_spawning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    monkeypatch.setattr(autostart, "_spawn", lambda argv, env: calls.append(argv) or 1)
    stamp = tmp_path / autostart.STAMP_NAME
    stamp.touch()
    future = time.time() + 3600
    os.utime(stamp, (future, future))
    autostart.start_daemon(str(tmp_path), {}, None)
    assert len(calls) == 1


def test_backstop_raises_deadline_then_exits(monkeypatch: pytest.MonkeyPatch) -> None:
    exits: list[int] = []
    monkeypatch.setattr(backstop, "_exit", exits.append)
    timer = backstop.Backstop()
    timer.arm(0.01, grace=0.01)
    try:
        with pytest.raises(backstop.Deadline):
            time.sleep(5)
        time.sleep(0.5)  # the grace firing: exit, here recorded
        assert exits == [0]
    finally:
        timer.cancel()


def test_backstop_never_cuts_output_being_written(monkeypatch: pytest.MonkeyPatch) -> None:
    exits: list[int] = []
    monkeypatch.setattr(backstop, "_exit", exits.append)
    timer = backstop.Backstop()
    timer.arm(0.01, grace=0.01)
    timer.writing = True
    try:
        time.sleep(0.1)
    finally:
        timer.cancel()
    assert exits == []


def test_cancel_restores_the_handler_and_stops_the_timer() -> None:
    before = signal.getsignal(signal.SIGALRM)
    timer = backstop.Backstop()
    timer.arm(5, grace=0.01)
    assert signal.getsignal(signal.SIGALRM) != before
    timer.cancel()
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_no_spare_is_started_while_a_daemon_holds_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from thatch import daemon_lock as lock

    calls: list[object] = []
    monkeypatch.setattr(autostart, "_spawn", lambda argv, env: calls.append(argv) or 7)
    lock_path = str(tmp_path / "daemon.lock")
    held = lock.acquire(lock_path)
    assert held is not None
    try:
        waiting = autostart.start_daemon(str(tmp_path), {}, None, spaced=False, lock_path=lock_path)
    finally:
        lock.release(held)
    assert (waiting.coming, waiting.pid, calls) == (True, None, [])
    started = autostart.start_daemon(str(tmp_path), {}, None, spaced=False, lock_path=lock_path)
    assert started.pid == 7
