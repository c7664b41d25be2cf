"""The real ``thatch doctor`` on a fresh home: the real model, plugins and daemon."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from thatch import __version__

from .conftest import THATCH, Runner, as_json, daemon_pid

pytestmark = pytest.mark.slow

CHECKS = [
    "plugins",
    "database",
    "model",
    "socket permissions",
    "daemon",
    "spool",
    "kept writes",
    "log",
]
#: One check for each config table an installed plugin declares.
TABLES = [
    "config table [embedder.fastembed]",
    "config table [receptor]",
    "config table [storage.postgres]",
]


@pytest.fixture
def user_env(tmp_path: Path) -> dict[str, str]:
    """A HOME of its own, so the user's real ~/.claude and ~/.cursor are never read."""
    folder = tmp_path / "user"
    folder.mkdir()
    return {"HOME": str(folder)}


def doctor(thatch: Runner, env: dict[str, str], *args: str, **kwargs: Any) -> Any:
    return thatch("doctor", *args, env=env, check=False, **kwargs)


def by_name(completed: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    return {check["name"]: check for check in as_json(completed)}


def test_doctor_json_on_a_fresh_home(thatch: Runner, user_env: dict[str, str], home: Path) -> None:
    completed = doctor(thatch, user_env, "--json")
    assert completed.returncode == 0, completed.stderr
    checks = as_json(completed)
    assert [check["name"] for check in checks] == [*CHECKS, *TABLES, "harness setup"]
    assert all(set(check) == {"name", "status", "detail", "fix"} for check in checks)
    found = by_name(completed)
    model = found["model"]
    assert model["status"] == "ok"
    assert "all-MiniLM-L6-v2" in model["detail"]
    assert "(384 dimensions)" in model["detail"]
    assert "fastembed" in found["plugins"]["detail"]
    assert found["database"]["status"] == "ok"
    assert str(home) in found["database"]["detail"]
    assert found["daemon"]["status"] == "warn"
    for check in checks:
        assert check["status"] == "ok" or check["fix"], check


def test_doctor_text_on_a_fresh_home(thatch: Runner, user_env: dict[str, str]) -> None:
    completed = doctor(thatch, user_env)
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    for name in CHECKS:
        assert any(line[6:].startswith(f" {name}: ") for line in lines), name
    assert any(line.startswith("[ok  ] model: ") for line in lines)
    daemon = lines.index(next(line for line in lines if line.startswith("[warn] daemon: ")))
    assert lines[daemon + 1].strip().startswith("fix: 'thatch daemon start'")


def test_a_bare_thatch_the_harness_cannot_find_is_flagged_once(
    thatch: Runner, user_env: dict[str, str], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    # Setup ran where PATH found this thatch (as after the daily-use install)...
    linked = tmp_path / "linked-bin"
    linked.mkdir()
    (linked / "thatch").symlink_to(THATCH)
    on_path = {**user_env, "PATH": f"{linked}:/usr/bin:/bin"}
    setup = thatch("setup", "--claude", cwd=project, env=on_path)
    assert "harnesses will run: thatch\n" in setup.stdout
    # ...but the harness's PATH does not have it.
    completed = doctor(thatch, {**user_env, "PATH": "/usr/bin:/bin"}, "--json", cwd=project)
    unfound = [
        check
        for check in as_json(completed)
        if "'thatch', which is not on the PATH harnesses run commands with" in check["detail"]
    ]
    (check,) = unfound  # the MCP server and the hooks share the cause: reported once
    assert check["name"] == "Claude Code setup (project)"
    # Every hook and the MCP server would fail to start: a failure, not a warning.
    assert check["status"] == "fail"
    assert completed.returncode == 1
    assert ".mcp.json" in check["detail"]
    assert "settings.json" in check["detail"]
    assert "setup --claude --project" in check["fix"]
    assert "uv tool install" in check["fix"]
    assert not [check for check in as_json(completed) if check["name"].endswith("commands")]


def test_a_running_daemon_is_ok(daemon: Any, thatch: Runner, user_env: dict[str, str]) -> None:
    completed = doctor(thatch, user_env, "--json")
    assert completed.returncode == 0, completed.stderr
    found = by_name(completed)
    assert found["daemon"] == {
        "name": "daemon",
        "status": "ok",
        "detail": f"pid {daemon_pid(daemon)}, version {__version__}",
        "fix": "",
    }
    assert found["socket permissions"]["status"] == "ok"
