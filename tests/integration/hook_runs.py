"""Running the real hook commands against one home, with stand-in daemons."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from fake_daemon import FakeDaemon, Responder, write_hook_table
from thatch import rundir

from integration.conftest import THATCH

PAYLOAD = {"session_id": "sess-1", "hook_event_name": "UserPromptSubmit", "prompt": "hello"}


class Hooks:
    """Runs hook commands through the console script against one home."""

    def __init__(self, home: Path, cwd: Path) -> None:
        self.home = home
        self.cwd = cwd
        self.located = rundir.locate({}, home=str(home))
        # As after `thatch setup` or a daemon start: the hooks know the harnesses.
        self.table = write_hook_table(home)
        self.env = {
            **os.environ,
            "THATCH_HOME": str(home),
            "THATCH_NO_AUTOSTART": "1",
            "THATCH_HOOK_TIMEOUT_MS": "1000",
        }
        self.daemons: list[FakeDaemon] = []

    def daemon(self, respond: Responder) -> FakeDaemon:
        fake = FakeDaemon(self.located.socket_path, respond)
        self.daemons.append(fake)
        return fake

    def run(
        self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        data = json.dumps(PAYLOAD).encode() if stdin is None else stdin
        return subprocess.run(
            [str(THATCH), *args],
            input=data,
            capture_output=True,
            cwd=self.cwd,
            env={**self.env, **(env or {})},
            timeout=60,
            check=False,
        )

    def spooled(self, home: Path | None = None) -> list[Path]:
        folder = Path(rundir.locate({}, home=str(home or self.home)).spool_dir)
        return sorted(folder.iterdir()) if folder.exists() else []

    def log_lines(self, home: Path | None = None) -> list[str]:
        path = Path(rundir.locate({}, home=str(home or self.home)).log_path)
        return path.read_text().splitlines() if path.exists() else []
