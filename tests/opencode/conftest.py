"""Recorded opencode payloads and Node.js for the plugin's tests (setup: tests/conftest.py)."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from recorded import Payload, recorded

#: The recorded file of each event the JS plugin forwards.
RECORDED = {
    "session.created": "session_created",
    "session.compacted": "session_compacted",
    "chat.message": "chat_message",
    "tool.execute.after": "tool_execute_after",
    "experimental.session.compacting": "session_compacting",
}


def load_payload(name: str, **changes: Any) -> dict[str, Any]:
    """The recorded payload ``name`` (event or file name), fields replaced (None removes one)."""
    return recorded("opencode", RECORDED.get(name, name), **changes)


@pytest.fixture
def payload() -> Payload:
    """:func:`load_payload`, as a fixture."""
    return load_payload


@pytest.fixture
def node() -> str:
    """Node.js, to check and run the rendered JS plugin."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not on PATH")
    return found
