"""The real opencode CLI, set up by `thatch setup --opencode`, reaching thatch as a user's would.

opencode runs its plugins and MCP servers with the PATH of the shell that
started it, so it runs here with a temporary HOME, a PATH of node and the
system folders only, and no daemon running. It needs a model: a local
stand-in server (tests/fake_model.py) plays it and records what opencode
sends, so the test sees the nudge arrive in the user message's parts and
thatch's tools offered to the model.

Setup runs both ways a user runs it: from the checkout with ``uv run``
(the absolute path is written) and after the daily-use install (the bare
name).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from fake_model import fake_model, isolated_env, provider_config
from harness_clis import harness_cli, user_path

from .conftest import ROOT, THATCH, make_repo, stop_daemons

pytestmark = pytest.mark.slow

MEMORY = "Deploys go through `make release`, which tags and pushes; never push tags by hand."


def opencode_env(user_home: Path, path: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in isolated_env(user_home).items()
        if not k.startswith(("VIRTUAL_ENV", "THATCH_", "UV_", "PYTHON"))
    }
    return {**env, "PATH": path}


def reaches_opencode(project: Path, env: dict[str, str], thatch_home: Path) -> None:
    """One `opencode run` with no daemon running: the nudge and the tools reach the model."""
    opencode = harness_cli("opencode")
    with fake_model() as (base_url, requests):
        config = project / "opencode.json"
        config.write_text(
            json.dumps({**json.loads(config.read_text()), **provider_config(base_url)})
        )
        try:
            done = subprocess.run(
                [str(opencode), "run", "--", "How", "do", "we", "deploy", "to", "production?"],
                cwd=project,
                env={**env, "PWD": str(project)},
                capture_output=True,
                text=True,
                timeout=240,
                check=False,
            )
        finally:
            stop_daemons({**env, "THATCH_HOME": str(thatch_home)})
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


def remember(env: dict[str, str], project: Path, program: str) -> None:
    done = subprocess.run(
        [program, "remember", "deploy-process", MEMORY],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_setup_from_the_checkout_with_uv_run(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv is not None, "uv runs the README's commands"
    user_home = tmp_path / "user"
    user_home.mkdir()
    thatch_home = tmp_path / "thatch-home"
    project = make_repo(tmp_path / "web", "git@github.com:acme/web.git")
    env = opencode_env(user_home, user_path())
    with_home = {**env, "THATCH_HOME": str(thatch_home)}
    remember(with_home, project, str(THATCH))
    setup = subprocess.run(
        [uv, "run", "--project", str(ROOT), "--frozen", "thatch", "setup", "--opencode"],
        cwd=project,
        env={**with_home, "PATH": user_path(Path(uv).parent)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert f"harnesses will run: {THATCH}" in setup.stdout
    mcp = json.loads((project / "opencode.json").read_text())["mcp"]["thatch"]
    assert mcp["command"][0] == str(THATCH)
    reaches_opencode(project, env, thatch_home)


def test_setup_after_the_daily_use_install_writes_the_bare_name(
    tmp_path: Path, daily_bin: Path
) -> None:
    user_home = tmp_path / "user"
    user_home.mkdir()
    thatch_home = tmp_path / "thatch-home"
    project = make_repo(tmp_path / "web", "git@github.com:acme/web.git")
    env = opencode_env(user_home, user_path(daily_bin))
    with_home = {**env, "THATCH_HOME": str(thatch_home)}
    remember(with_home, project, "thatch")
    setup = subprocess.run(
        ["thatch", "setup", "--opencode"],
        cwd=project,
        env=with_home,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "harnesses will run: thatch\n" in setup.stdout
    mcp = json.loads((project / "opencode.json").read_text())["mcp"]["thatch"]
    assert mcp["command"][0] == "thatch"
    reaches_opencode(project, env, thatch_home)
