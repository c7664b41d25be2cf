"""The real opencode CLI, set up by `thatch setup --opencode`, reaching the real thatch.

opencode needs a model: a local stand-in server (tests/fake_model.py) plays
it and records what opencode sends, so the test sees the nudge arrive in
the user message's parts.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_model import fake_model, isolated_env, provider_config
from harness_clis import harness_cli

from .conftest import Runner, make_repo

pytestmark = pytest.mark.slow

MEMORY = "Deploys go through `make release`, which tags and pushes; never push tags by hand."


def test_opencode_plugin_reaches_thatch_and_pushes_the_nudge(
    thatch: Runner, home: Path, tmp_path: Path
) -> None:
    opencode = harness_cli("opencode")
    user_home = tmp_path / "user"
    user_home.mkdir()
    project = make_repo(tmp_path / "web", "git@github.com:acme/web.git")
    env = {**isolated_env(user_home), "THATCH_HOME": str(home), "PWD": str(project)}
    thatch("remember", "deploy-process", MEMORY, cwd=project, env=env)
    setup = thatch("setup", "--opencode", cwd=project, env=env)
    assert "thatch.js" in setup.stdout
    with fake_model() as (base_url, requests):
        config = project / "opencode.json"
        config.write_text(
            json.dumps({**json.loads(config.read_text()), **provider_config(base_url)})
        )
        thatch("daemon", "start", env=env)
        try:
            done = subprocess.run(
                [str(opencode), "run", "--", "How", "do", "we", "deploy", "to", "production?"],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=240,
                check=False,
            )
        finally:
            thatch("daemon", "stop", env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    sent = [request for request in requests if request.get("tools")]
    assert sent, "opencode sent the model nothing"
    user = next(m["content"] for m in sent[0]["messages"] if m["role"] == "user")
    texts = [part["text"] for part in user]
    assert texts[0] == "How do we deploy to production?"
    nudge = "\n".join(texts[1:])
    assert "[thatch] Memories" in nudge
    assert "deploy-process" in nudge
    # thatch's tools reached the model through the MCP server setup registered.
    names = {tool["function"]["name"] for tool in sent[0]["tools"]}
    assert "thatch_memory_recall" in names
