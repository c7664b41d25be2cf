"""Lone surrogates on the wire: both ends get text UTF-8 (and SQLite) can store."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from thatch import wire

CUT_EMOJI = "party \ud83c"  # what a JS harness leaves when truncation splits 🎉


def storable(value: Any) -> bool:
    """Whether every string in ``value`` (keys included) encodes as strict UTF-8."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_a_lone_surrogate_is_encoded_as_valid_utf8() -> None:
    line = wire.encode({"prompt": CUT_EMOJI, CUT_EMOJI: [CUT_EMOJI]})
    text = line.decode("utf-8")  # strict: the line is valid UTF-8
    assert json.loads(text) == {"prompt": "party \ufffd", "party \ufffd": ["party \ufffd"]}


def test_clean_text_is_encoded_unchanged() -> None:
    message = {"prompt": "naïve café 🎉", "n": 1}
    assert wire.encode(message) == (
        json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"prompt": "party \\ud83c"}\n', "party \ufffd"),
        (b'{"prompt": "party \\uDF89 end"}\n', "party \ufffd end"),
        (b'{"prompt": "party \\ud83c\\udf89"}\n', "party 🎉"),
        # Raw bytes that are not UTF-8: a surrogate encoded as if it were a character, a stray byte.
        (b'{"prompt": "party \xed\xa0\xbc"}\n', "party \ufffd\ufffd\ufffd"),
        (b'{"prompt": "bad \xff byte"}\n', "bad \ufffd byte"),
    ],
)
def test_decoded_text_is_always_storable(line: bytes, expected: str) -> None:
    message = wire.decode(line)
    assert message == {"prompt": expected}
    assert storable(message)


def test_an_escaped_surrogate_in_a_key_is_replaced() -> None:
    message = wire.decode(b'{"k\\ud83c": {"inner": ["\\udf89"]}}')
    assert message == {"k\ufffd": {"inner": ["\ufffd"]}}


def test_decode_still_refuses_what_is_not_a_json_object() -> None:
    with pytest.raises(wire.WireError):
        wire.decode(b"\xff\xfe not json\n")
    with pytest.raises(wire.WireError):
        wire.decode(b'["a list"]\n')


def test_a_request_with_a_cut_emoji_reaches_the_daemon_whole(tmp_path: Path) -> None:
    path = str(tmp_path / "d.sock")
    received: list[dict[str, Any]] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen()

        def answer() -> None:
            connection, _ = server.accept()
            with connection:
                received.append(wire.decode(wire.LineReader(connection).line()))
                connection.sendall(wire.encode({"ok": True, "output": CUT_EMOJI}))

        thread = threading.Thread(target=answer)
        thread.start()
        answer_line = wire.request(path, {"op": "hook", "payload": {"prompt": CUT_EMOJI}}, 5.0)
        thread.join()
    assert received == [{"op": "hook", "payload": {"prompt": "party \ufffd"}}]
    assert answer_line == {"ok": True, "output": "party \ufffd"}


def test_a_line_nested_past_the_recursion_limit_is_a_wire_error() -> None:
    deep = b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}\n"
    with pytest.raises(wire.WireError, match="nested too deeply"):
        wire.decode(deep)
