"""The daemon's socket server under load: bounded threads and memory, no client held forever."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from thatch import wire
from thatch.daemon.server import DaemonServer

Handle = Callable[[dict[str, Any]], dict[str, Any]]


@contextmanager
def serving(tmp_path: Path, handle: Handle, **options: Any) -> Iterator[DaemonServer]:
    server = DaemonServer(str(tmp_path / "d.sock"), handle, **options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


def connect(server: DaemonServer) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(server.server_address)
    return sock


def closed_by_server(sock: socket.socket, within: float, trickle: bytes) -> bool:
    """Send ``trickle`` a byte at a time, 0.1 s apart; whether the server hung up ``within``."""
    deadline = time.monotonic() + within
    for byte in trickle:
        if time.monotonic() > deadline:
            return False
        readable, _, _ = select.select([sock], [], [], 0.1)
        if readable:
            return sock.recv(1) == b""
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return True
    return False


def test_a_client_that_trickles_its_request_is_dropped_at_the_deadline(tmp_path: Path) -> None:
    handled: list[dict[str, Any]] = []

    def handle(request: dict[str, Any]) -> dict[str, Any]:
        handled.append(request)
        return {"ok": True}

    with serving(tmp_path, handle) as server:
        server.request_deadline = 1.0
        with connect(server) as sock:
            # Each byte well within any per-read timeout, the whole far past the deadline.
            assert closed_by_server(sock, within=20, trickle=b'{"op": "ping"' + b" " * 500)
        # A prompt client is served as before.
        assert wire.request(server.server_address, {"op": "ping"}, 30) == {"ok": True}
    assert handled == [{"op": "ping"}]


def test_clients_past_the_thread_limit_wait_their_turn_and_are_all_answered(
    tmp_path: Path,
) -> None:
    lock = threading.Lock()
    running = [0]
    most = [0]

    def handle(request: dict[str, Any]) -> dict[str, Any]:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return {"ok": True, "n": request["n"]}

    clients = 150
    answers: list[Any] = [None] * clients

    with serving(tmp_path, handle, max_connections=2) as server:

        def client(n: int) -> None:
            try:
                answers[n] = wire.request(server.server_address, {"n": n}, 60)
            except OSError as exc:
                answers[n] = exc

        threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    assert answers == [{"ok": True, "n": n} for n in range(clients)]
    assert most[0] <= 2


def send_in_background(sock: socket.socket, data: bytes) -> threading.Thread:
    thread = threading.Thread(target=sock.sendall, args=(data,))
    thread.start()
    return thread


def test_large_requests_are_read_in_turn(tmp_path: Path) -> None:
    order: list[str] = []

    def handle(request: dict[str, Any]) -> dict[str, Any]:
        order.append(request["name"])
        return {"ok": True}

    body = "x" * (3 << 20)
    with (
        serving(tmp_path, handle, max_large_reads=1) as server,
        connect(server) as first,
        connect(server) as second,
    ):
        # The first is read past the large size (its sending ends), and waits.
        head = wire.encode({"name": "first", "body": body}).rstrip(b"\n")
        send_in_background(first, head).join(30)
        # The second is read up to the large size, then not until the first is done.
        sending = send_in_background(second, wire.encode({"name": "second", "body": body}))
        time.sleep(0.5)
        assert order == []
        first.sendall(b"\n")
        with first.makefile("rb") as answer:
            assert wire.decode(answer.readline()) == {"ok": True}
        sending.join(30)
        with second.makefile("rb") as answer:
            assert wire.decode(answer.readline()) == {"ok": True}
    assert order == ["first", "second"]


def echo_session(request: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """A session opener whose sessions send back each line they get."""

    def run(sock: socket.socket, received: bytes) -> None:
        lines = wire.LineReader(sock, received=received)
        while True:
            try:
                line = lines.line()
            except (OSError, wire.WireError):
                return
            sock.sendall(line)

    return {"ok": True}, run


def test_a_session_outlives_the_deadline_and_holds_no_request_thread(tmp_path: Path) -> None:
    def handle(request: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    with serving(tmp_path, handle, open_session=echo_session, max_connections=1) as server:
        server.request_deadline = 0.5
        with connect(server) as session:
            session.sendall(wire.encode({"op": wire.MCP_OP}))
            reader = wire.LineReader(session)
            assert wire.decode(reader.line()) == {"ok": True}
            assert server.sessions == 1
            time.sleep(1.5)
            # The only request thread is free: the session does not hold it.
            assert wire.request(server.server_address, {"op": "ping"}, 30) == {"ok": True}
            session.sendall(b'{"still": "here"}\n')
            assert reader.line() == b'{"still": "here"}\n'
