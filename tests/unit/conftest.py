"""Fixtures of the tool tests: a runtime on SQLite, a tool context outside git, the registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import thatch_sqlite.plugin
from thatch.runtime import Runtime
from thatch.testing import make_runtime
from thatch.tools import ToolContext, ToolRegistry


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Runtime]:
    # SQLite, the word-hash embedder and core's builtins.
    runtime = make_runtime(tmp_path / "home", thatch_sqlite.plugin)
    yield runtime
    runtime.close()


@pytest.fixture
def ctx(app: Runtime, tmp_path: Path) -> ToolContext:
    outside = tmp_path / "outside-git"
    outside.mkdir()
    return ToolContext(app, app.project(str(outside)))


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry()
