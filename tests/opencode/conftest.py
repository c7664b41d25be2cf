"""Recorded opencode payloads, setup contexts and a stand-in ``thatch`` for the plugin's tests."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from thatch.setup.model import SetupContext

DATA = Path(__file__).parent.parent / "data" / "opencode"

#: The recorded file of each event the JS plugin forwards.
RECORDED = {
    "session.created": "session_created",
    "session.compacted": "session_compacted",
    "chat.message": "chat_message",
    "tool.execute.after": "tool_execute_after",
    "experimental.session.compacting": "session_compacting",
}

Payload = Callable[..., dict[str, Any]]


def load_payload(name: str, **changes: Any) -> dict[str, Any]:
    """The recorded payload ``name`` (event or file name), fields replaced (None removes one)."""
    data: dict[str, Any] = json.loads((DATA / f"{RECORDED.get(name, name)}.json").read_text())
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
def node() -> str:
    """Node.js, to check and run the rendered JS plugin."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not on PATH")
    return found


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
