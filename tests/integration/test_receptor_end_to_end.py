"""The receptor end to end: recorded Claude Code payloads through the real hook commands.

As a user's machine runs them: this checkout's ``thatch`` by absolute path,
with a temporary HOME, a PATH of the system folders only, and no daemon
running — the first hook starts it, with the real model. The agent edits and
runs a failing test again and again; the receptor reads the streak in the
daemon, looks for knowledge, and the next tool hook's answer carries one item
naming the memory that explains the error.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from harness_clis import user_env, user_path

from .conftest import THATCH, claude_payload, make_repo, stop_daemons

pytestmark = pytest.mark.slow

SESSION = "3f1c2a9e-receptor-4c1e-9a55-0d2f6e8b1c47"
MEMORY = (
    "gift-card-ledger-accounts",
    "Gift cards get their ledger account when they are issued (LedgerService.open_account); "
    "a KeyError 'ledger_account' in a refund test means its fixture issued the card without one.",
)
OTHERS = (
    ("deploy-window", "Deploys happen on Tuesdays after the release review."),
    ("css-naming", "CSS classes in the storefront follow the BEM naming convention."),
    ("money-in-cents", "Money amounts are integers in cents everywhere; never floats."),
)
MARK = "[thatch receptor]"


class Machine:
    """A user's HOME, a thatch home and a project; runs this checkout's thatch as the user."""

    def __init__(self, tmp_path: Path) -> None:
        user_home = tmp_path / "user"
        user_home.mkdir()
        self.project = make_repo(tmp_path / "shop", "git@github.com:acme/shop.git")
        self.env = {
            **user_env(user_home, user_path()),
            "THATCH_HOME": str(tmp_path / "thatch-home"),
        }

    def thatch(
        self, *args: str, payload: Any = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(THATCH), *args],
            cwd=self.project,
            env=self.env,
            input=None if payload is None else json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0 or not check, done.stdout + done.stderr
        return done

    def daemon_warm(self) -> bool:
        done = self.thatch("daemon", "status", "--json", check=False)
        return done.returncode == 0 and bool(json.loads(done.stdout).get("warm"))

    def hook(self, event: str, payload: dict[str, Any]) -> str:
        return self.thatch("hook", "claude", event, payload=payload).stdout

    def status(self) -> dict[str, Any] | None:
        done = self.thatch("receptor", "status", SESSION, "--json", check=False)
        return json.loads(done.stdout) if done.returncode == 0 else None


def failure(machine: Machine, n: int) -> dict[str, Any]:
    return claude_payload(
        "post_tool_use_failure",
        session_id=SESSION,
        cwd=str(machine.project),
        tool_use_id=f"toolu_01Fail{n:014d}",
    )


def edit(machine: Machine, n: int) -> dict[str, Any]:
    """A turn's batch of one Edit: setup hooks PostToolBatch, which reports every call."""
    path = str(machine.project / "src/payments/gift_cards.py")
    call = {
        "tool_name": "Edit",
        "tool_use_id": f"toolu_01Edit{n:014d}",
        "tool_input": {"file_path": path, "old_string": f"try {n}", "new_string": f"try {n + 1}"},
        "tool_response": {"filePath": path, "oldString": f"try {n}", "newString": f"try {n + 1}"},
    }
    return claude_payload(
        "post_tool_batch", session_id=SESSION, cwd=str(machine.project), tool_calls=[call]
    )


def context(answer: str) -> str:
    if not answer.strip():
        return ""
    output = json.loads(answer)["hookSpecificOutput"]
    assert output["hookEventName"] in ("PostToolBatch", "PostToolUseFailure")
    return str(output["additionalContext"])


def wait_for(check: Any, seconds: float = 90.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"nothing after {seconds} s")


def test_a_failure_streak_makes_the_next_tool_hook_carry_one_relevant_memory(
    tmp_path: Path,
) -> None:
    machine = Machine(tmp_path)
    try:
        for label, content in (MEMORY, *OTHERS):
            machine.thatch("remember", label, content)
        start = claude_payload("session_start", session_id=SESSION, cwd=str(machine.project))
        machine.hook("SessionStart", start)
        wait_for(machine.daemon_warm)

        answers = []
        for n in range(4):
            answers.append(machine.hook("PostToolBatch", edit(machine, n)))
            answers.append(machine.hook("PostToolUseFailure", failure(machine, n)))
        status = wait_for(
            lambda: (s := machine.status()) and (s["pending"] or s["deliveries"]) and s
        )
        assert any("frustration" in firing["fired"] for firing in status["firings"]), status

        answers += [machine.hook("PostToolBatch", edit(machine, 10 + n)) for n in range(3)]
        shown = [text for text in map(context, answers) if MARK in text]
        assert len(shown) == 1, shown
        assert MEMORY[0] in shown[0]
        assert all(label not in shown[0] for label, _ in OTHERS)
        assert "pytest" in shown[0]  # it names the wall: the failing command
    finally:
        stop_daemons(machine.env)
