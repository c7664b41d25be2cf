"""Recorded Cursor payloads for the Cursor plugin's tests (setup fixtures: tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest
from recorded import Payload, recorded

#: The recorded file of each Cursor event.
RECORDED = {
    "sessionStart": "session_start",
    "beforeSubmitPrompt": "before_submit_prompt",
    "postToolUse": "post_tool_use",
    "postToolUseFailure": "post_tool_use_failure",
    "stop": "stop",
    "preCompact": "pre_compact",
    "sessionEnd": "session_end",
}


def load_payload(event: str, **changes: Any) -> dict[str, Any]:
    """The recorded payload of ``event`` with some fields replaced (None removes one)."""
    return recorded("cursor", RECORDED[event], **changes)


@pytest.fixture
def payload() -> Payload:
    """:func:`load_payload`, as a fixture."""
    return load_payload
