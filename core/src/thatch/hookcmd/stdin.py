"""Read the harness's JSON payload from stdin without ever waiting past a deadline.

A harness may never close stdin, or may send garbage. Reading goes through
``select`` and ``os.read`` so a silent pipe costs at most the deadline, and a
complete JSON object followed by a short silence is taken without waiting
for end of file.

Reading (:func:`read_stdin`) and parsing (:func:`payload_of`) are two
steps, so the hook can stop the clock for a payload that has arrived (see
:mod:`thatch.hookcmd.command`). An event is made of whatever holds a JSON
object: a UTF-8 byte order mark is skipped, bytes that are not UTF-8 become
U+FFFD, and a number too long for Python's ``int`` (over 4,300 digits) is
kept as a string of its digits. A lone surrogate escape (``"\\ud83c"``) is
left to :func:`thatch.wire.encode`, which writes U+FFFD for it.
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
_BOM = b"\xef\xbb\xbf"
#: Deepest nesting a payload may have (harness payloads nest a dozen levels).
MAX_NESTING = 500


class Received:
    """What stdin held by the deadline: its bytes, whether it ended, or why none are kept."""

    __slots__ = ("complete", "data", "problem")

    def __init__(self, data: bytes, complete: bool, problem: str | None = None) -> None:
        self.data = data
        self.complete = complete
        self.problem = problem


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
    return payload_of(read_stdin(fd, deadline, limit))


def read_stdin(fd: int, deadline: float, limit: int = MAX_PAYLOAD) -> Received:
    """The bytes on ``fd`` until end of file, a whole object and a silence, or ``deadline``."""
    try:
        if os.isatty(fd):
            return Received(b"", True, "stdin is a terminal; pipe the harness's JSON payload to it")
    except OSError:
        pass
    return _read_bytes(fd, deadline, limit)


def payload_of(received: Received) -> Payload:
    """The payload in ``received``, or a :class:`Payload` saying why there is none."""
    if received.problem:
        return Payload(None, received.problem, len(received.data))
    payload = parse_payload(received.data)
    if payload.problem and not received.complete:
        payload.problem = (
            f"stdin was not closed within the time limit and held {payload.size} bytes "
            f"that are not a whole JSON object ({payload.problem})"
        )
    return payload


def parse_payload(raw: bytes) -> Payload:
    """``raw`` as a JSON object, or a :class:`Payload` saying what is wrong with it."""
    size = len(raw)
    if not raw.strip():
        return Payload(None, "empty stdin; expected the harness's JSON payload", size)
    try:
        data = _loads(_text(raw))
    except ValueError as exc:
        # A JSONDecodeError names a line and column, never the text itself.
        return Payload(None, f"stdin is not JSON ({exc})", size)
    except RecursionError:
        return Payload(None, "stdin is not JSON (nested too deeply)", size)
    if not isinstance(data, dict):
        kind = type(data).__name__
        return Payload(None, f"stdin holds a JSON {_json_kind(kind)}, expected an object", size)
    return Payload(data, None, size)


def _text(raw: bytes) -> str:
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        # A stray byte costs one replacement character, not the event.
        return raw.decode("utf-8", "replace")


def _loads(text: str) -> object:
    with _NestingLimit():
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise
        except ValueError:
            # Not a syntax error: a number over int's digit limit. Read again, keeping such
            # numbers as their digits (the C parser's fast path stays on the first try).
            return json.loads(text, parse_int=_int_or_digits)


class _NestingLimit:
    """At most :data:`MAX_NESTING` levels while parsing, whatever the stack below.

    The parser's depth counts against the interpreter's recursion limit, so a
    payload right under it here could be too deep for the daemon, which
    parses it inside a larger message on a deeper stack, and lost there.
    Refused here instead, with a log line, it is refused the same way every time.
    """

    def __enter__(self) -> None:
        import sys

        self._saved = sys.getrecursionlimit()
        sys.setrecursionlimit(_stack_depth() + MAX_NESTING)

    def __exit__(self, *exc: object) -> None:
        import sys

        sys.setrecursionlimit(self._saved)


def _stack_depth() -> int:
    import sys

    depth, frame = 1, sys._getframe()
    while frame.f_back is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def _int_or_digits(digits: str) -> int | str:
    try:
        return int(digits)
    except ValueError:
        return digits


def _read_bytes(fd: int, deadline: float, limit: int) -> Received:
    chunks: list[bytes] = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return Received(b"".join(chunks), False)
        try:
            ready, _, _ = select.select([fd], [], [], min(remaining, IDLE_SECONDS))
        except (OSError, ValueError):
            # stdin closed or not selectable: take what we have.
            return Received(b"".join(chunks), True)
        if not ready:
            if chunks and _whole_object(chunks):
                return Received(b"".join(chunks), True)
            continue
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            continue
        except OSError:
            return Received(b"".join(chunks), True)
        if not chunk:
            return Received(b"".join(chunks), True)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return Received(
                b"", False, f"payload over {limit} bytes dropped (the limit is {limit})"
            )


def _whole_object(chunks: list[bytes]) -> bool:
    # Parse only when the data could end an object: a silent pipe after "}".
    data = b"".join(chunks)
    if not data.rstrip().endswith(b"}"):
        return False
    return parse_payload(data).data is not None


def _json_kind(python_kind: str) -> str:
    return {
        "list": "array",
        "str": "string",
        "int": "number",
        "float": "number",
        "bool": "boolean",
        "NoneType": "null",
    }.get(python_kind, python_kind)
