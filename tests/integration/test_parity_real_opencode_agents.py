"""The real opencode 1.18 reads the workflow agents `thatch setup --opencode` writes (UC-005).

``opencode debug agent NAME`` loads the project's config and agent files and
prints the agent as opencode will run it; no model is needed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from harness_clis import harness_cli, user_path
from thatch.instructions.workflows import NAMES

from .conftest import THATCH, make_repo
from .test_real_opencode import opencode_env

pytestmark = pytest.mark.slow


def test_uc005_opencode_offers_each_workflow_as_a_subagent(tmp_path: Path) -> None:
    opencode = harness_cli("opencode")
    user_home = tmp_path / "user"
    user_home.mkdir()
    project = make_repo(tmp_path / "web", "git@github.com:acme/web.git")
    env = {**opencode_env(user_home, user_path()), "THATCH_HOME": str(tmp_path / "thatch-home")}
    setup = subprocess.run(
        [str(THATCH), "setup", "--opencode", "--project", str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert setup.returncode == 0, setup.stdout + setup.stderr
    for name in NAMES:
        shown = subprocess.run(
            [str(opencode), "debug", "agent", name],
            cwd=project,
            env={**env, "PWD": str(project)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert shown.returncode == 0, shown.stderr[-2000:]
        agent = json.loads(shown.stdout)
        assert (agent["name"], agent["mode"]) == (name, "subagent")
        written = (project / ".opencode" / "agents" / f"{name}.md").read_text(encoding="utf-8")
        description, body = written.split("\n", 2)[1], written.split("---\n", 2)[2]
        # The quoted description and the body arrive whole, tool names prefixed.
        assert agent["description"] == json.loads(description.removeprefix("description: "))
        assert agent["prompt"].strip() == body.strip()
        assert "thatch_" in agent["prompt"]
