"""Fixtures shared by the whole test tree."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from daemon_hooks import RuntimeFactory
from thatch.instructions.briefing import BRIEFING
from thatch.plugin.setup import SetupContext
from thatch.testing import EventRecorder

if TYPE_CHECKING:
    from thatch.runtime import Runtime

# The storage contract suites' fixtures. Installed, thatch-core loads the same
# plugin through its pytest11 entry point; named here, it still loads once.
pytest_plugins = ("thatch.testing.pytest_plugin",)

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
    "THATCH_HOOK_COLD_START_MS",
    "THATCH_NO_AUTOSTART",
    "THATCH_RECALL_THRESHOLD",
    "THATCH_HARNESS",
    # Setup and doctor honour these: a run started inside Claude Code must not
    # write to the developer's own Claude folder.
    "CLAUDE_CONFIG_DIR",
    "CLAUDECODE",
    "OPENCODE",
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


@pytest.fixture
def runtimes(home: Path) -> Iterator[RuntimeFactory]:
    """Daemon runtimes on ``home``: sqlite, core's builtins and the plugins a test names.

    ``config=`` writes ``home/config/config.toml`` first. Every runtime made is
    closed after the test.
    """
    import thatch_sqlite.plugin
    from thatch.testing import make_runtime

    opened: list[Runtime] = []

    def make(*plugins: object, config: str = "") -> Runtime:
        if config:
            (home / "config").mkdir(exist_ok=True)
            (home / "config" / "config.toml").write_text(config)
        runtime = make_runtime(home, thatch_sqlite.plugin, *plugins)
        opened.append(runtime)
        return runtime

    yield make
    for runtime in opened:
        runtime.close()


@pytest.fixture
def observer() -> EventRecorder:
    """A plugin that records every event observers are shown; pass it to ``runtimes``."""
    return EventRecorder()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder outside git, also the process's working directory."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


# -- thatch setup ------------------------------------------------------------------
@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """An empty stand-in for the user's home folder (``~``) of a setup."""
    folder = tmp_path / "user"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder to set up."""
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """The setup engine's state folder (manifest, backups); not created."""
    return tmp_path / "state"


@pytest.fixture
def project_context(user_home: Path, project: Path) -> SetupContext:
    """A project setup run with ``thatch`` on PATH and a THATCH_HOME in use."""
    return SetupContext(
        scope="project",
        project=project,
        user_home=user_home,
        command=("thatch",),
        briefing=BRIEFING,
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
        briefing=BRIEFING,
    )
