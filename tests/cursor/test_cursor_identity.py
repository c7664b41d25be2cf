"""One Cursor event reported through both plugins is processed once.

Cursor runs Claude Code's hooks too, so with both set up the same event
reaches ``thatch hook cursor EVENT`` and ``thatch hook claude Event``. The
Claude hook gets the same JSON with Claude Code's event name; both plugins
must give it the same identity, and core must keep only the first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
import thatch_claude.plugin
import thatch_cursor.plugin
from daemon_hooks import RuntimeFactory
from recorded import Payload
from thatch.runtime import Runtime
from thatch.sessions.store import SessionStore
from thatch.testing import EventRecorder, plugins_with, send_hook

#: Each Cursor event Claude Code also has, with Claude Code's name for it.
CLAUDE_NAMES = {
    "sessionStart": "SessionStart",
    "beforeSubmitPrompt": "UserPromptSubmit",
    "postToolUse": "PostToolUse",
}


def as_claude(body: dict[str, Any], claude_event: str) -> dict[str, Any]:
    """The payload as Cursor passes it to a Claude Code hook."""
    return {**body, "hook_event_name": claude_event}


@pytest.fixture
def plugins() -> Any:
    return plugins_with(thatch_cursor.plugin, thatch_claude.plugin)


@pytest.mark.parametrize(("cursor_event", "claude_event"), CLAUDE_NAMES.items())
def test_both_plugins_give_the_event_one_identity(
    plugins: Any, payload: Payload, cursor_event: str, claude_event: str
) -> None:
    body = payload(cursor_event)
    cursor = plugins.harness("cursor").parse_event(cursor_event, body)
    claude = plugins.harness("claude").parse_event(claude_event, as_claude(body, claude_event))
    assert (cursor.harness, claude.harness) == ("cursor", "claude")
    assert cursor.identity is not None
    assert cursor.identity == claude.identity
    assert (cursor.kind, cursor.session_id) == (claude.kind, claude.session_id)


@pytest.mark.parametrize(
    ("cursor_event", "field", "other"),
    [
        ("postToolUse", "tool_use_id", "toolu_other"),
        ("beforeSubmitPrompt", "generation_id", "gen-other"),
        ("sessionStart", "conversation_id", "conv-other"),
        ("postToolUse", "conversation_id", "conv-other"),
    ],
)
def test_different_events_keep_different_identities(
    plugins: Any, payload: Payload, cursor_event: str, field: str, other: str
) -> None:
    first = plugins.harness("cursor").parse_event(cursor_event, payload(cursor_event))
    second = plugins.harness("cursor").parse_event(
        cursor_event, payload(cursor_event, **{field: other})
    )
    assert first.identity != second.identity
    claude_event = CLAUDE_NAMES[cursor_event]
    via_claude = plugins.harness("claude").parse_event(
        claude_event, as_claude(payload(cursor_event, **{field: other}), claude_event)
    )
    assert via_claude.identity == second.identity


def test_the_session_store_keeps_the_first_report_only(
    plugins: Any, payload: Payload, tmp_path: Path
) -> None:
    body = payload("postToolUse")
    cursor = plugins.harness("cursor").parse_event("postToolUse", body)
    claude = plugins.harness("claude").parse_event("PostToolUse", as_claude(body, "PostToolUse"))
    store = SessionStore(tmp_path / "sessions.db")
    try:
        assert store.record(attrs.evolve(claude, event_id="claude-hook"), []) is True
        assert store.record(attrs.evolve(cursor, event_id="cursor-hook"), []) is False
    finally:
        store.close()


# -- through the daemon ------------------------------------------------------------
@pytest.fixture
def app(runtimes: RuntimeFactory, observer: EventRecorder) -> Runtime:
    """The daemon's runtime with sqlite, core's builtins and both harness plugins."""
    return runtimes(thatch_cursor.plugin, thatch_claude.plugin, observer)


def hook(app: Runtime, harness: str, event: str, body: dict[str, Any]) -> str:
    """What ``thatch hook HARNESS EVENT`` prints, then the daemon's deferred bookkeeping."""
    return send_hook(app, harness, event, body)


def in_project(payload: Payload, event: str, project: Path) -> dict[str, Any]:
    return payload(event, cwd=str(project), workspace_roots=[str(project)])


def test_a_tool_call_reported_twice_is_observed_and_queued_once(
    app: Runtime, observer: EventRecorder, payload: Payload, project: Path
) -> None:
    body = in_project(payload, "postToolUse", project)
    assert hook(app, "cursor", "postToolUse", body) == ""
    assert hook(app, "claude", "PostToolUse", as_claude(body, "PostToolUse")) == ""
    assert [event.harness for event in observer.events] == ["cursor"]
    (queued,) = app.sessions.pending(body["conversation_id"])
    assert queued.call_id == body["tool_use_id"]


def test_a_prompt_reported_twice_is_nudged_once_in_cursors_format(
    app: Runtime, observer: EventRecorder, payload: Payload, project: Path
) -> None:
    hook(app, "cursor", "postToolUse", in_project(payload, "postToolUse", project))
    body = in_project(payload, "beforeSubmitPrompt", project)
    # beforeSubmitPrompt carries no context: the nudge waits for the next tool call.
    assert hook(app, "cursor", "beforeSubmitPrompt", body) == ""
    assert hook(app, "claude", "UserPromptSubmit", as_claude(body, "UserPromptSubmit")) == ""
    assert [event.kind for event in observer.events] == ["tool_use", "prompt"]
    later = in_project(payload, "postToolUse", project) | {"tool_use_id": "toolu_next"}
    answer = json.loads(hook(app, "cursor", "postToolUse", later))
    assert "uv run pytest -q tests/payments" in answer["additional_context"]


def test_the_session_start_reminder_reaches_cursor_as_json(
    app: Runtime, payload: Payload, project: Path
) -> None:
    text = hook(app, "cursor", "sessionStart", in_project(payload, "sessionStart", project))
    assert json.loads(text)["additional_context"]
