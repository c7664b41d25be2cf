"""The daemon's wire format, on the standard library only.

One request and one answer per connection, each a single line of UTF-8
JSON. Every request carries ``protocol`` and the client's ``client``
version; every answer carries ``ok`` and the daemon's ``daemon`` version.

Requests (``op``):

- ``hook``: a hook command's event. ``command`` (``reminder``,
  ``buffer-batch``, ``buffer-tool``, ``flush-tools``, ``flush-predictions``,
  ``hook``), ``harness`` and ``event`` (for ``thatch hook HARNESS EVENT``,
  else None), ``payload`` (the JSON object read from stdin), ``event_id``
  (unique per hook invocation, so a replayed spool file is taken once),
  ``received_at`` (epoch seconds), ``cwd``, ``env`` (the harness variables)
  and ``json`` (the ``--json`` flag). Answer: ``output``, the text to print.
- ``tools``: answer ``tools``, a list of MCP tool descriptions.
- ``call``: ``tool``, ``arguments``, ``cwd``, ``env``. Answer ``result``
  (JSON data), ``text`` and ``is_error``.
- ``status``, ``stop``, ``ping``.

A failed request answers ``ok: false`` with ``error``; ``restart: true``
tells a newer client that this daemon is outdated and is exiting.
"""

from __future__ import annotations

import json

# Not ``typing.TYPE_CHECKING``: importing typing costs every hook command ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PROTOCOL = 1
#: Largest message either side accepts (a hook payload is capped below this).
MAX_MESSAGE = 16 * 1024 * 1024
#: Environment variables a hook or MCP call forwards to the daemon.
FORWARDED_ENV = ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "CURSOR_VERSION")


class WireError(Exception):
    """A message that is not one line of JSON object, or is too large."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as a JSON line (non-ASCII kept as UTF-8, surrogates escaped)."""
    return (
        json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        )
        + b"\n"
    )


def decode(line: bytes) -> dict[str, Any]:
    """Parse one received line; raises :class:`WireError` on anything but a JSON object."""
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise WireError(f"not a JSON line: {exc}") from None
    if not isinstance(message, dict):
        raise WireError("a message must be a JSON object")
    return message


def read_line(sock: Any, limit: int = MAX_MESSAGE) -> bytes:
    """Read up to and including the first newline from a socket (timeouts propagate)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[: newline + 1])
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise WireError(f"message over {limit} bytes")
    data = b"".join(chunks)
    if not data.endswith(b"\n"):
        raise WireError("connection closed before the end of the message")
    return data


def request(socket_path: str, message: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Send one request to the daemon and return its answer.

    Raises ``OSError`` (no daemon, refused, reset), ``TimeoutError`` and
    :class:`WireError`; callers decide what failing open means for them.
    """
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(socket_path)
        sock.sendall(encode(message))
        return decode(read_line(sock))
