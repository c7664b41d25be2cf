"""``thatch hook claude EVENT`` run the way Claude Code runs it, with the real daemon.

The console script by its absolute path, a PATH without the project's
virtual environment, a HOME of its own, and THATCH_NO_AUTOSTART unset, so
a hook starts the daemon itself.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fake_daemon import write_hook_table
from thatch import rundir

from .conftest import THATCH, Runner, kill_daemon


class ClaudeHooks:
    """The hooks of one project and home, and what they leave on disk."""

    def __init__(self, home: Path, project: Path, user_home: Path) -> None:
        self.home = home
        self.project = project
        self.located = rundir.locate({}, home=str(home))
        # Only what a harness passes on; the venv's bin folder is not on PATH.
        self.env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(user_home),
            "THATCH_HOME": str(home),
            # Generous on a busy machine: these tests are about what is printed
            # and in which order, not how soon (bench/cold_start.py measures that).
            "THATCH_HOOK_COLD_START_MS": "60000",
        }
        assert str(THATCH.parent) not in self.env["PATH"].split(os.pathsep)

    def run(self, event: str, payload: dict[str, Any], **env: str) -> str:
        completed = subprocess.run(
            [str(THATCH), "hook", "claude", event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=self.project,
            env={**self.env, **env},
            timeout=120,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        assert completed.stderr == ""
        return completed.stdout

    def spooled(self) -> list[Path]:
        folder = Path(self.located.spool_dir)
        return sorted(folder.glob("*.json")) if folder.is_dir() else []

    def where(self, session: str) -> dict[str, str]:
        return {"session_id": session, "cwd": str(self.project)}

    def sessions_db(self) -> str:
        """Every row of the session store, as SQL text."""
        with sqlite3.connect(self.located.sessions_db) as conn:
            return "\n".join(conn.iterdump())


def claude_hooks(home: Path, thatch: Runner, tmp_path: Path) -> Iterator[ClaudeHooks]:
    """The body of a ``hooks`` fixture: a project, then the daemon stopped whatever happened."""
    from thatch.daemon.client import DaemonClient

    project = tmp_path / "project"
    project.mkdir()
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    # As after `thatch setup`: the hooks know which events wait for the daemon.
    write_hook_table(home)
    yield ClaudeHooks(home, project, user_home)
    thatch("daemon", "stop", check=False)
    kill_daemon(DaemonClient(str(home)), signal.SIGKILL)
