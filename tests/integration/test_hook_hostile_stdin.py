"""Hostile stdin: every case exits 0, prints nothing, and keeps its event or logs one line.

Real ``thatch buffer-tool`` processes, with no daemon (a kept event is in the
spool) and with a stand-in daemon (a kept event is delivered). A case is
``kept`` when thatch can make an event of it without guessing, ``logged``
when it cannot. Nesting is refused past a fixed depth (500 levels), well
under the interpreter's recursion limit, so the daemon can always parse
what a hook kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from thatch import wire

from integration.hook_runs import Hooks

BASE = {"session_id": "hostile", "hook_event_name": "PostToolUse", "tool_name": "Bash"}
BASE_JSON = json.dumps(BASE)[:-1]  # without the closing brace: cases add a field
BIG_NUMBER = "9" * 5000


def with_field(raw: bytes) -> bytes:
    """``BASE`` with one more field, ``"tool_response": RAW``, as raw JSON bytes."""
    return BASE_JSON.encode() + b', "tool_response": ' + raw + b"}"


def nested(depth: int) -> bytes:
    return with_field(b"[" * depth + b"]" * depth)


def nested_value(depth: int) -> Any:
    return json.loads("[" * depth + "]" * depth)


CASES = [
    pytest.param(b"", "logged", None, id="empty"),
    pytest.param(b"this is not json", "logged", None, id="not-json"),
    pytest.param(b'[{"session_id": "hostile"}]', "logged", None, id="not-an-object"),
    pytest.param(with_field(b'"caf\xe9 \xff"'), "kept", "caf\ufffd \ufffd", id="invalid-utf8"),
    pytest.param(
        with_field(b'"half \\ud83c an emoji"'), "kept", "half \ufffd an emoji", id="surrogate"
    ),
    pytest.param(b"\xef\xbb\xbf" + with_field(b'"after a BOM"'), "kept", "after a BOM", id="bom"),
    pytest.param(with_field(BIG_NUMBER.encode()), "kept", BIG_NUMBER, id="5000-digits"),
    pytest.param(nested(400), "kept", nested_value(400), id="nested-400"),
    pytest.param(nested(600), "logged", None, id="nested-600"),
    pytest.param(nested(990), "logged", None, id="nested-990"),
    pytest.param(nested(100_000), "logged", None, id="nested-100000"),
    pytest.param(with_field(b'"' + b"a" * (9 * 1024 * 1024) + b'"'), "logged", None, id="9MB"),
]


def spooled(hooks: Hooks) -> list[dict[str, Any]]:
    """The spooled requests; each file must be valid UTF-8, as the wire requires."""
    folder = Path(hooks.located.spool_dir)
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    return [wire.decode(path.read_bytes().decode("utf-8").encode()) for path in files]


def check(hooks: Hooks, kept: list[dict[str, Any]], outcome: str, response: Any) -> None:
    """``kept`` (requests spooled or delivered) and the log agree with ``outcome``."""
    lines = hooks.log_lines()
    if outcome == "logged":
        assert kept == []
        assert len(lines) == 1
        return
    (request,) = kept
    payload = request["payload"]
    assert {key: payload[key] for key in BASE} == BASE
    assert payload["tool_response"] == response


@pytest.mark.parametrize(("stdin", "outcome", "response"), CASES)
def test_hostile_stdin_with_no_daemon(
    hooks: Hooks, stdin: bytes, outcome: str, response: str | None
) -> None:
    completed = hooks.run("buffer-tool", stdin=stdin)
    assert completed.returncode == 0
    assert completed.stdout == b""
    assert completed.stderr == b""
    kept = spooled(hooks)
    check(hooks, kept, outcome, response)
    if kept:
        # The log says the event was spooled, and why: the daemon is not running.
        (line,) = hooks.log_lines()
        assert "spooled" in line


@pytest.mark.parametrize(("stdin", "outcome", "response"), CASES)
def test_hostile_stdin_with_a_daemon(
    hooks: Hooks, stdin: bytes, outcome: str, response: str | None
) -> None:
    fake = hooks.daemon(lambda request: {"ok": True, "output": ""})
    completed = hooks.run("buffer-tool", stdin=stdin)
    assert completed.returncode == 0
    assert completed.stdout == b""
    assert completed.stderr == b""
    assert spooled(hooks) == []
    check(hooks, fake.requests, outcome, response)
    if fake.requests:
        assert hooks.log_lines() == []
