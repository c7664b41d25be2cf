"""Run the real ``thatch`` console script in subprocesses, with an isolated home."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from integration.hook_runs import Hooks

THATCH = Path(sys.executable).with_name("thatch")
ROOT = Path(__file__).parents[2]


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


def at_terminal(
    words: list[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``thatch WORDS`` with a terminal on stdin, as a person typing it runs it."""
    import pty

    leader, follower = pty.openpty()
    try:
        return subprocess.run(
            [str(THATCH), *words],
            stdin=follower,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    finally:
        os.close(leader)
        os.close(follower)


DATA = Path(__file__).parent.parent / "data"


def claude_payload(name: str, **changes: Any) -> dict[str, Any]:
    """A recorded Claude Code payload (tests/data/claude/NAME.json) with fields replaced."""
    payload: dict[str, Any] = json.loads((DATA / "claude" / f"{name}.json").read_text())
    payload.update(changes)
    return payload


@pytest.fixture
def daemon(home: Path, thatch: Runner) -> Iterator[Any]:
    """A running daemon for ``home`` (started by the CLI), stopped and reaped afterwards."""
    from thatch.daemon.client import DaemonClient

    thatch("daemon", "start")
    client = DaemonClient(str(home))
    yield client
    thatch("daemon", "stop", check=False)
    kill_daemon(client, signal.SIGKILL)


def daemon_pid(client: Any) -> int | None:
    try:
        return int(Path(client.located.pid_path).read_text())
    except (FileNotFoundError, ValueError):
        return None


def kill_daemon(client: Any, signum: int) -> None:
    """Send ``signum`` to the daemon if one runs, and wait until its lock is free."""
    pid = daemon_pid(client)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)
    client.wait_stopped(timeout=30)


@pytest.fixture(scope="session")
def daily_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding `thatch` after the README's daily-use install of this checkout."""
    import shutil

    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is needed for the daily-use install (pip install uv)")
    tools = tmp_path_factory.mktemp("uv-tools")
    env = {
        **{k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
        "UV_TOOL_DIR": str(tools / "tools"),
        "UV_TOOL_BIN_DIR": str(tools / "bin"),
    }
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    done = subprocess.run(
        [uv, "tool", "install", "--reinstall", "--compile-bytecode", "--python", python, ".[all]"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return tools / "bin"


def stop_daemons(env: dict[str, str]) -> None:
    """Stop the daemon of ``env``'s THATCH_HOME, and any that takes its lock after it.

    Only a daemon replacing an outdated one waits for the lock, but a test
    must not leave a process behind whatever the code under test does.
    """
    import time

    from thatch import daemon_lock as lock
    from thatch import rundir

    located = rundir.locate(env, home=env.get("THATCH_HOME"))
    deadline = time.monotonic() + 8
    while True:
        subprocess.run(
            [str(THATCH), "daemon", "stop"], env=env, capture_output=True, timeout=60, check=False
        )
        time.sleep(0.3)
        if not lock.is_held(located.lock_path) or time.monotonic() > deadline:
            return


@pytest.fixture
def hooks(home: Path, tmp_path: Path) -> Iterator[Hooks]:
    """Hook commands run against ``home`` (no daemon unless a test starts a stand-in)."""
    from integration.hook_runs import Hooks

    cwd = tmp_path / "project"
    cwd.mkdir()
    made = Hooks(home, cwd)
    yield made
    for fake in made.daemons:
        fake.close()
