"""Run the real ``thatch`` console script in subprocesses, with an isolated home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

THATCH = Path(sys.executable).with_name("thatch")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(cwd), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


def make_repo(path: Path, remote: str, branch: str = "main") -> Path:
    """A git repository whose origin gives it a store, with one commit on ``branch``."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", branch)
    git(path, "remote", "add", "origin", remote)
    git(path, "commit", "-q", "--allow-empty", "-m", "start")
    return path


Runner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def thatch(home: Path, tmp_path: Path) -> Runner:
    """Run ``thatch ARGS`` in a folder outside git (or ``cwd=``) with THATCH_HOME set."""
    outside = tmp_path / "outside-git"
    outside.mkdir()

    def run(
        *args: str,
        cwd: Path | None = None,
        input: str | None = None,
        env: dict[str, str] | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        environment = {**os.environ, "THATCH_HOME": str(home), **(env or {})}
        completed = subprocess.run(
            [str(THATCH), *args],
            cwd=cwd or outside,
            input=input,
            capture_output=True,
            text=True,
            env=environment,
            timeout=300,
            check=False,
        )
        if check and completed.returncode != 0:
            raise AssertionError(
                f"thatch {' '.join(args)} exited {completed.returncode}\n"
                f"stdout: {completed.stdout}\nstderr: {completed.stderr}"
            )
        return completed

    return run


def as_json(completed: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(completed.stdout)
