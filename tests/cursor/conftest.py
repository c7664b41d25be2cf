"""Recorded Cursor payloads and a setup context for the Cursor plugin's tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from thatch.setup.model import SetupContext

DATA = Path(__file__).parent.parent / "data" / "cursor"

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

Payload = Callable[..., dict[str, Any]]


def load_payload(event: str, **changes: Any) -> dict[str, Any]:
    """The recorded payload of ``event`` with some fields replaced (None removes one)."""
    data: dict[str, Any] = json.loads((DATA / f"{RECORDED[event]}.json").read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


@pytest.fixture
def payload() -> Payload:
    """:func:`load_payload`, as a fixture."""
    return load_payload


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    folder = tmp_path / "user"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


@pytest.fixture
def project_context(user_home: Path, project: Path) -> SetupContext:
    """A project setup run with ``thatch`` on PATH and a THATCH_HOME in use."""
    return SetupContext(
        scope="project",
        project=project,
        user_home=user_home,
        command=("thatch",),
        env={"THATCH_HOME": "/srv/thatch-home"},
    )


@pytest.fixture
def global_context(user_home: Path) -> SetupContext:
    """A global setup run where thatch is not on PATH (an absolute path with a space)."""
    return SetupContext(
        scope="global",
        project=None,
        user_home=user_home,
        command=("/opt/thatch tools/bin/thatch",),
    )
