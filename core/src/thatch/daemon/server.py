"""The daemon's Unix socket server: one thread per connection, owner only.

A connection carries one request and its answer, or, opened with ``op:
mcp``, an MCP session that lasts as long as the ``thatch mcp`` relaying it
(see :mod:`thatch.daemon.mcp_session`). Open sessions count as activity for
the idle exit; at most :data:`MAX_SESSIONS` are served at once. A stopping
daemon ends them, or joining their threads would wait for the harnesses:
first their reading side, which ends each session as a closed stdin does,
then it waits (up to :data:`SESSION_GRACE_SECONDS`) for the tool calls they
are running to finish before the runtime closes under them.

What many clients at once can cost is bounded:

- threads: at most :data:`MAX_CONNECTIONS` requests are served at once
  (sessions, once open, apart: they have their own limit). Further
  connections wait in the listen queue, which is deep enough for a burst
  of hooks, instead of being refused (a refused hook spools its event);
- memory: a request line is at most :data:`thatch.wire.MAX_MESSAGE` bytes,
  and only :data:`MAX_LARGE_READS` lines past :data:`LARGE_REQUEST` are
  read (and held, until answered) at once; the others wait at that size;
- time: a request line must arrive whole within
  :attr:`DaemonServer.request_deadline`, so a client that trickles it, or
  sends nothing, does not hold a thread for ever. A session, once open, has
  no deadline: it lasts as long as its harness.
"""

from __future__ import annotations

import contextlib
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
#: Serves an accepted session on the connection, given the bytes received after its opening line.
SessionRunner = Callable[[socket.socket, bytes], None]
#: The answer to ``op: mcp`` and the session's runner (None: refused); see Handlers.open_session.
SessionOpener = Callable[[dict[str, Any]], tuple[dict[str, Any], SessionRunner | None]]

#: MCP sessions served at once (one per harness session; each holds a thread).
MAX_SESSIONS = 64
#: How long a stopping daemon waits for the tool calls its sessions are running.
SESSION_GRACE_SECONDS = 5.0
#: Requests served at once (each holds a thread); more wait to be accepted.
MAX_CONNECTIONS = 32
#: How long a client has to send its whole request line (and later to take its answer).
REQUEST_DEADLINE_SECONDS = 30.0
#: A request line past this many bytes is large: see MAX_LARGE_READS.
LARGE_REQUEST = 1 << 20
#: Large request lines read at once; each may take wire.MAX_MESSAGE and more once parsed.
MAX_LARGE_READS = 2


class DaemonServer(socketserver.ThreadingUnixStreamServer):
    """Answers one JSON-line request per connection with ``handle(request)``."""

    # Joined on close, so the answer to "stop" is sent before the process exits.
    daemon_threads = False
    block_on_close = True
    # Hooks connect in bursts (a tool batch, parallel sessions); past the
    # queue a connection is refused at once, and its hook spools the event.
    request_queue_size = 256

    def __init__(
        self,
        socket_path: str,
        handle: Handler,
        after: Callable[[], None] = lambda: None,
        notice: Notice = lambda request: None,
        open_session: SessionOpener | None = None,
        max_sessions: int = MAX_SESSIONS,
        max_connections: int = MAX_CONNECTIONS,
        max_large_reads: int = MAX_LARGE_READS,
    ) -> None:
        self.handle = handle
        self.after = after
        self.notice = notice
        self.open_session = open_session
        self.max_sessions = max_sessions
        self.max_connections = max_connections
        #: Seconds a client has to send its whole request line.
        self.request_deadline = REQUEST_DEADLINE_SECONDS
        #: Taken by a request line that grows past LARGE_REQUEST, until it is answered.
        self.large_reads = threading.BoundedSemaphore(max_large_reads)
        self.owner = os.getuid()
        self.last_request = time.monotonic()
        self._busy = 0
        self._busy_lock = threading.Lock()
        #: Notified when a session ends (a stopping daemon waits for them).
        self._ended = threading.Condition(self._busy_lock)
        self._sessions: set[socket.socket] = set()
        #: The connections served now, sessions not included (at most max_connections).
        self._serving: set[socket.socket] = set()
        self._slot_freed = threading.Condition()
        self._stopping = False
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

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on a thread of its own once one is free (see the module docs)."""
        if not self._take_slot(request):
            self.shutdown_request(request)  # the daemon is stopping
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._free_slot(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._free_slot(request)

    def shutdown(self) -> None:
        # A wait for a free thread must not keep the serving loop from stopping.
        with self._slot_freed:
            self._stopping = True
            self._slot_freed.notify_all()
        super().shutdown()

    def _take_slot(self, sock: socket.socket) -> bool:
        """Wait until fewer than max_connections are served; False if the daemon stops first.

        The serving loop waits here, accepting nothing: the connections that
        come meanwhile wait in the listen queue.
        """
        with self._slot_freed:
            while len(self._serving) >= self.max_connections and not self._stopping:
                self._slot_freed.wait()
            if self._stopping:
                return False
            self._serving.add(sock)
            return True

    def _free_slot(self, sock: socket.socket) -> None:
        """The connection no longer counts as served (it ended, or became a session)."""
        with self._slot_freed:
            if sock in self._serving:
                self._serving.discard(sock)
                self._slot_freed.notify()

    def idle_for(self) -> float:
        """Seconds since the last request or session, or 0 while one is being served."""
        with self._busy_lock:
            if self._busy or self._sessions:
                return 0.0
            return time.monotonic() - self.last_request

    @property
    def sessions(self) -> int:
        """How many MCP sessions are open."""
        with self._busy_lock:
            return len(self._sessions)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._busy_lock:
            self._busy += 1
        try:
            return self.handle(request)
        finally:
            with self._busy_lock:
                self._busy -= 1
                self.last_request = time.monotonic()

    def serve_session(self, sock: socket.socket, request: dict[str, Any], received: bytes) -> None:
        """Answer ``op: mcp`` and, if accepted, serve the session until it ends."""
        with self._busy_lock:
            full = len(self._sessions) >= self.max_sessions
            admitted = self.open_session is not None and not full
            if admitted:
                self._sessions.add(sock)
        if not admitted:
            error = "this daemon serves no MCP sessions"
            if full:
                error = f"too many MCP sessions are open (at most {self.max_sessions})"
            _send(sock, {"ok": False, "error": error})
            return
        # Counted as a session from now on: it may last for hours.
        self._free_slot(sock)
        try:
            self._open_and_serve(sock, request, received)
        finally:
            with self._ended:
                self._sessions.discard(sock)
                self.last_request = time.monotonic()
                self._ended.notify_all()

    def _open_and_serve(
        self, sock: socket.socket, request: dict[str, Any], received: bytes
    ) -> None:
        assert self.open_session is not None
        try:
            answer, runner = self.open_session(request)
        except Exception as exc:
            log.exception("an MCP session could not be opened")
            answer, runner = {"ok": False, "error": f"internal error: {exc}"}, None
        if not _send(sock, answer) or runner is None:
            return
        # The session lasts as long as the harness's: no timeout from here on.
        sock.settimeout(None)
        try:
            runner(sock, received)
        except Exception:
            log.exception("an MCP session failed")

    def server_close(self) -> None:
        self._end_sessions()
        super().server_close()

    def _end_sessions(self, grace: float = SESSION_GRACE_SECONDS) -> None:
        """End the open sessions: no new requests, then, after ``grace``, the connections."""
        deadline = time.monotonic() + grace
        # Under the lock: a session's socket is closed only after it left the set.
        with self._ended:
            for sock in self._sessions:
                _shutdown(sock, socket.SHUT_RD)
            while self._sessions and (left := deadline - time.monotonic()) > 0:
                self._ended.wait(left)
            for sock in self._sessions:
                _shutdown(sock, socket.SHUT_RDWR)


def _send(sock: socket.socket, answer: dict[str, Any]) -> bool:
    try:
        sock.sendall(wire.encode(answer))
    except OSError as exc:
        log.info("client went away before the answer: %s", exc)
        return False
    return True


def _shutdown(sock: socket.socket, how: int) -> None:
    # OSError: the other side has closed it already.
    with contextlib.suppress(OSError):
        sock.shutdown(how)


class _Connection(socketserver.BaseRequestHandler):
    server: DaemonServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        reader = _RequestReader(sock, self.server.request_deadline, self.server.large_reads)
        try:
            self._serve(sock, reader)
        finally:
            reader.release()

    def _serve(self, sock: socket.socket, reader: _RequestReader) -> None:
        lines = wire.LineReader(reader)
        try:
            request = wire.decode(lines.line())
        except (OSError, wire.WireError) as exc:
            log.info("dropped a request: %s", exc)
            return
        # For the answer: a client that stopped reading is given up on too.
        sock.settimeout(self.server.request_deadline)
        if request.get("op") == wire.MCP_OP:
            reader.release()
            self.server.serve_session(sock, request, lines.rest())
            return
        self._send_notice(sock, request)
        try:
            answer = self.server.answer(request)
        except Exception as exc:
            log.exception("request %s failed", request.get("op"))
            answer = {"ok": False, "error": f"internal error: {exc}"}
        try:
            # A client that gave up (its cap passed) has spooled the event.
            _send(sock, answer)
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


class _RequestReader:
    """A connection's bytes until its request line is whole: by a deadline, large ones in turn.

    What :class:`thatch.wire.LineReader` reads from. Its ``recv`` raises
    ``TimeoutError`` once the deadline has passed, including while it waits
    for one of the server's large reads to come free.
    """

    def __init__(self, sock: socket.socket, seconds: float, large_reads: threading.Semaphore):
        self._sock = sock
        self._seconds = seconds
        self._deadline = time.monotonic() + seconds
        self._large_reads = large_reads
        self._received = 0
        self._large = False

    def recv(self, size: int) -> bytes:
        if self._received >= LARGE_REQUEST and not self._large:
            if not self._large_reads.acquire(timeout=max(self._left(), 0.0)):
                raise TimeoutError(
                    f"a request over {LARGE_REQUEST} bytes waited {self._seconds:g} s "
                    "for others as large to be read"
                )
            self._large = True
        left = self._left()
        if left <= 0:
            raise self._too_late()
        self._sock.settimeout(left)
        try:
            chunk = self._sock.recv(size)
        except TimeoutError:
            raise self._too_late() from None
        self._received += len(chunk)
        return chunk

    def release(self) -> None:
        """Let another large request be read (once this one's request is answered)."""
        if self._large:
            self._large = False
            self._large_reads.release()

    def _left(self) -> float:
        return self._deadline - time.monotonic()

    def _too_late(self) -> TimeoutError:
        return TimeoutError(f"the request line did not arrive whole within {self._seconds:g} s")
