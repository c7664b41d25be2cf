"""Under `umask 000`, nothing thatch creates is group- or world-writable.

The real console script saves a memory, sets Claude Code up, answers a
session start and a prompt through the daemon it starts, and stops it;
then every folder and file under the thatch home, the user's home and the
project is checked.
"""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from .conftest import THATCH, make_repo

pytestmark = pytest.mark.slow


def under_open_umask(*args: str, env: dict[str, str], cwd: Path, stdin: str = "") -> str:
    done = subprocess.run(
        ["/bin/sh", "-c", 'umask 000; exec "$@"', "sh", str(THATCH), *args],
        input=stdin,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def writable_by_others(*roots: Path) -> list[str]:
    found = []
    for root in roots:
        for path in [root, *root.rglob("*")]:
            if ".git" in path.parts or path.is_symlink():
                continue
            mode = stat.S_IMODE(path.lstat().st_mode)
            if mode & 0o022:
                found.append(f"{path} {mode:o}")
    return found


def test_nothing_thatch_creates_is_writable_by_others(tmp_path: Path) -> None:
    home, user = tmp_path / "thatch-home", tmp_path / "user"
    user.mkdir()
    project = make_repo(tmp_path / "shop", "git@github.com:acme/shop.git")
    env = {"THATCH_HOME": str(home), "HOME": str(user), "PATH": "/usr/bin:/bin"}
    under_open_umask("remember", "ledger", "Refunds go through the ledger.", env=env, cwd=project)
    under_open_umask("setup", "--claude", env=env, cwd=project)
    base = {"session_id": "s-umask", "cwd": str(project), "transcript_path": "/dev/null"}
    started = under_open_umask(
        "hook",
        "claude",
        "SessionStart",
        env=env,
        cwd=project,
        stdin=json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}),
    )
    assert "acme/shop" in started  # the daemon it started answered
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "How do refunds work?"}
    under_open_umask(
        "hook", "claude", "UserPromptSubmit", env=env, cwd=project, stdin=json.dumps(prompt)
    )
    under_open_umask("daemon", "stop", env=env, cwd=project)
    assert writable_by_others(home, user, project) == []
