"""Parity with the original's hook commands, through the real ``thatch`` console script.

UC-006: a named hook command given Cursor's payload answers in Cursor's
format. UC-009: a session start or a prompt that no daemon answers still
gets the reminder that needs no daemon; a tool call still gets nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from recorded import recorded
from thatch.instructions import reminders as reminder_text

from integration.conftest import Runner
from integration.hook_runs import Hooks

SAVE = reminder_text.SAVE_REMINDER
SESSION = reminder_text.SESSION_REMINDER_STATIC
MEMORY = "gift-card-refunds"


def cursor(name: str, project: Path, **changes: Any) -> str:
    """The recorded Cursor payload ``name``, in ``project``."""
    return json.dumps(recorded("cursor", name, workspace_roots=[str(project)], **changes))


def claude(name: str, project: Path, **changes: Any) -> bytes:
    return json.dumps(recorded("claude", name, cwd=str(project), **changes)).encode()


def cursor_context(stdout: str) -> str:
    """The context a Cursor hook's stdout adds; fails unless it is Cursor's JSON alone."""
    answer = json.loads(stdout)
    assert list(answer) == ["additional_context"]
    return str(answer["additional_context"])


@pytest.mark.slow
def test_uc006_named_commands_answer_cursor_payloads_in_cursors_format(
    daemon: Any, thatch: Runner, tmp_path: Path
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    thatch("remember", MEMORY, "Gift card partial refunds go through the ledger service")
    thatch(
        "predictions", "update", "--matcher", "adding a refund path",
        "--prediction", "reuse the card refund flow", "--signal", "create", "--store", "global",
    )  # fmt: skip

    def run(command: str, payload: str, *args: str) -> str:
        completed = thatch(command, *args, input=payload, cwd=project)
        assert completed.stderr == ""
        return completed.stdout

    for args in ((), ("--json",)):
        started = run("reminder", cursor("session_start", project), *args)
        assert cursor_context(started).startswith(reminder_text.SESSION_TITLE)

    # beforeSubmitPrompt cannot carry context: the nudges wait for the next tool call.
    prompt = "Add partial refunds for gift cards the way card refunds work"
    assert (
        run("flush-tools", cursor("before_submit_prompt", project, prompt=prompt), "--json") == ""
    )
    tool = cursor("post_tool_use", project, tool_use_id="toolu_parity_1")
    assert MEMORY in cursor_context(run("buffer-tool", tool))

    predicted = cursor("before_submit_prompt", project, prompt="Add a refund path for gift cards")
    assert run("flush-predictions", predicted) == ""
    tool = cursor("post_tool_use", project, tool_use_id="toolu_parity_2")
    assert "reuse the card refund flow" in cursor_context(run("buffer-tool", tool))


def test_uc009_no_daemon_a_prompt_still_gets_the_save_reminder(hooks: Hooks) -> None:
    completed = hooks.run("flush-tools", stdin=claude("user_prompt_submit", hooks.cwd))
    assert completed.returncode == 0
    assert completed.stdout.decode() == SAVE + "\n"
    assert len(hooks.spooled()) == 1  # the event is kept for the daemon all the same
    (line,) = hooks.log_lines()
    assert "needs no daemon" in line


def test_uc009_no_daemon_a_session_start_gets_how_to_recall_and_save(hooks: Hooks) -> None:
    completed = hooks.run("reminder", "--json", stdin=claude("session_start", hooks.cwd))
    assert completed.returncode == 0
    answer = json.loads(completed.stdout)["hookSpecificOutput"]
    assert answer == {"hookEventName": "SessionStart", "additionalContext": SESSION}
    assert reminder_text.RECALL_LINE in SESSION
    assert reminder_text.SAVE_LINE in SESSION


def test_uc009_a_hung_daemon_still_leaves_cursor_its_session_reminder(hooks: Hooks) -> None:
    fake = hooks.daemon(lambda request: None)
    payload = cursor("session_start", hooks.cwd).encode()
    completed = hooks.run(
        "hook", "cursor", "sessionStart", stdin=payload, env={"THATCH_HOOK_TIMEOUT_MS": "200"}
    )
    fake.release.set()
    assert completed.returncode == 0
    assert cursor_context(completed.stdout.decode()) == SESSION
    # Cursor's prompt hook cannot add context, so it stays silent.
    prompt = cursor("before_submit_prompt", hooks.cwd).encode()
    assert hooks.run("hook", "cursor", "beforeSubmitPrompt", stdin=prompt).stdout == b""


def test_uc009_an_error_answer_still_gets_the_save_reminder(hooks: Hooks) -> None:
    hooks.daemon(lambda request: {"ok": False, "error": "storage is locked"})
    completed = hooks.run("hook", "claude", "UserPromptSubmit")
    assert completed.stdout.decode() == SAVE + "\n"


@pytest.mark.parametrize(
    ("command", "payload"),
    [
        pytest.param(("buffer-tool",), "post_tool_use", id="tool-call"),
        pytest.param(("hook", "claude", "Stop"), "stop", id="stop"),
        pytest.param(("flush-predictions",), "user_prompt_submit", id="decision-model-only"),
    ],
)
def test_uc009_hooks_whose_answer_nobody_reads_stay_silent_without_a_daemon(
    hooks: Hooks, command: tuple[str, ...], payload: str
) -> None:
    completed = hooks.run(*command, stdin=claude(payload, hooks.cwd))
    assert completed.returncode == 0
    assert completed.stdout == b""
    assert len(hooks.spooled()) == 1
