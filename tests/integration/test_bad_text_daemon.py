"""Half an emoji costs one character, never the event: the real daemon and ``thatch mcp``.

JavaScript harnesses cut strings by UTF-16 unit, so a truncated emoji
leaves a lone surrogate (``"\\ud83c"``) in the JSON they send.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_messages import INITIALIZE
from thatch import rundir
from thatch.daemon.client import DaemonClient
from thatch.sessions.store import SessionStore

from integration.conftest import THATCH, Runner, claude_payload

pytestmark = pytest.mark.slow

CUT = "cut in half: \ud83c"


def twenty_calls(session: str, project: Path) -> dict[str, Any]:
    """A PostToolBatch of 20 calls; call 7's output ends in half an emoji."""
    batch = claude_payload("post_tool_batch", session_id=session, cwd=str(project))
    first = batch["tool_calls"][0]
    batch["tool_calls"] = [
        {**first, "tool_use_id": f"toolu_{n}", "tool_response": {"stdout": f"run {n}"}}
        for n in range(20)
    ]
    batch["tool_calls"][7]["tool_response"] = {"stdout": CUT}
    return batch


def queued(home: Path, session: str) -> list[str]:
    """The tool responses queued for ``session`` in the daemon's session store."""
    store = SessionStore(Path(rundir.locate(home=str(home)).sessions_db))
    try:
        return [item.tool_response for item in store.pending(session)]
    finally:
        store.close()


def test_a_batch_with_a_lone_surrogate_keeps_all_twenty_calls(
    daemon: DaemonClient, home: Path, tmp_path: Path, thatch: Runner
) -> None:
    # The hook command, as the harness runs it (json.dumps writes the escape).
    hooked = thatch("buffer-batch", input=json.dumps(twenty_calls("s-hook", tmp_path)))
    assert hooked.stdout == ""
    # The same bytes straight to the daemon's socket, past any hook-side repair.
    request = {
        "protocol": 1,
        "op": "hook",
        "command": "buffer-batch",
        "payload": twenty_calls("s-raw", tmp_path),
        "event_id": "raw-1",
        "received_at": 1.0,
        "env": {},
    }
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)
        sock.connect(daemon.located.socket_path)
        sock.sendall(json.dumps(request).encode() + b"\n")
        with sock.makefile("rb") as reader:
            answer = json.loads(reader.readline())
    assert answer["ok"] is True, answer
    for session in ("s-hook", "s-raw"):
        responses = queued(home, session)
        assert len(responses) == 20, session
        assert responses[7] == "cut in half: \ufffd"


class Server:
    """``thatch mcp`` in a subprocess, spoken to line by line."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line)
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next line the server writes (failing after a minute of silence)."""
        try:
            return json.loads(self.lines.get(timeout=60))
        except queue.Empty:
            pytest.fail("thatch mcp did not answer within a minute")


def remember(call_id: int, label: str, content: str) -> bytes:
    """A ``memory_remember`` call, with JSON's escapes for what is not ASCII."""
    arguments = {"label": label, "content": content, "store": "global"}
    params = {"name": "memory_remember", "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode() + b"\n"


@pytest.fixture(params=["daemon", "in-process"])
def server(request: pytest.FixtureRequest, home: Path, tmp_path: Path) -> Iterator[Server]:
    args = ["mcp", "--in-process"] if request.param == "in-process" else ["mcp"]
    process = subprocess.Popen(
        [str(THATCH), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "THATCH_HOME": str(home)},
        cwd=tmp_path,
    )
    try:
        served = Server(process)
        served.send(json.dumps(INITIALIZE).encode() + b"\n")
        assert served.answer()["result"]["serverInfo"]["name"] == "thatch"
        served.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        yield served
    finally:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(timeout=60)
        if process.stdout is not None:
            process.stdout.close()
        DaemonClient(str(home)).stop()


def test_thatch_mcp_answers_a_lone_surrogate_and_bytes_that_are_not_utf8(
    server: Server,
) -> None:
    server.send(remember(2, "cut", "x\ud83c"))
    cut = server.answer()
    assert cut["id"] == 2
    assert cut["result"]["isError"] is False, cut
    assert cut["result"]["structuredContent"]["memory"]["content"] == "x\ufffd"

    server.send(remember(3, "bytes", "y@").replace(b"@", b"\xff\xfe"))
    not_utf8 = server.answer()
    assert not_utf8["id"] == 3
    assert not_utf8["result"]["structuredContent"]["memory"]["content"] == "y\ufffd\ufffd"
