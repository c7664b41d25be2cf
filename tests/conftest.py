"""Fixtures shared by the whole test tree."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Tests never read the developer's own thatch config or data.
for variable in (
    "THATCH_HOME",
    "THATCH_DB_PATH",
    "THATCH_MODEL",
    "THATCH_MODEL_PATH",
    "THATCH_LOAD_PLUGINS",
    "THATCH_TRACE_PLUGINS",
    "THATCH_PLUGIN_MODULES",
    "THATCH_HOOK_TIMEOUT_MS",
    "THATCH_NO_AUTOSTART",
    "CLAUDE_PROJECT_DIR",
    "CURSOR_PROJECT_DIR",
    "CURSOR_VERSION",
):
    os.environ.pop(variable, None)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty THATCH_HOME, also set in the environment for subprocesses."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("THATCH_HOME", str(folder))
    return folder
