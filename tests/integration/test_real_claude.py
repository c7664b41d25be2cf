"""The real Claude Code CLI, set up by `thatch setup --claude`, reaching thatch as a user's would.

Claude Code runs hooks through ``/bin/sh`` and starts MCP servers with the
PATH of the shell that started it: never `uv run`'s, never a virtualenv's.
So Claude runs here with a temporary HOME, a PATH of node and the system
folders only, and no daemon running: the first hook starts it.

Two ways a user sets thatch up, each against every pinned Claude Code:

- from the checkout, ``uv run thatch setup --claude`` (setup must write the
  absolute path of the checkout's console script: the bare name is not on
  Claude's PATH);
- after the README's daily-use install (``uv tool install``), plain
  ``thatch setup --claude`` (setup writes the bare name).

No account is needed: ``claude mcp list`` starts the registered servers,
and ``claude -p`` fires SessionStart and UserPromptSubmit before it fails at
the API, recording each hook's output in the session transcript.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness_clis import CLAUDE_VERSIONS, harness_cli, user_env, user_path

from .conftest import ROOT, THATCH, make_repo, stop_daemons

pytestmark = pytest.mark.slow

MEMORY = "Refunds must go through the ledger service, never by editing the orders table."


class Session:
    """One user's machine: a HOME, a thatch home, a project, and the PATH Claude gets."""

    def __init__(self, tmp_path: Path, claude_version: str, path: str) -> None:
        self.claude = harness_cli("claude", claude_version)
        self.user_home = tmp_path / "user"
        self.user_home.mkdir()
        self.thatch_home = tmp_path / "thatch-home"
        self.project = make_repo(tmp_path / "shop", "git@github.com:acme/shop.git")
        self.env = user_env(self.user_home, path)

    def thatch(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Run this checkout's thatch (by absolute path) as the user, with THATCH_HOME set."""
        done = subprocess.run(
            [str(THATCH), *args],
            cwd=self.project,
            env={**(env or self.env), "THATCH_HOME": str(self.thatch_home)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def run(
        self, argv: list[str], env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv,
            cwd=self.project,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    def trust_folder(self) -> None:
        """What the user does when Claude Code first opens the folder: accept its trust dialog.

        Claude Code 2.1.332 lists a project's `.mcp.json` servers as pending
        until then (2.1.197 needs only the approval setup writes).
        """
        config = self.user_home / ".claude.json"
        data = json.loads(config.read_text()) if config.exists() else {}
        data.setdefault("projects", {}).setdefault(str(self.project.resolve()), {})[
            "hasTrustDialogAccepted"
        ] = True
        config.write_text(json.dumps(data))

    def hook_commands(self) -> list[str]:
        settings = json.loads((self.project / ".claude" / "settings.json").read_text())
        return [
            hook["command"]
            for entries in settings["hooks"].values()
            for entry in entries
            for hook in entry["hooks"]
        ]

    def hook_outputs(self) -> dict[str, str]:
        """Each hook_success attachment's content in the transcripts, by hook event."""
        found: dict[str, str] = {}
        for transcript in (self.user_home / ".claude" / "projects").rglob("*.jsonl"):
            for line in transcript.read_text().splitlines():
                attachment = json.loads(line).get("attachment") or {}
                if attachment.get("type") == "hook_success" and attachment.get("content"):
                    found.setdefault(attachment["hookEvent"], attachment["content"])
        return found

    def stop_daemon(self) -> None:
        stop_daemons({**self.env, "THATCH_HOME": str(self.thatch_home)})


@pytest.fixture
def stops() -> Iterator[list[Session]]:
    """Sessions whose daemons are stopped at the end, however the test ends."""
    started: list[Session] = []
    yield started
    for session in started:
        session.stop_daemon()


def reaches_claude(session: Session) -> None:
    """With no daemon running: MCP connects, SessionStart reminds, the first prompt recalls."""
    session.trust_folder()
    listed = session.run([str(session.claude), "mcp", "list"])
    line = next((line for line in listed.stdout.splitlines() if line.startswith("thatch")), "")
    assert "Connected" in line, listed.stdout + listed.stderr
    session.stop_daemon()  # `thatch mcp` started one; the session must begin cold

    session.run([str(session.claude), "-p", "How should I implement refunds in this shop?"])
    outputs = session.hook_outputs()
    assert "acme/shop" in outputs.get("SessionStart", ""), outputs
    assert "[thatch] Memories" in outputs.get("UserPromptSubmit", ""), outputs
    assert "refunds-via-ledger" in outputs["UserPromptSubmit"]

    # Every hook command setup wrote starts and exits 0 from the user's PATH.
    for command in dict.fromkeys(session.hook_commands()):
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            input="{}",
            env={**session.env, "THATCH_NO_AUTOSTART": "1"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, (command, done.stderr)


@pytest.mark.parametrize("version", CLAUDE_VERSIONS)
def test_setup_from_the_checkout_with_uv_run(
    version: str, tmp_path: Path, stops: list[Session]
) -> None:
    uv = shutil.which("uv")
    assert uv is not None, "uv runs the README's commands"
    session = Session(tmp_path, version, user_path())
    stops.append(session)
    session.thatch("remember", "refunds-via-ledger", MEMORY)
    # The README's command, run from the user's shell in their project.
    setup = session.run(
        [uv, "run", "--project", str(ROOT), "--frozen", "thatch", "setup", "--claude"],
        env={
            **session.env,
            "THATCH_HOME": str(session.thatch_home),
            "PATH": user_path(Path(uv).parent),
        },
    )
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert f"harnesses will run: {THATCH}" in setup.stdout
    assert "not on your PATH" in setup.stdout
    for command in session.hook_commands():
        assert shlex.split(command)[1] == str(THATCH), command
    reaches_claude(session)

    # Setup is idempotent and its uninstall leaves the project as it was.
    assert "nothing to change" in session.thatch("setup", "--claude")
    session.thatch("setup", "--claude", "--uninstall")
    leftovers = sorted(
        str(p.relative_to(session.project))
        for p in session.project.rglob("*")
        if ".git" not in p.parts
    )
    assert leftovers == []


@pytest.mark.parametrize("version", CLAUDE_VERSIONS)
def test_setup_after_the_daily_use_install_writes_the_bare_name(
    version: str, tmp_path: Path, daily_bin: Path, stops: list[Session]
) -> None:
    session = Session(tmp_path, version, user_path(daily_bin))
    stops.append(session)
    env: dict[str, Any] = {**session.env, "THATCH_HOME": str(session.thatch_home)}
    remembered = session.run(["thatch", "remember", "refunds-via-ledger", MEMORY], env=env)
    assert remembered.returncode == 0, remembered.stderr
    setup = session.run(["thatch", "setup", "--claude"], env=env)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "harnesses will run: thatch\n" in setup.stdout
    for command in session.hook_commands():
        assert shlex.split(command)[1] == "thatch", command
    mcp = json.loads((session.project / ".mcp.json").read_text())["mcpServers"]["thatch"]
    assert mcp["command"] == "thatch"
    reaches_claude(session)
