"""The Claude Code setup target and setup contexts, as the Claude plugin's setup tests use them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from thatch.instructions.briefing import BRIEFING
from thatch.plugin.setup import SetupContext
from thatch_claude.target import ClaudeTarget


def on_path(*names: str) -> Callable[[str], str | None]:
    """A fake ``shutil.which`` that finds only ``names``."""
    return lambda name: f"/usr/local/bin/{name}" if name in names else None


def target(*on: str) -> ClaudeTarget:
    """The target with a PATH holding exactly the programs ``on``."""
    return ClaudeTarget(which=on_path(*on))


def project_context(project: Path, user_home: Path, **fields: Any) -> SetupContext:
    """A project setup with ``thatch`` on PATH; ``fields`` replace the defaults."""
    defaults: dict[str, Any] = {"command": ("thatch",)}
    return SetupContext(
        briefing=BRIEFING,
        scope="project",
        project=project,
        user_home=user_home,
        **(defaults | fields),
    )


def global_context(user_home: Path, **fields: Any) -> SetupContext:
    """A global setup with thatch in a venv and a THATCH_HOME, both with spaces."""
    defaults: dict[str, Any] = {
        "command": ("/opt/thatch venv/bin/thatch",),
        "env": {"THATCH_HOME": "/data/thatch home"},
    }
    return SetupContext(
        briefing=BRIEFING, scope="global", project=None, user_home=user_home, **(defaults | fields)
    )
