"""A stand-in OpenAI-compatible model server, and an isolated environment, for opencode tests.

``opencode run`` needs a model. This server answers the first request with
one bash call and the next with text, and records every request, so a test
sees exactly what opencode sent the model.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class FakeModel(http.server.BaseHTTPRequestHandler):
    """Chat completions, streamed: a bash call first, then "Done." once a tool result is back."""

    requests: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        self.requests.append(body)
        messages = body.get("messages", [])
        if any(message["role"] == "tool" for message in messages) or not body.get("tools"):
            delta: dict[str, Any] = {"role": "assistant", "content": "Done."}
            finish = "stop"
        else:
            arguments = json.dumps({"command": "echo hello", "description": "Say hello"})
            call = {"index": 0, "id": "call_1", "type": "function"}
            call["function"] = {"name": "bash", "arguments": arguments}
            delta = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for chunk_delta, chunk_finish in ((delta, None), ({}, finish)):
            choice = {"index": 0, "delta": chunk_delta, "finish_reason": chunk_finish}
            chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m"}
            self.wfile.write(b"data: " + json.dumps({**chunk, "choices": [choice]}).encode())
            self.wfile.write(b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def fake_model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The fake model's base URL and the requests it received, while the block runs."""
    requests: list[dict[str, Any]] = []
    handler = type("Handler", (FakeModel,), {"requests": requests})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def provider_config(base_url: str) -> dict[str, Any]:
    """opencode.json keys that make the fake server its model, with bash allowed."""
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Fake",
        "options": {"baseURL": base_url, "apiKey": "unused"},
        "models": {"m": {"name": "m", "tool_call": True}},
    }
    return {"provider": {"fake": provider}, "model": "fake/m", "permission": {"bash": "allow"}}


def isolated_env(home: Path) -> dict[str, str]:
    """An environment where opencode reads and writes only under ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "XDG_"))}
    return env | {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        # No fetch of the model catalogue from the network, no self-update.
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
    }
