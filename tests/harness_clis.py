"""Finding the real Claude Code and opencode CLIs for the integration tests.

`.ci/install-harness-clis` installs them into `.ci/node`; a developer may
also have them on PATH. Under CI a missing CLI fails the test instead of
skipping it, so the harness tests cannot silently stop running.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

INSTALLED = Path(__file__).parents[1] / ".ci" / "node" / "node_modules" / ".bin"


def harness_cli(name: str) -> Path:
    """The path of ``name`` (claude, opencode), or skip (fail under CI) when it is missing."""
    for candidate in (INSTALLED / name, shutil.which(name)):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    message = f"{name} CLI not found; run: bash .ci/install-harness-clis"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
