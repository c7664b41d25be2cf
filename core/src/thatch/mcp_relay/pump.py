"""Copying one MCP session between stdin/stdout and the daemon, across reconnections.

The main thread reads the client's messages from stdin, one per line, and
sends them to the daemon; a thread per connection copies the daemon's lines
to stdout. Lines are passed on unchanged; each is parsed only to follow the
session:

- the client's ``initialize`` request, once the daemon has answered it, and
  its ``notifications/initialized`` are remembered: a new connection (the
  daemon was restarted, stopped, or replaced by a newer one) starts a new
  server session, which is first given both again. The replayed request
  carries an id of the relay's own, and its answer is swallowed, so the
  client sees one session throughout;
- requests the daemon has not answered yet are counted per connection.
  When a connection ends, each of them gets a JSON-RPC error at once, so
  the client never waits for an answer that cannot come (the request may
  have run: it is not sent again).

A connection is only made again when the client sends something: after
``thatch daemon stop`` the daemon stays stopped until it is needed.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading

from thatch import wire
from thatch.mcp_relay.connect import Unavailable

# Not typing.TYPE_CHECKING: this start-up path does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, BinaryIO

    from thatch.mcp_relay.connect import Session

#: JSON-RPC's "server error" code, for requests whose answer was lost.
LOST_ANSWER = -32000
#: Largest line either side passes on (MCP sets no limit; this one guards memory).
MAX_LINE = 1 << 30
#: How long the daemon may take to send its last answers once stdin has closed.
DRAIN_SECONDS = 5.0
#: The prefix of the ids the relay gives the ``initialize`` requests it replays.
REPLAY_ID = "thatch-relay-replay-"


class _Output:
    """stdout as whole lines: the connection's thread and lost-answer errors share it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.closed = False

    def write(self, data: bytes) -> bool:
        """Write ``data`` whole; False once the client stopped reading."""
        with self.lock:
            if self.closed:
                return False
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self.fd, view) :]
            except OSError:
                self.closed = True
                return False
            return True


class Link:
    """One connection carrying the session, and the requests sent on it still unanswered."""

    def __init__(self, session: Session) -> None:
        self.sock = session.sock
        self.rest = session.rest
        self.lock = threading.Lock()
        self.pending: set[Any] = set()
        #: Ids of replayed requests whose answers the client must not see.
        self.swallow: set[Any] = set()
        self.alive = True
        self.reader: threading.Thread | None = None

    def expect(self, ids: Iterable[Any]) -> bool:
        """Count ``ids`` as sent here; False if the connection has ended already."""
        with self.lock:
            if not self.alive:
                return False
            self.pending.update(ids)
            return True

    def answered(self, key: Any) -> None:
        with self.lock:
            self.pending.discard(key)

    def take_back(self, ids: Iterable[Any]) -> bool:
        """Uncount ``ids`` whose line could not be sent; False if some were failed already."""
        with self.lock:
            wanted = set(ids)
            still = wanted & self.pending
            self.pending -= wanted
            return still == wanted

    def end(self) -> list[Any]:
        """Mark the connection ended; the requests it leaves unanswered."""
        with self.lock:
            self.alive = False
            lost = sorted(self.pending, key=repr)
            self.pending.clear()
            return lost

    def shut(self) -> None:
        """End the connection both ways; its reader sees the end and closes the socket.

        Only the reader closes it: a descriptor closed under a blocked
        ``recv`` could be reused by the next connection and read from there.
        """
        with contextlib.suppress(OSError):  # ended by the daemon already
            self.sock.shutdown(socket.SHUT_RDWR)


class Relay:
    """One client's session, carried by one connection after another."""

    def __init__(
        self,
        reopen: Callable[[], Session],
        note: Callable[[str], None],
        stdin: BinaryIO | None = None,
        stdout_fd: int = 1,
    ) -> None:
        self._reopen = reopen
        self._note = note
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._output = _Output(stdout_fd)
        self._link: Link | None = None
        #: The client's ``initialize`` request, and whether a daemon has answered it.
        self._initialize: dict[str, Any] | None = None
        self._established = False
        #: Its ``notifications/initialized`` line, once sent.
        self._initialized: bytes | None = None
        self._replays = 0

    def run(self, first: Session) -> None:
        """Relay until stdin closes or the client stops reading stdout."""
        self._attach(Link(first))
        while not self._output.closed:
            line = self._stdin.readline()
            if not line:
                break
            self._forward(line)
        self._finish()

    # -- client → daemon ---------------------------------------------------------
    def _forward(self, line: bytes) -> None:
        messages = _messages(line)
        ids = [m["id"] for m in messages if _is_request(m) and _hashable(m["id"])]
        # Answers to the server's own requests (roots, sampling...) belong to the
        # server session that asked: never to the next connection's.
        answers = bool(messages) and all(_is_response(m) for m in messages)
        if answers and (self._link is None or not self._link.alive):
            return
        initialize = next((m for m in messages if m.get("method") == "initialize"), None)
        if initialize is not None:
            self._initialize, self._established = initialize, False
        for _ in (1, 2):
            link = self._current()
            if link is None:
                break
            if not link.expect(ids):
                continue  # it ended between the check and now: nothing was sent
            try:
                link.sock.sendall(line)
            except OSError:
                if not link.take_back(ids):
                    return  # the connection's end answered them with errors already
                self._drop(link)
                if answers:
                    return
                continue  # never received: safe to send on the next connection
            if any(m.get("method") == "notifications/initialized" for m in messages):
                self._initialized = line
            return
        self._lose(ids, "thatch's daemon could not be reached; see thatch's log")

    def _current(self) -> Link | None:
        """The live connection, made again (and the session replayed) when the last one ended."""
        link = self._link
        if link is not None and link.alive:
            return link
        try:
            session = self._reopen()
        except Unavailable as exc:
            self._note(f"the session's daemon is gone and none answers again ({exc})")
            return None
        link = Link(session)
        replay = b""
        if self._initialize is not None and self._established:
            self._replays += 1
            request = {**self._initialize, "id": f"{REPLAY_ID}{self._replays}"}
            link.swallow.add(request["id"])
            replay = wire.encode(request) + (self._initialized or b"")
        self._attach(link)
        if replay:
            try:
                link.sock.sendall(replay)
            except OSError:
                self._drop(link)  # the caller finds it ended and tries once more
                return link
        self._note("the daemon's connection ended; reconnected and resumed the session")
        return link

    def _attach(self, link: Link) -> None:
        self._link = link
        link.reader = threading.Thread(
            target=self._copy_answers, args=(link,), name="thatch-mcp-relay", daemon=True
        )
        link.reader.start()

    # -- daemon → client ---------------------------------------------------------
    def _copy_answers(self, link: Link) -> None:
        lines = wire.LineReader(link.sock, limit=MAX_LINE, received=link.rest)
        try:
            while self._deliver(link, lines.line()):
                pass
        except (OSError, wire.WireError):
            pass  # the connection ended: below, its unanswered requests are failed
        finally:
            self._drop(link)
            link.sock.close()

    def _drop(self, link: Link) -> None:
        """End ``link`` (again: a no-op); its unanswered requests get their errors now."""
        lost = link.end()
        link.shut()
        self._lose(lost, "thatch's daemon stopped before answering; call again")

    def _deliver(self, link: Link, line: bytes) -> bool:
        """Pass one of the daemon's lines on, unless it answers a replay; False: stop."""
        messages = _messages(line)
        swallowed = False
        for message in messages:
            if not _is_response(message) or not _hashable(message["id"]):
                continue
            key = message["id"]
            if key in link.swallow:
                link.swallow.discard(key)
                swallowed = True
                if "error" in message:
                    self._note(f"the daemon refused the replayed initialize: {message['error']}")
                continue
            initialize = self._initialize
            if initialize is not None and initialize.get("id") == key and "result" in message:
                self._established = True
            link.answered(key)
        if swallowed and len(messages) == 1:
            return True
        return self._output.write(line)

    # -- endings ------------------------------------------------------------------
    def _lose(self, ids: Iterable[Any], why: str) -> None:
        """Answer each of ``ids`` with an error: their answers will never come."""
        for key in ids:
            error = {"code": LOST_ANSWER, "message": why}
            self._output.write(wire.encode({"jsonrpc": "2.0", "id": key, "error": error}))

    def _finish(self) -> None:
        """stdin closed: let the daemon end the session and send what it still owes."""
        link = self._link
        if link is None:
            return
        with contextlib.suppress(OSError):  # ended by the daemon already
            link.sock.shutdown(socket.SHUT_WR)
        if link.reader is not None:
            link.reader.join(DRAIN_SECONDS)


def _messages(line: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one line (a batch is a list); none if it is not JSON."""
    try:
        data = json.loads(line)
    except ValueError:
        return []
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        return [item for item in data if isinstance(item, dict)]
    return []


def _is_request(message: dict[str, Any]) -> bool:
    return "method" in message and message.get("id") is not None


def _is_response(message: dict[str, Any]) -> bool:
    return (
        "method" not in message
        and message.get("id") is not None
        and ("result" in message or "error" in message)
    )


def _hashable(key: Any) -> bool:
    # JSON-RPC ids are strings or numbers; anything else cannot be followed.
    return isinstance(key, str | int | float) and not isinstance(key, bool)
