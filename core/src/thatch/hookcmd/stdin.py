"""Read the harness's JSON payload from stdin without ever waiting past a deadline.

A harness may never close stdin, or may send garbage. Reading goes through
``select`` and ``os.read`` so a silent pipe costs at most the deadline, and a
complete JSON object followed by a short silence is taken without waiting
for end of file.
"""

from __future__ import annotations

import json
import os
import select
import time

#: Largest payload taken; a larger one is dropped (the wire limit is 16 MiB).
MAX_PAYLOAD = 8 * 1024 * 1024
#: Silence after a complete-looking object before it is taken without end of file.
IDLE_SECONDS = 0.02
_CHUNK = 256 * 1024


class Payload:
    """The parsed payload, or why there is none (``problem`` never quotes the payload)."""

    __slots__ = ("data", "problem", "size")

    def __init__(
        self, data: dict[str, object] | None, problem: str | None = None, size: int = 0
    ) -> None:
        self.data = data
        self.problem = problem
        self.size = size


def read_payload(fd: int, deadline: float, limit: int = MAX_PAYLOAD) -> Payload:
    """Read one JSON object from ``fd`` until end of file or ``deadline`` (monotonic)."""
    try:
        if os.isatty(fd):
            return Payload(None, "stdin is a terminal; pipe the harness's JSON payload to it")
    except OSError:
        pass
    raw, complete, problem = _read_bytes(fd, deadline, limit)
    if problem:
        return Payload(None, problem, len(raw))
    payload = parse_payload(raw)
    if payload.problem and not complete:
        payload.problem = (
            f"stdin was not closed within the time limit and held {len(raw)} bytes "
            f"that are not a whole JSON object ({payload.problem})"
        )
    return payload


def parse_payload(raw: bytes) -> Payload:
    """``raw`` as a JSON object, or a :class:`Payload` saying what is wrong with it."""
    size = len(raw)
    if not raw.strip():
        return Payload(None, "empty stdin; expected the harness's JSON payload", size)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Payload(None, f"stdin is not UTF-8 (bad byte at offset {exc.start})", size)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        # A JSONDecodeError names a line and column, never the text itself.
        reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        return Payload(None, f"stdin is not JSON ({reason})", size)
    if not isinstance(data, dict):
        kind = type(data).__name__
        return Payload(None, f"stdin holds a JSON {_json_kind(kind)}, expected an object", size)
    return Payload(data, None, size)


def _read_bytes(fd: int, deadline: float, limit: int) -> tuple[bytes, bool, str | None]:
    """(data, reached end of file, problem)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return b"".join(chunks), False, None
        try:
            ready, _, _ = select.select([fd], [], [], min(remaining, IDLE_SECONDS))
        except (OSError, ValueError):
            # stdin closed or not selectable: take what we have.
            return b"".join(chunks), True, None
        if not ready:
            if chunks and _whole_object(chunks):
                return b"".join(chunks), True, None
            continue
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            continue
        except OSError:
            return b"".join(chunks), True, None
        if not chunk:
            return b"".join(chunks), True, None
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"", False, f"payload over {limit} bytes dropped (the limit is {limit})"


def _whole_object(chunks: list[bytes]) -> bool:
    # Parse only when the data could end an object: a silent pipe after "}".
    data = b"".join(chunks)
    if not data.rstrip().endswith(b"}"):
        return False
    try:
        return isinstance(json.loads(data), dict)
    except (ValueError, RecursionError):
        return False


def _json_kind(python_kind: str) -> str:
    return {
        "list": "array",
        "str": "string",
        "int": "number",
        "float": "number",
        "bool": "boolean",
        "NoneType": "null",
    }.get(python_kind, python_kind)
