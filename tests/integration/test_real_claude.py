"""The real Claude Code CLI, set up by `thatch setup --claude`, reaching thatch.

No account is needed: `claude mcp list` starts the registered servers, and
`claude -p` fires SessionStart and UserPromptSubmit before it fails at the
API, recording each hook's output in the session transcript.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from harness_clis import harness_cli

from .conftest import Runner, make_repo

pytestmark = pytest.mark.slow

MEMORY = "Refunds must go through the ledger service, never by editing the orders table."


def claude_env(user_home: Path, thatch_home: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(user_home), "THATCH_HOME": str(thatch_home)}
    # Never the developer's own account or settings.
    for variable in ("ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR"):
        env.pop(variable, None)
    return env


def hook_outputs(user_home: Path) -> list[dict[str, Any]]:
    """The hook_success attachments of every transcript under the temporary HOME."""
    found = []
    for transcript in (user_home / ".claude" / "projects").rglob("*.jsonl"):
        for line in transcript.read_text().splitlines():
            attachment = json.loads(line).get("attachment") or {}
            if attachment.get("type") == "hook_success":
                found.append(attachment)
    return found


def test_claude_code_connects_and_gets_the_recall_nudge(
    thatch: Runner, home: Path, tmp_path: Path
) -> None:
    claude = harness_cli("claude")
    user_home = tmp_path / "user"
    user_home.mkdir()
    project = make_repo(tmp_path / "shop", "git@github.com:acme/shop.git")
    env = claude_env(user_home, home)
    thatch("remember", "refunds-via-ledger", MEMORY, cwd=project, env=env)
    setup = thatch("setup", "--claude", cwd=project, env=env)
    assert ".mcp.json" in setup.stdout
    thatch("daemon", "start", env=env)
    try:
        listed = subprocess.run(
            [str(claude), "mcp", "list"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        line = next(line for line in listed.stdout.splitlines() if line.startswith("thatch"))
        assert "Connected" in line, listed.stdout + listed.stderr

        subprocess.run(
            [str(claude), "-p", "How should I implement refunds in this shop?"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        outputs = hook_outputs(user_home)
        by_event = {item["hookEvent"]: item["content"] for item in outputs}
        assert "acme/shop" in by_event["SessionStart"]
        assert "[thatch] Memories" in by_event["UserPromptSubmit"]
        assert "refunds-via-ledger" in by_event["UserPromptSubmit"]
    finally:
        thatch("daemon", "stop", env=env, check=False)

    # Setup is idempotent and its uninstall leaves the project as it was.
    again = thatch("setup", "--claude", cwd=project, env=env)
    assert "nothing to change" in again.stdout
    thatch("setup", "--claude", "--uninstall", cwd=project, env=env)
    leftovers = sorted(
        str(p.relative_to(project)) for p in project.rglob("*") if ".git" not in p.parts
    )
    assert leftovers == []
