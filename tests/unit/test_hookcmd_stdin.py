"""Reading the payload: a cap on size and time, and one clear problem for bad input."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from thatch import wire
from thatch.hookcmd.stdin import MAX_PAYLOAD, parse_payload, read_payload


class Pipe:
    """Both ends of a pipe, each closed once (a closed fd number may be reused)."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        self._open = {self.read_end, self.write_end}

    def write(self, data: bytes) -> None:
        os.write(self.write_end, data)

    def close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            os.close(fd)

    def close_all(self) -> None:
        for fd in list(self._open):
            self.close(fd)


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    opened = Pipe()
    yield opened
    opened.close_all()


def soon(seconds: float = 2.0) -> float:
    return time.monotonic() + seconds


def fd_of_file(tmp_path: Path, data: bytes) -> int:
    path = tmp_path / "stdin"
    path.write_bytes(data)
    return os.open(path, os.O_RDONLY)


def test_an_object_is_read_to_the_end(pipe: Pipe) -> None:
    pipe.write(b'{"session_id": "s", "prompt": "caf\xc3\xa9"}\n')
    pipe.close(pipe.write_end)
    payload = read_payload(pipe.read_end, soon())
    assert payload.problem is None
    assert payload.data == {"session_id": "s", "prompt": "café"}


def test_a_payload_written_in_pieces_is_joined(pipe: Pipe) -> None:
    body = json.dumps({"tool_calls": [{"n": index} for index in range(50)]}).encode()

    def write() -> None:
        for start in range(0, len(body), 100):
            pipe.write(body[start : start + 100])
        pipe.close(pipe.write_end)

    writer = threading.Thread(target=write)
    writer.start()
    payload = read_payload(pipe.read_end, soon())
    writer.join()
    assert payload.data == json.loads(body)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"", "empty"),
        (b"  \n\t ", "empty"),
        (b"\xff\xfe{}", "not JSON"),
        (b"not json", "not JSON"),
        (b'{"a": 1', "not JSON"),
        (b"[1, 2]", "JSON array"),
        (b"42", "JSON number"),
        (b'"text"', "JSON string"),
        (b"null", "JSON null"),
        (b"[" * 100_000 + b"]" * 100_000, "JSON"),
    ],
)
def test_bad_input_names_its_problem(tmp_path: Path, data: bytes, words: str) -> None:
    fd = fd_of_file(tmp_path, data)
    try:
        payload = read_payload(fd, soon())
    finally:
        os.close(fd)
    assert payload.data is None
    assert payload.problem is not None
    assert words in payload.problem


@pytest.mark.parametrize(
    ("raw", "data"),
    [
        pytest.param(b'\xef\xbb\xbf{"a": 1}', {"a": 1}, id="byte-order-mark"),
        pytest.param(b'{"a": "caf\xe9 \xff!"}', {"a": "caf\ufffd \ufffd!"}, id="not-utf8"),
        pytest.param(b'{"a": "\\ud83c"}', {"a": "\ud83c"}, id="lone-surrogate"),
        pytest.param(
            b'{"a": ' + b"7" * 5000 + b', "b": 12}', {"a": "7" * 5000, "b": 12}, id="5000-digits"
        ),
    ],
)
def test_what_json_alone_refuses_is_still_an_event(raw: bytes, data: dict[str, object]) -> None:
    payload = parse_payload(raw)
    assert payload.problem is None
    assert payload.data == data


def test_a_lone_surrogate_is_written_as_a_replacement_character() -> None:
    # The hook leaves it to the wire, which both the socket and the spool file go through.
    payload = parse_payload(b'{"prompt": "half \\ud83c"}')
    assert payload.data is not None
    assert wire.decode(wire.encode(payload.data)) == {"prompt": "half \ufffd"}


def test_problems_never_quote_the_payload() -> None:
    secret = "sk-live-0123456789abcdef"
    for raw in (f'{{"token": "{secret}"', f'["{secret}"]', f"{secret}"):
        problem = parse_payload(raw.encode()).problem
        assert problem is not None
        assert secret not in problem


def test_a_payload_over_the_limit_is_dropped(tmp_path: Path) -> None:
    body = b'{"x": "' + b"a" * (10 * 1024 * 1024) + b'"}'
    fd = fd_of_file(tmp_path, body)
    try:
        payload = read_payload(fd, soon())
    finally:
        os.close(fd)
    assert payload.data is None
    assert payload.problem is not None
    assert str(MAX_PAYLOAD) in payload.problem


def test_a_large_payload_streamed_through_a_pipe_is_dropped(pipe: Pipe) -> None:
    def write() -> None:
        # The reader stops early and closes its end: a broken pipe is expected.
        with contextlib.suppress(BrokenPipeError):
            pipe.write(b'{"x": "' + b"a" * (10 * 1024 * 1024) + b'"}')

    writer = threading.Thread(target=write)
    writer.start()
    payload = read_payload(pipe.read_end, soon(10))
    pipe.close(pipe.read_end)
    writer.join()
    assert payload.data is None
    assert payload.problem is not None
    assert "dropped" in payload.problem


def test_a_payload_just_under_the_limit_is_taken(tmp_path: Path) -> None:
    body = b'{"x": "' + b"a" * 1000 + b'"}'
    fd = fd_of_file(tmp_path, body)
    try:
        payload = read_payload(fd, soon(), limit=len(body))
    finally:
        os.close(fd)
    assert payload.data == {"x": "a" * 1000}


def test_a_complete_object_on_a_pipe_never_closed_is_taken(pipe: Pipe) -> None:
    pipe.write(b'{"session_id": "s"}\n')
    # The write end stays open, as with a harness that never closes stdin.
    payload = read_payload(pipe.read_end, soon(30))
    assert payload.data == {"session_id": "s"}


def test_half_an_object_on_a_pipe_never_closed_stops_at_the_deadline(
    pipe: Pipe,
) -> None:
    pipe.write(b'{"session_id": ')
    payload = read_payload(pipe.read_end, soon(0.2))
    assert payload.data is None
    assert payload.problem is not None
    assert "not closed" in payload.problem


def test_a_silent_pipe_never_closed_stops_at_the_deadline(pipe: Pipe) -> None:
    payload = read_payload(pipe.read_end, soon(0.2))
    assert payload.data is None
    assert payload.problem is not None
    assert "empty" in payload.problem


def test_a_closed_stdin_reads_as_empty(pipe: Pipe) -> None:
    fd = pipe.read_end
    pipe.close(fd)
    payload = read_payload(fd, soon())
    assert payload.data is None
    assert payload.problem is not None
    assert "empty" in payload.problem
