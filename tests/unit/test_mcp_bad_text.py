"""MCP messages the SDK's parser refuses are mended or answered, never dropped.

A JavaScript client that cut an emoji in half sends a lone surrogate
escape (``"\\ud83c"``); the SDK refuses the whole line and, left alone, the
server never answers it. Here the daemon's side of a session is served
over a socket pair, as a ``thatch mcp`` relay would reach it.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import thatch_sqlite.plugin
from mcp import types
from mcp_messages import INITIALIZE, INITIALIZED
from thatch import wire
from thatch.plugin.config import Config
from thatch.runtime import Runtime
from thatch.testing import plugins_with
from thatch.tools.backend import InProcessBackend


def remember(call_id: int, label: str, content: str) -> dict[str, Any]:
    arguments = {"label": label, "content": content, "store": "global"}
    return {
        "jsonrpc": "2.0",
        "id": call_id,
        "method": "tools/call",
        "params": {"name": "memory_remember", "arguments": arguments},
    }


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Runtime]:
    runtime = Runtime(
        Config.load(tmp_path / "home", environ={}), plugins_with(thatch_sqlite.plugin)
    )
    yield runtime
    runtime.close()


def exchange(app: Runtime, cwd: Path, lines: list[bytes], answers: int) -> list[dict[str, Any]]:
    """What a daemon session answers to ``lines`` (after the handshake), in order of arrival."""
    from thatch.daemon.mcp_session import McpSession

    session = McpSession(InProcessBackend(app=app), {"cwd": str(cwd)}, targets=[])
    daemon_end, relay_end = socket.socketpair()
    serving = threading.Thread(target=session.serve, args=(daemon_end, wire.encode(INITIALIZE)))
    serving.start()
    with relay_end, daemon_end:
        relay_end.settimeout(10)
        reader = wire.LineReader(relay_end)
        assert "result" in json.loads(reader.line())
        relay_end.sendall(wire.encode(INITIALIZED) + b"".join(lines))
        received = [json.loads(reader.line()) for _ in range(answers)]
        relay_end.shutdown(socket.SHUT_WR)
        serving.join(30)
        assert not serving.is_alive()
    return received


def test_a_lone_surrogate_in_an_argument_is_replaced_and_the_call_answered(
    app: Runtime, tmp_path: Path
) -> None:
    # json.dumps escapes the surrogate, as a JavaScript client writes it.
    cut = json.dumps(remember(2, "cut", "half an emoji: \ud83c")).encode() + b"\n"
    (answer,) = exchange(app, tmp_path, [cut], answers=1)
    assert answer["id"] == 2
    assert answer["result"]["isError"] is False
    saved = answer["result"]["structuredContent"]["memory"]
    assert saved["content"] == "half an emoji: \ufffd"
    assert app.project(str(tmp_path)).show("cut", store="global").content == (
        "half an emoji: \ufffd"
    )


def test_bytes_that_are_not_utf8_are_replaced_and_the_call_answered(
    app: Runtime, tmp_path: Path
) -> None:
    line = json.dumps(remember(3, "bytes", "latin-1: @")).encode().replace(b"@", b"\xe9\xff")
    (answer,) = exchange(app, tmp_path, [line + b"\n"], answers=1)
    assert answer["id"] == 3
    assert answer["result"]["structuredContent"]["memory"]["content"] == "latin-1: \ufffd\ufffd"


def test_a_line_that_is_no_message_gets_an_error_naming_the_problem(
    app: Runtime, tmp_path: Path
) -> None:
    lines = [
        b"not json at all\n",
        b'{"jsonrpc": "2.0", "id": 4, "method": 5}\n',
        wire.encode(remember(5, "after", "the session goes on")),
    ]
    answers = exchange(app, tmp_path, lines, answers=3)
    errors = sorted(
        (answer["error"]["code"], answer["error"]["message"])
        for answer in answers
        if answer["id"] is None
    )
    assert len(errors) == 2
    (parse_code, not_json), (invalid_code, invalid) = errors
    assert (parse_code, invalid_code) == (types.PARSE_ERROR, types.INVALID_REQUEST)
    assert not_json.startswith("the message is not JSON: ")
    assert invalid.startswith("not a JSON-RPC message: ")
    assert "method" in invalid
    # The session goes on.
    (called,) = [answer for answer in answers if answer["id"] == 5]
    assert called["result"]["isError"] is False
