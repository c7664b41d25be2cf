"""``thatch hook claude EVENT`` end to end in the daemon's handler: the plugin's parse,
core's recording and nudges, and the plugin's delivery, on a real runtime."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import thatch_claude.plugin
from daemon_hooks import EXTRACTION_MARK, RuntimeFactory
from framed import data_lines
from recorded import recorded
from thatch.runtime import Runtime
from thatch.testing import EventRecorder, send_hook

SESSION = "claude-session-1"


@pytest.fixture
def app(runtimes: RuntimeFactory, workdir: Path, observer: EventRecorder) -> Runtime:
    return runtimes(thatch_claude.plugin, observer)


def payload(name: str, workdir: Path, **changes: Any) -> dict[str, Any]:
    data = recorded("claude", name)
    if "conversation_id" not in data:
        data.update(session_id=SESSION, cwd=str(workdir))
    data.update(changes)
    return data


def hook(app: Runtime, event: str, body: dict[str, Any], harness: str = "claude") -> str:
    """What ``thatch hook claude EVENT`` prints, then the daemon's deferred bookkeeping."""
    return send_hook(app, harness, event, body)


def prompt(app: Runtime, workdir: Path, text: str) -> str:
    return hook(app, "UserPromptSubmit", payload("user_prompt_submit", workdir, prompt=text))


def test_a_session_start_prints_the_reminder_as_plain_text(app: Runtime, workdir: Path) -> None:
    text = hook(app, "SessionStart", payload("session_start", workdir))
    assert text.startswith("[thatch] Memory for this session")


def test_a_batch_is_queued_and_the_next_prompt_asks_to_save_it(app: Runtime, workdir: Path) -> None:
    assert hook(app, "PostToolBatch", payload("post_tool_batch", workdir)) == ""
    assert [item.tool_name for item in app.sessions.pending(SESSION)] == ["Bash", "Read", "Grep"]
    text = prompt(app, workdir, "Now add partial refunds for gift cards the same way")
    assert EXTRACTION_MARK in text
    assert f'session_id="{SESSION}"' in text
    assert not text.startswith("{")  # plain text: Claude reads UserPromptSubmit stdout


def test_a_recorded_failure_is_queued_with_its_error_text(app: Runtime, workdir: Path) -> None:
    body = payload("post_tool_use_failure", workdir)
    assert hook(app, "PostToolUseFailure", body) == ""
    (item,) = app.sessions.pending(SESSION)
    assert (item.tool_name, item.call_id, item.failed) == ("Bash", body["tool_use_id"], True)
    assert item.tool_response == "error: " + body["error"]
    assert "gift_cards.py" in item.tool_input
    text = prompt(app, workdir, "Why did the gift card refund fail?")
    framed = data_lines(text)  # the recorded output is data, inside the framing
    assert "[1] Bash (failed)" in framed
    assert any(line.startswith("response: error: Exit code 1") for line in framed)
    assert any("KeyError: 'ledger_account'" in line for line in framed)


def test_an_interrupted_call_is_queued_as_interrupted(app: Runtime, workdir: Path) -> None:
    hook(app, "PostToolUseFailure", payload("post_tool_use_failure_interrupt", workdir))
    (item,) = app.sessions.pending(SESSION)
    assert item.failed
    assert item.tool_response.startswith("interrupted by the user: [Request interrupted")


def test_a_failed_call_its_batch_repeats_is_queued_once(
    app: Runtime, workdir: Path, observer: EventRecorder
) -> None:
    hook(app, "PostToolUseFailure", payload("post_tool_use_failure", workdir))
    hook(app, "PostToolBatch", payload("post_tool_batch_with_failure", workdir))
    queued = app.sessions.pending(SESSION)
    assert [(item.tool_name, item.failed) for item in queued] == [("Bash", True), ("Read", False)]
    assert queued[0].tool_response.startswith("error: Exit code 1")
    # Observers see every call once too.
    calls = [call.name for event in observer.events for call in event.tool_calls]
    assert calls == ["Bash", "Read"]


def test_task_notifications_get_no_nudges(app: Runtime, workdir: Path) -> None:
    hook(app, "PostToolBatch", payload("post_tool_batch", workdir))
    notice = "<task-notification><task-id>7</task-id><status>completed</status></task-notification>"
    assert prompt(app, workdir, notice) == ""
    state = app.sessions.state(SESSION)
    assert state is not None
    assert state.nudge_level == 0  # nothing was shown, so nothing escalates
    assert EXTRACTION_MARK in prompt(app, workdir, "Carry on with the refunds")


def test_compaction_silences_prompts_until_claude_starts_again(app: Runtime, workdir: Path) -> None:
    hook(app, "PostToolBatch", payload("post_tool_batch", workdir))
    assert hook(app, "PreCompact", payload("pre_compact", workdir)) == ""
    assert prompt(app, workdir, "Now add partial refunds for gift cards") == ""
    restarted = hook(app, "SessionStart", payload("session_start", workdir, source="compact"))
    assert restarted.startswith("[thatch] Memory for this session")
    assert EXTRACTION_MARK in prompt(app, workdir, "Now add partial refunds for gift cards")


@pytest.mark.parametrize(
    ("event", "name", "kind", "source"),
    [
        ("Stop", "stop", "stop", None),
        ("SubagentStop", "subagent_stop", "subagent_stop", None),
        ("SessionEnd", "session_end", "session_end", "prompt_input_exit"),
        ("PostToolUse", "post_tool_use", "tool_use", None),
        ("PostToolUseFailure", "post_tool_use_failure", "tool_use", None),
    ],
)
def test_other_events_are_recorded_and_answered_with_nothing(
    app: Runtime,
    workdir: Path,
    observer: EventRecorder,
    event: str,
    name: str,
    kind: str,
    source: str | None,
) -> None:
    assert hook(app, event, payload(name, workdir)) == ""
    (seen,) = observer.events
    assert (seen.kind, seen.hook_event, seen.source, seen.cwd) == (
        kind,
        event,
        source,
        str(workdir),
    )


def test_a_malformed_payload_is_logged_and_answered_with_nothing(
    app: Runtime, workdir: Path, observer: EventRecorder, caplog: pytest.LogCaptureFixture
) -> None:
    body = payload("post_tool_batch", workdir, tool_calls="Bash")
    with caplog.at_level(logging.WARNING, logger="thatch"):
        assert hook(app, "PostToolBatch", body) == ""
    assert "'tool_calls'" in caplog.text
    assert observer.events == []


def test_a_cursor_event_reported_twice_is_processed_once(
    app: Runtime, workdir: Path, observer: EventRecorder
) -> None:
    # Cursor runs the Claude hook and its own: two hook calls, two event ids, one event.
    hook(app, "PostToolUse", payload("cursor/post_tool_use", workdir))
    body = payload("cursor/user_prompt_submit", workdir)
    first = hook(app, "UserPromptSubmit", body)
    assert EXTRACTION_MARK in first
    assert hook(app, "UserPromptSubmit", body) == ""
    assert [event.kind for event in observer.events] == ["tool_use", "prompt"]
    state = app.sessions.state(body["conversation_id"])
    assert state is not None
    assert state.prompts == 1
    # The next generation is a new prompt.
    again = hook(app, "UserPromptSubmit", body | {"generation_id": "next-generation"})
    assert EXTRACTION_MARK in again
    state = app.sessions.state(body["conversation_id"])
    assert state is not None
    assert (state.prompts, state.nudge_level) == (2, 2)


def test_the_cursor_plugin_and_this_one_process_a_shared_event_once(
    runtimes: RuntimeFactory, workdir: Path, observer: EventRecorder
) -> None:
    cursor_plugin = pytest.importorskip("thatch_cursor.plugin")
    app = runtimes(thatch_claude.plugin, cursor_plugin, observer)
    body = payload("cursor/user_prompt_submit", workdir)
    hook(app, "UserPromptSubmit", body)
    hook(app, "beforeSubmitPrompt", body, harness="cursor")
    assert [event.harness for event in observer.events] == ["claude"]
