"""No client talks to a socket another local user put where the daemon's used to be.

A deep ``THATCH_HOME`` makes the natural socket path too long to bind. The
socket then used to live in a predictable folder under the temporary
directory, so another user could make that folder first and listen there:
hooks sent them raw payloads and printed their answers into the agent's
context, and the real daemon could not start. Here that user is ``nobody``,
with a server that records every byte it receives.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from thatch import rundir, wire

from .conftest import THATCH, claude_payload, kill_daemon

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.getuid() != 0, reason="needs root to listen as another user"),
]

NOBODY = 65534

# Binds as root (the folder is nobody's), then becomes nobody before listening,
# so the kernel reports nobody as the listener; appends what it receives to a file.
IMPOSTOR = r"""
import os, socket, sys
path, record = sys.argv[1], sys.argv[2]
folder = os.path.dirname(path)
os.makedirs(folder, exist_ok=True)
os.chmod(folder, 0o755)
os.chown(folder, 65534, 65534)
server = socket.socket(socket.AF_UNIX)
server.bind(path)
os.chown(path, 65534, 65534)
out = open(record, "ab", buffering=0)
ANSWER = b'{"ok": true, "daemon": "9", "output": "HIJACKED", "notice": "HIJACKED"}\n'
os.setgid(65534)
os.setuid(65534)
server.listen(16)
print("listening", flush=True)
while True:
    connection, _ = server.accept()
    connection.settimeout(2)
    try:
        out.write(connection.recv(1 << 20))
        connection.sendall(ANSWER)
    except OSError:
        pass
    connection.close()
"""


class Impostor:
    """Another user's server at the socket path the daemon of ``home`` would once have used."""

    def __init__(self, home: Path, tmp: Path, record: Path) -> None:
        natural = os.path.join(rundir.absolute(str(home)), "run", "daemon.sock")
        digest = hashlib.sha256(natural.encode()).hexdigest()[:16]
        self.path = tmp / f"thatch-{os.getuid()}" / f"{digest}.sock"
        self.record = record
        self.process = subprocess.Popen(
            [sys.executable, "-c", IMPOSTOR, str(self.path), str(record)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "listening"

    def received(self) -> bytes:
        return self.record.read_bytes() if self.record.exists() else b""

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture
def long_home(tmp_path: Path) -> Path:
    home = tmp_path / ("deep-" * 18)
    home.mkdir()
    assert len(os.path.join(home, "run", "daemon.sock").encode()) > rundir.MAX_SOCKET_PATH
    return home


@pytest.fixture
def private_tmp() -> Iterator[Path]:
    """The temporary directory the clients and the daemon use (short, and not /tmp itself)."""
    folder = Path(tempfile.mkdtemp(prefix="th-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def impostor(long_home: Path, private_tmp: Path, tmp_path: Path) -> Iterator[Impostor]:
    made = Impostor(long_home, private_tmp, tmp_path / "received")
    yield made
    made.close()


def run(
    *args: str, env: dict[str, str], cwd: Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(THATCH), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


def test_no_client_sends_a_byte_to_another_users_socket(
    long_home: Path, private_tmp: Path, impostor: Impostor, tmp_path: Path
) -> None:
    env = {**os.environ, "THATCH_HOME": str(long_home), "TMPDIR": str(private_tmp)}
    quiet = {**env, "THATCH_NO_AUTOSTART": "1"}
    cwd = tmp_path
    tool = json.dumps(claude_payload("post_tool_use", cwd=str(cwd)))
    prompt = json.dumps(claude_payload("user_prompt_submit", cwd=str(cwd)))

    # No daemon yet: the hooks and the CLI find nothing of theirs to talk to.
    for command, stdin in (("buffer-tool", tool), ("flush-tools", prompt)):
        done = run(command, env=quiet, cwd=cwd, stdin=stdin)
        assert done.returncode == 0, done.stderr
        assert "HIJACKED" not in done.stdout
    status = run("daemon", "status", env=env, cwd=cwd)
    assert status.returncode == 3, status.stdout + status.stderr
    assert impostor.received() == b""

    # The real daemon starts all the same, in a folder the impostor could not predict.
    started = run("daemon", "start", env=env, cwd=cwd)
    from thatch.daemon.client import DaemonClient

    client = DaemonClient(str(long_home), environ=env)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert "daemon running" in started.stdout
        for command, stdin in (("buffer-tool", tool), ("flush-tools", prompt)):
            done = run(command, env=env, cwd=cwd, stdin=stdin)
            assert done.returncode == 0, done.stderr
            assert "HIJACKED" not in done.stdout
        status = run("daemon", "status", "--json", env=env, cwd=cwd)
        assert status.returncode == 0, status.stdout + status.stderr
        assert json.loads(status.stdout)["running"] is True
        search = run("search", "anything", env=env, cwd=cwd)
        assert search.returncode == 0, search.stderr
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}},
        }
        mcp = run("mcp", env=env, cwd=cwd, stdin=wire.encode(initialize).decode())
        assert mcp.returncode == 0, mcp.stderr
        assert json.loads(mcp.stdout.splitlines()[0])["id"] == 1
        assert "HIJACKED" not in mcp.stderr
        assert impostor.received() == b""
    finally:
        run("daemon", "stop", env=env, cwd=cwd)
        kill_daemon(client, 9)
    assert impostor.received() == b""
