"""A daemon that lost its socket listens again; one that hangs is named and can be stopped."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from thatch import daemon_lock as lock
from thatch import rundir, socketguard

from .conftest import Runner, claude_payload, daemon_pid

pytestmark = pytest.mark.slow


def answered_within(client: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if client.running():
            return True
        time.sleep(0.1)
    return False


def hook_is_answered(thatch: Runner, home: Path, tmp_path: Path) -> bool:
    """Whether a prompt hook reached the daemon (nothing spooled, nothing started)."""
    prompt = json.dumps(claude_payload("user_prompt_submit", cwd=str(tmp_path)))
    done = thatch("flush-tools", input=prompt, env={"THATCH_NO_AUTOSTART": "1"})
    spool = Path(rundir.locate(home=str(home)).spool_dir)
    return done.returncode == 0 and not (spool.exists() and any(spool.iterdir()))


def test_a_deleted_socket_is_bound_again(
    daemon: Any, thatch: Runner, home: Path, tmp_path: Path
) -> None:
    os.unlink(daemon.located.socket_path)
    assert answered_within(daemon, 10)
    assert hook_is_answered(thatch, home, tmp_path)
    log = Path(daemon.located.log_path).read_text()
    assert "was removed or replaced; listening on a new one" in log


def test_a_deleted_socket_of_a_long_home_is_bound_again(thatch: Runner, tmp_path: Path) -> None:
    from thatch.daemon.client import DaemonClient

    home = tmp_path / ("deep-" * 18)
    home.mkdir()
    env = {"THATCH_HOME": str(home)}
    client = DaemonClient(str(home))
    thatch("daemon", "start", env=env)
    try:
        bound = socketguard.socket_file(client.located.socket_path)
        assert bound != client.located.socket_path
        os.unlink(bound)
        assert answered_within(client, 10)
        # The link in the runtime folder is removed too: it is made again.
        os.unlink(client.located.socket_path)
        assert answered_within(client, 10)
    finally:
        thatch("daemon", "stop", env=env, check=False)
    assert not lock.is_held(client.located.lock_path)
    assert not os.path.lexists(client.located.socket_path)
    assert not os.path.exists(os.path.dirname(bound))


def test_a_stopped_daemon_is_running_but_not_answering_and_can_be_stopped(
    daemon: Any, thatch: Runner
) -> None:
    pid = daemon_pid(daemon)
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        status = thatch("daemon", "status", check=False)
        assert status.returncode == 3
        assert f"running (pid {pid}) but not answering" in status.stdout
        assert "thatch daemon stop" in status.stdout
        data = json.loads(thatch("daemon", "status", "--json", check=False).stdout)
        assert (data["running"], data["answering"], data["pid"]) == (True, False, pid)

        start = thatch("daemon", "start", check=False)
        assert start.returncode == 1
        assert "not answering" in start.stderr
        assert "Traceback" not in start.stderr

        stop = thatch("daemon", "stop")
        assert f"pid {pid}" in stop.stdout
        assert "not answering" in stop.stdout
    finally:
        # Whatever happened, the process must not stay stopped.
        with_pid_continued(pid)
    assert not lock.is_held(daemon.located.lock_path)
    assert ended(pid)


def with_pid_continued(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)


def ended(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` exits (is gone, or a zombie nobody reaped) within ``within`` seconds.

    The daemon lets go of its lock just before its process ends.
    """
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            return True
        if fields[0] in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False
