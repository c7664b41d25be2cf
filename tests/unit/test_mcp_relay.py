"""``thatch mcp``'s relay against stand-in daemon connections: copying, resuming, lost answers.

Each connection the relay opens is a socket pair whose daemon end the test
holds; the harness's stdin and stdout are socket pairs too, so every read
has a timeout and a broken relay fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_daemon import FakeDaemon, write_hook_table
from thatch import rundir, wire
from thatch.hookcmd import autostart
from thatch.mcp_relay.connect import Opener, Session, Unavailable
from thatch.mcp_relay.pump import LOST_ANSWER, REPLAY_ID, Relay

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def request(key: Any, method: str = "tools/list") -> bytes:
    return line({"jsonrpc": "2.0", "id": key, "method": method})


def answer(key: Any) -> bytes:
    return line({"jsonrpc": "2.0", "id": key, "result": {"for": key}})


class End:
    """One side of a socket pair, read a line at a time (10 s at most)."""

    def __init__(self, sock: socket.socket) -> None:
        sock.settimeout(10)
        self.sock = sock
        self.lines = wire.LineReader(sock)

    def read(self) -> bytes:
        return self.lines.line()

    def read_json(self) -> dict[str, Any]:
        return json.loads(self.read())

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def closed(self) -> bool:
        """Whether the other side has closed (nothing more arrives)."""
        try:
            self.read()
        except wire.WireError:
            return True
        return False


class Daemons:
    """Stand-in connections: each ``open`` hands the relay a new one, or fails with ``down``."""

    def __init__(self) -> None:
        self.ends: queue.Queue[End] = queue.Queue()
        self.opened = 0
        self.down: str | None = None
        self.daemon_ends: list[socket.socket] = []
        self.relay_ends: list[socket.socket] = []

    def open(self) -> Session:
        if self.down is not None:
            raise Unavailable(self.down)
        relay_end, daemon_end = socket.socketpair()
        self.daemon_ends.append(daemon_end)
        self.relay_ends.append(relay_end)
        self.opened += 1
        self.ends.put(End(daemon_end))
        return Session(relay_end, b"", "")

    def next(self) -> End:
        return self.ends.get(timeout=10)


class Harness:
    """The relay running in a thread, with the harness's side of its stdin and stdout."""

    def __init__(self, daemons: Daemons) -> None:
        self.daemons = daemons
        self.notes: list[str] = []
        stdin_ours, stdin_theirs = socket.socketpair()
        stdout_ours, stdout_theirs = socket.socketpair()
        self._sockets = [stdin_ours, stdin_theirs, stdout_ours, stdout_theirs]
        self.stdin = stdin_ours
        self.stdout = End(stdout_ours)
        self._stdin_file = stdin_theirs.makefile("rb")
        self.relay = Relay(
            daemons.open,
            self.notes.append,
            stdin=self._stdin_file,
            stdout_fd=stdout_theirs.fileno(),
        )
        self.thread = threading.Thread(target=self.relay.run, args=(daemons.open(),))
        self.thread.start()
        self.daemon = daemons.next()

    def send(self, data: bytes) -> None:
        self.stdin.sendall(data)

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError):  # closed already
            self.stdin.shutdown(socket.SHUT_WR)

    def end_the_connection(self) -> None:
        """The daemon closes its end; returns once the relay has seen it (10 s at most).

        Without the wait, the next request could race the relay's reader:
        sent on the dying connection, it would be failed as "stopped before
        answering" rather than as unreachable.
        """
        self.daemon.sock.close()
        relay_end = self.daemons.relay_ends[-1]
        deadline = time.monotonic() + 10
        while relay_end.fileno() != -1:  # the reader closes it once it has dropped the link
            assert time.monotonic() < deadline, "the relay did not notice the ended connection"
            time.sleep(0.005)

    def initialize(self) -> None:
        """The handshake, answered by the current connection."""
        self.send(line(INITIALIZE))
        assert self.daemon.read_json() == INITIALIZE
        self.daemon.send(answer(1))
        assert self.stdout.read_json()["id"] == 1
        self.send(line(INITIALIZED))
        assert self.daemon.read_json() == INITIALIZED

    def close(self) -> None:
        # The daemons first, so the relay need not wait for them to finish.
        for sock in self.daemons.daemon_ends:
            sock.close()
        self.close_stdin()
        self.thread.join(10)
        assert not self.thread.is_alive(), "the relay did not end when stdin closed"
        self._stdin_file.close()
        for sock in [*self._sockets, *self.daemons.relay_ends]:
            sock.close()


@pytest.fixture
def daemons() -> Daemons:
    return Daemons()


@pytest.fixture
def harness(daemons: Daemons) -> Iterator[Harness]:
    made = Harness(daemons)
    yield made
    made.close()


def test_lines_pass_both_ways_unchanged(harness: Harness) -> None:
    sent = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": "\xc3\xa9"}}\n'
    harness.send(sent)
    assert harness.daemon.read() == sent
    notification = b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n'
    harness.daemon.send(notification + answer(1))
    assert harness.stdout.read() == notification
    assert harness.stdout.read() == answer(1)
    # Not JSON: passed on all the same (the server answers it with its parse error).
    harness.send(b"not json\n")
    assert harness.daemon.read() == b"not json\n"


def test_a_lost_connection_fails_its_open_requests_and_the_next_one_resumes(
    harness: Harness, daemons: Daemons
) -> None:
    harness.initialize()
    harness.send(request(2, "tools/call"))
    assert harness.daemon.read_json()["id"] == 2
    harness.daemon.sock.close()  # the daemon stops with the call unanswered
    lost = harness.stdout.read_json()
    assert lost["id"] == 2
    assert lost["error"]["code"] == LOST_ANSWER
    assert daemons.opened == 1  # not again until the client sends something

    harness.send(request(3))
    fresh = daemons.next()
    replayed = fresh.read_json()
    assert replayed == {**INITIALIZE, "id": f"{REPLAY_ID}1"}
    assert fresh.read_json() == INITIALIZED
    # The call whose answer was lost is not sent again: it may have run.
    assert fresh.read_json()["id"] == 3
    fresh.send(answer(replayed["id"]) + answer(3))
    # The replayed handshake's answer is the relay's; the client sees its own answer only.
    assert harness.stdout.read_json() == {"jsonrpc": "2.0", "id": 3, "result": {"for": 3}}
    assert harness.notes == ["the daemon's connection ended; reconnected and resumed the session"]


def test_a_handshake_never_answered_is_not_replayed(harness: Harness, daemons: Daemons) -> None:
    harness.send(line(INITIALIZE))
    assert harness.daemon.read_json()["id"] == 1
    harness.daemon.sock.close()
    assert harness.stdout.read_json()["error"]["code"] == LOST_ANSWER
    # The client tries again: its own request goes to the new connection, alone.
    harness.send(line({**INITIALIZE, "id": 2}))
    fresh = daemons.next()
    assert fresh.read_json() == {**INITIALIZE, "id": 2}
    fresh.send(answer(2))
    assert harness.stdout.read_json()["id"] == 2


def test_requests_while_no_daemon_answers_get_errors_until_one_does(
    harness: Harness, daemons: Daemons
) -> None:
    harness.initialize()
    harness.end_the_connection()
    daemons.down = "THATCH_NO_AUTOSTART is set"
    harness.send(request(4))
    failed = harness.stdout.read_json()
    assert failed["id"] == 4
    assert failed["error"]["code"] == LOST_ANSWER
    assert "could not be reached" in failed["error"]["message"]
    assert "THATCH_NO_AUTOSTART is set" in harness.notes[-1]

    daemons.down = None
    harness.send(request(5))
    fresh = daemons.next()
    assert fresh.read_json()["id"] == f"{REPLAY_ID}1"
    assert fresh.read_json() == INITIALIZED
    assert fresh.read_json()["id"] == 5


def test_answers_to_a_gone_session_are_dropped_without_reconnecting(
    harness: Harness, daemons: Daemons
) -> None:
    harness.initialize()
    harness.daemon.send(request("srv-1", "roots/list"))
    assert harness.stdout.read_json()["id"] == "srv-1"
    harness.daemon.sock.close()
    harness.send(answer("srv-1"))  # the client answers the ended session's question
    harness.send(request(6))
    fresh = daemons.next()
    assert fresh.read_json()["id"] == f"{REPLAY_ID}1"
    assert fresh.read_json() == INITIALIZED
    assert fresh.read_json()["id"] == 6
    assert daemons.opened == 2


def test_closing_stdin_lets_the_daemon_send_its_last_answers(harness: Harness) -> None:
    harness.send(request(7))
    assert harness.daemon.read_json()["id"] == 7
    harness.close_stdin()
    assert harness.daemon.closed()  # the session ends, as on a closed stdin
    harness.daemon.send(answer(7))
    harness.daemon.sock.close()
    assert harness.stdout.read_json()["id"] == 7
    harness.thread.join(10)
    assert not harness.thread.is_alive()


# -- opening sessions ---------------------------------------------------------------


def opener(home: Path, environ: dict[str, str] | None = None) -> Opener:
    env = {"THATCH_HOME": str(home), **(environ or {})}
    return Opener(rundir.locate(env), env, None, str(home))


def test_the_opening_names_the_callers_folder_and_harness(home: Path) -> None:
    write_hook_table(home)  # as after `thatch setup`: the harnesses' variables are known
    made = opener(home, {"CLAUDE_PROJECT_DIR": "/p", "THATCH_HARNESS": "claude", "PATH": "/b"})
    assert made.message()["op"] == "mcp"
    assert made.message()["cwd"] == str(home)
    assert made.message()["env"] == {"CLAUDE_PROJECT_DIR": "/p", "THATCH_HARNESS": "claude"}


def test_without_a_hook_table_the_opening_forwards_cores_variables_alone(home: Path) -> None:
    made = opener(home, {"CLAUDE_PROJECT_DIR": "/p", "THATCH_HARNESS": "claude", "HOME": "/u"})
    assert made.message()["env"] == {"THATCH_HARNESS": "claude", "HOME": "/u"}


def test_an_outdated_daemon_is_waited_for_and_the_next_one_serves(home: Path) -> None:
    made = opener(home)
    answers = iter(
        [
            {"ok": False, "restart": True, "error": "daemon 0.0.1 is outdated"},
            {"ok": True, "notice": "thatch: the setup is incomplete"},
        ]
    )
    fake = FakeDaemon(made.located.socket_path, lambda request: next(answers))
    try:
        session = made.open()
        session.sock.close()
    finally:
        fake.close()
    assert [r["op"] for r in fake.requests] == ["mcp", "mcp"]
    assert session.notice == "thatch: the setup is incomplete"


def test_a_refused_session_is_unavailable_with_the_daemons_reason(home: Path) -> None:
    made = opener(home)
    fake = FakeDaemon(
        made.located.socket_path,
        lambda request: {"ok": False, "error": "too many MCP sessions are open (at most 64)"},
    )
    try:
        with pytest.raises(Unavailable, match="too many MCP sessions"):
            made.open()
    finally:
        fake.close()


def test_no_daemon_and_no_autostart_is_unavailable_at_once(home: Path) -> None:
    with pytest.raises(Unavailable, match="THATCH_NO_AUTOSTART"):
        opener(home, {"THATCH_NO_AUTOSTART": "1"}).open()


def test_a_daemon_that_fails_to_start_is_unavailable(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A daemon that exits at once with an error, as one with a broken config would.
    monkeypatch.setattr(
        autostart,
        "daemon_command",
        lambda replacing=False: [sys.executable, "-c", "raise SystemExit(3)"],
    )
    with pytest.raises(Unavailable, match="exited with status 3"):
        opener(home).open()
