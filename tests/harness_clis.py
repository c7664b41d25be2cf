"""Finding the real Claude Code and opencode CLIs for the integration tests.

`.ci/install-harness-clis` installs them under `.ci/node` (one prefix per
Claude Code version); a developer may also have them on PATH. Under CI a
missing CLI fails the test instead of skipping it, so the harness tests
cannot silently stop running.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

INSTALLED = Path(__file__).parents[1] / ".ci" / "node"
#: The Claude Code versions CI installs and every real-CLI test runs against.
CLAUDE_VERSIONS = ("2.1.197", "2.1.332")
#: The system folders a user's shell PATH has, without any project environment.
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")


def harness_cli(name: str, version: str | None = None) -> Path:
    """The path of ``name`` (claude, opencode), or skip (fail under CI) when it is missing.

    :param version: a Claude Code version from :data:`CLAUDE_VERSIONS`; a CLI
        on PATH stands in only when no version is asked for.
    """
    prefix = f"{name}-{version}" if version else name
    installed = INSTALLED / prefix / "node_modules" / ".bin" / name
    if installed.exists():
        return installed
    on_path = None if version else shutil.which(name)
    if on_path:
        return Path(on_path)
    message = f"{prefix} CLI not found; run: bash .ci/install-harness-clis"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def user_path(*extra: Path) -> str:
    """A PATH as a user's shell has it: ``extra`` folders, node, the system folders.

    Never the project's virtualenv: harnesses run hooks and MCP servers with
    the user's own PATH, so tests must too.
    """
    node = shutil.which("node")
    folders = [*map(str, extra)]
    if node:
        folders.append(str(Path(node).parent))
    folders.extend(SYSTEM_PATH)
    return os.pathsep.join(dict.fromkeys(folders))


def user_env(user_home: Path, path: str) -> dict[str, str]:
    """The environment of a user's shell: their HOME and PATH, nothing of this test run's."""
    dropped = ("VIRTUAL_ENV", "THATCH_", "CLAUDE_", "ANTHROPIC_", "UV_", "PYTHON")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    return {**env, "HOME": str(user_home), "PATH": path}
