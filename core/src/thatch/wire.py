"""The daemon's wire format, on the standard library only.

One request and one answer per connection, each a single line of UTF-8
JSON (a ``hook`` request may get a warming notice before its answer, and
``mcp`` keeps the connection open for a session, see below). Every request
carries ``protocol`` and the client's ``client`` version; every answer
carries ``ok`` and the daemon's ``daemon`` version.

Requests (``op``):

- ``hook``: a hook command's event. ``command`` (``reminder``,
  ``buffer-batch``, ``buffer-tool``, ``flush-tools``, ``flush-predictions``,
  ``hook``), ``harness`` and ``event`` (for ``thatch hook HARNESS EVENT``,
  else None), ``payload`` (the JSON object read from stdin), ``event_id``
  (unique per hook invocation, so a replayed spool file is taken once),
  ``received_at`` (epoch seconds), ``cwd``, ``env`` (the harnesses'
  variables, ``Harness.environment``, as the hook table lists them, see
  :mod:`thatch.hooktable`) and ``json`` (the ``--json`` flag). Answer:
  ``output``, the text to print.
  A hook whose answer the agent reads adds ``warming_notice: true``; a
  daemon still loading its model then sends ``{"ok": true, "warming":
  true}`` first, at once, so the hook knows to wait longer for the answer
  line that follows (the only request with two answer lines).
- ``tools``: answer ``tools``, a list of MCP tool descriptions.
- ``call``: ``tool``, ``arguments``, ``cwd``, ``env``. Answer ``result``
  (JSON data), ``text`` and ``is_error``.
- ``mcp``: opens an MCP session on this connection (what ``thatch mcp``
  relays). ``cwd`` and ``env`` (the variables of :data:`MCP_ENV` and the
  harnesses' own, from the hook table, that the harness set) say where the
  caller's project is and which harness's setup to check. Answer:
  ``notice``, the setup notice (empty when the setup is complete). The
  client sends nothing before that answer; from then on the connection
  carries MCP's JSON-RPC messages, one per line, both ways, until either
  side closes it.
- ``status``, ``stop``, ``ping``.

A failed request answers ``ok: false`` with ``error``; ``restart: true``
tells a newer client that this daemon is outdated and is exiting.
"""

from __future__ import annotations

import json

from thatch import socketguard, unicode_fix

# Not ``typing.TYPE_CHECKING``: importing typing costs every hook command ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

PROTOCOL = 1
#: Largest message either side accepts (a hook payload is capped below this).
MAX_MESSAGE = 16 * 1024 * 1024
#: Core's own variables ``thatch mcp`` forwards when it opens a session, besides
#: the harnesses' (``Harness.environment``, from the hook table): the harness
#: that started it (see :func:`thatch.setup.notice.harness_of`) and the user's home.
MCP_ENV = ("THATCH_HARNESS", "HOME")
#: The op that turns a connection into an MCP session.
MCP_OP = "mcp"


class WireError(Exception):
    """A message that is not one line of JSON object, or is too large."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as a JSON line of valid UTF-8 (non-ASCII kept as it is).

    A lone surrogate (half an emoji a JavaScript harness cut) cannot be
    UTF-8: it becomes U+FFFD, so the event still gets through.
    """
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = unicode_fix.scrub_text(text).encode("utf-8")
    return data + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """Parse one received line; raises :class:`WireError` on anything but a JSON object.

    The strings it holds can always be stored: bytes that are not UTF-8 and
    escaped lone surrogates (``"\\ud83c"``) come out as U+FFFD.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        text = line.decode("utf-8", "replace")
    try:
        message = json.loads(text)
    except ValueError as exc:
        raise WireError(f"not a JSON line: {exc}") from None
    except RecursionError:
        # Hooks refuse payloads this deep; anything else sending one gets a clear no.
        raise WireError("not a JSON line: nested too deeply") from None
    if unicode_fix.has_surrogate_escape(text):
        message = unicode_fix.scrub(message)
    if not isinstance(message, dict):
        raise WireError("a message must be a JSON object")
    return message


class LineReader:
    """The lines a socket receives, one at a time (what follows a newline is kept)."""

    def __init__(self, sock: Any, limit: int = MAX_MESSAGE, received: bytes = b"") -> None:
        self._sock = sock
        self._limit = limit
        #: ``received``: bytes read from the socket before, not yet a whole line.
        self._buffer = bytearray(received)

    def line(self) -> bytes:
        """The next line, newline included (timeouts propagate)."""
        searched = 0
        while True:
            newline = self._buffer.find(b"\n", searched)
            if newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                return line
            if len(self._buffer) > self._limit:
                raise WireError(f"message over {self._limit} bytes")
            searched = len(self._buffer)
            chunk = self._sock.recv(65536)
            if not chunk:
                raise WireError("connection closed before the end of the message")
            self._buffer += chunk

    def rest(self) -> bytes:
        """What was received after the last line returned; the reader holds nothing after."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        return rest


def request(
    socket_path: str,
    message: dict[str, Any] | bytes,
    timeout: float,
    on_warming: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """Send one request to the daemon and return its answer.

    ``message`` may be already encoded (:func:`encode`), as a hook's spooled
    request is. ``on_warming`` is called when the daemon says it is warming up (a
    request with ``warming_notice``); it returns how many seconds to wait
    for the answer from then on.

    Raises ``OSError`` (no daemon, refused, reset), ``TimeoutError`` and
    :class:`WireError`; callers decide what failing open means for them. A
    socket that may not be the user's daemon's is never sent a byte: that
    raises :class:`thatch.socketguard.UnsafeSocketError`, a ``PermissionError``.
    """
    with socketguard.connect(socket_path, timeout) as sock:
        sock.sendall(message if isinstance(message, bytes) else encode(message))
        lines = LineReader(sock)
        answer = decode(lines.line())
        if answer.get("warming") is True:
            if on_warming is not None:
                sock.settimeout(max(on_warming(), 0.001))
            answer = decode(lines.line())
        return answer
