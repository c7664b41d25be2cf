"""The daemon's Unix socket server: one thread per connection, owner only."""

from __future__ import annotations

import logging
import os
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from typing import Any

from thatch import wire
from thatch.daemon.security import peer_allowed, peer_uid

log = logging.getLogger("thatch")

Handler = Callable[[dict[str, Any]], dict[str, Any]]
#: A line sent before the answer, or None (see :meth:`thatch.daemon.handlers.Handlers.notice`).
Notice = Callable[[dict[str, Any]], dict[str, Any] | None]


class DaemonServer(socketserver.ThreadingUnixStreamServer):
    """Answers one JSON-line request per connection with ``handle(request)``."""

    # Joined on close, so the answer to "stop" is sent before the process exits.
    daemon_threads = False
    block_on_close = True
    # Hooks connect in bursts (a tool batch, parallel sessions).
    request_queue_size = 64

    def __init__(
        self,
        socket_path: str,
        handle: Handler,
        after: Callable[[], None] = lambda: None,
        notice: Notice = lambda request: None,
    ) -> None:
        self.handle = handle
        self.after = after
        self.notice = notice
        self.owner = os.getuid()
        self.last_request = time.monotonic()
        self._busy = 0
        self._busy_lock = threading.Lock()
        # Created 0600 from the start: no moment where another user could connect.
        previous = os.umask(0o177)
        try:
            super().__init__(socket_path, _Connection)
        finally:
            os.umask(previous)
        os.chmod(socket_path, 0o600)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        peer = peer_uid(request)
        if peer_allowed(peer, self.owner):
            return True
        log.warning("refused a connection from uid %s", peer)
        return False

    def idle_for(self) -> float:
        """Seconds since the last request, or 0 while one is being answered."""
        with self._busy_lock:
            return 0.0 if self._busy else time.monotonic() - self.last_request

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._busy_lock:
            self._busy += 1
        try:
            return self.handle(request)
        finally:
            with self._busy_lock:
                self._busy -= 1
                self.last_request = time.monotonic()


class _Connection(socketserver.BaseRequestHandler):
    server: DaemonServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        # A client that connects and sends nothing must not hold a thread forever.
        sock.settimeout(30)
        try:
            request = wire.decode(wire.read_line(sock))
        except (OSError, wire.WireError) as exc:
            log.info("dropped a request: %s", exc)
            return
        self._send_notice(sock, request)
        try:
            answer = self.server.answer(request)
        except Exception as exc:
            log.exception("request %s failed", request.get("op"))
            answer = {"ok": False, "error": f"internal error: {exc}"}
        try:
            sock.sendall(wire.encode(answer))
        except OSError as exc:
            # The client gave up (its cap passed); it has spooled the event.
            log.info("client went away before the answer: %s", exc)
        finally:
            # Writes that need not delay the answer (shown memories, fire log).
            self.server.after()

    def _send_notice(self, sock: socket.socket, request: dict[str, Any]) -> None:
        """Tell the client at once that its answer will be late (it then waits longer)."""
        notice = self.server.notice(request)
        if notice is None:
            return
        try:
            sock.sendall(wire.encode(notice))
        except OSError as exc:
            # The request is answered all the same: the event must be taken.
            log.info("client went away before the warming notice: %s", exc)
