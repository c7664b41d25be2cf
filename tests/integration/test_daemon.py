"""The real daemon: single instance, private socket, handshake, idle exit, clean stop."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from thatch import daemon_lock as lock
from thatch import rundir, wire

from .conftest import Runner, as_json, daemon_pid, kill_daemon

pytestmark = pytest.mark.slow


def test_daemon_start_status_stop(daemon: Any, thatch: Runner) -> None:
    status = as_json(thatch("daemon", "status", "--json"))
    assert status["running"] is True
    assert status["pid"] == daemon_pid(daemon)
    assert status["spool_backlog"] == 0

    thatch("daemon", "stop")
    stopped = thatch("daemon", "status", "--json", check=False)
    assert stopped.returncode == 3
    assert as_json(stopped)["running"] is False
    assert not os.path.exists(daemon.located.socket_path)


def test_socket_and_folder_are_private(daemon: Any) -> None:
    socket_mode = stat.S_IMODE(os.stat(daemon.located.socket_path).st_mode)
    folder_mode = stat.S_IMODE(os.stat(os.path.dirname(daemon.located.socket_path)).st_mode)
    assert socket_mode == 0o600
    assert folder_mode == 0o700


def test_a_second_daemon_exits_and_leaves_the_first_serving(daemon: Any, home: Path) -> None:
    first = daemon_pid(daemon)
    second = subprocess.run(
        [sys.executable, "-m", "thatch", "daemon", "run"],
        env={**os.environ, "THATCH_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert second.returncode == 0
    assert daemon_pid(daemon) == first
    assert daemon.running()


def test_a_stale_socket_is_replaced(home: Path, thatch: Runner) -> None:
    located = rundir.locate(home=str(home))
    os.makedirs(os.path.dirname(located.socket_path), mode=0o700, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(located.socket_path)
    stale.close()  # the file stays, nobody listens: a crashed daemon's leftover

    from thatch.daemon.client import DaemonClient

    client = DaemonClient(str(home))
    assert not client.running()
    try:
        thatch("daemon", "start")
        assert client.running()
    finally:
        thatch("daemon", "stop", check=False)
        kill_daemon(client, 9)


def test_a_newer_client_restarts_an_older_daemon(daemon: Any) -> None:
    old_pid = daemon_pid(daemon)
    answer = wire.request(
        daemon.located.socket_path,
        {"protocol": wire.PROTOCOL, "client": "999.0.0", "op": "ping"},
        timeout=10,
    )
    assert answer["ok"] is False
    assert answer["restart"] is True
    daemon.wait_stopped(timeout=30)
    daemon.ensure_running()
    assert daemon_pid(daemon) != old_pid


def test_idle_daemon_exits(home: Path, thatch: Runner) -> None:
    config = home / "config"
    config.mkdir()
    (config / "config.toml").write_text("[daemon]\nidle_minutes = 0.02\n")
    from thatch.daemon.client import DaemonClient

    client = DaemonClient(str(home))
    thatch("daemon", "start")
    deadline = time.monotonic() + 60
    while lock.is_held(client.located.lock_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not lock.is_held(client.located.lock_path)
    assert not os.path.exists(client.located.socket_path)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
}


def test_an_open_mcp_session_keeps_an_idle_daemon_running(
    home: Path, thatch: Runner, tmp_path: Path
) -> None:
    config = home / "config"
    config.mkdir()
    (config / "config.toml").write_text("[daemon]\nidle_minutes = 0.02\n")
    from thatch.daemon.client import DaemonClient

    client = DaemonClient(str(home))
    thatch("daemon", "start")
    relay = subprocess.Popen(
        [str(Path(sys.executable).with_name("thatch")), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    try:
        assert relay.stdin is not None
        assert relay.stdout is not None
        relay.stdin.write(wire.encode(INITIALIZE))
        relay.stdin.flush()
        assert wire.decode(relay.stdout.readline())["id"] == 1
        # Well past the idle limit (1.2 s) without a request: the session is activity.
        time.sleep(3)
        assert client.running()
        relay.stdin.close()
        assert relay.wait(timeout=30) == 0
    finally:
        relay.kill()
        relay.wait()
        relay.stdout.close()  # type: ignore[union-attr]
    # Once it has closed, the daemon is idle again and exits.
    deadline = time.monotonic() + 60
    while lock.is_held(client.located.lock_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not lock.is_held(client.located.lock_path)


# The test's own interpreter may sit in root's home, which other users cannot enter.
SYSTEM_PYTHON = next(
    (p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.exists(p)), None
)


# Another user's client: the daemon closes the connection unanswered, which
# the probe sees as an empty read or a reset — never as an answer.
PEER_PROBE = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
try:
    s.sendall(b'{"op": "ping", "protocol": 1}\n')
    print(repr(s.recv(100)))
except (ConnectionResetError, BrokenPipeError):
    # The daemon may close the refused connection before the request is sent.
    print(repr(b""))
"""


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a client as another user")
@pytest.mark.skipif(SYSTEM_PYTHON is None, reason="needs a python3 other users can run")
def test_another_user_is_refused(thatch: Runner) -> None:
    # A home other users can traverse, and a socket they could open, so that
    # only the daemon's peer check stands between them and the daemon.
    shared = Path(tempfile.mkdtemp(prefix="thatch-peer-"))
    shared.chmod(0o755)
    env = {"THATCH_HOME": str(shared)}
    from thatch.daemon.client import DaemonClient

    client = DaemonClient(str(shared))
    try:
        thatch("daemon", "start", env=env)
        socket_path = client.located.socket_path
        os.chmod(os.path.dirname(socket_path), 0o755)
        os.chmod(socket_path, 0o666)
        refused = subprocess.run(
            [str(SYSTEM_PYTHON), "-c", PEER_PROBE, socket_path],
            user=65534,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert refused.returncode == 0, refused.stderr
        assert refused.stdout.strip() == "b''"  # connection closed without an answer
        assert client.running()  # the owner still gets answers
    finally:
        thatch("daemon", "stop", env=env, check=False)
        kill_daemon(client, 9)
