"""``thatch hook opencode EVENT`` in the daemon's handler: this plugin's parse and delivery,
core's recording and nudges, on a real runtime with the recorded payloads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import thatch_opencode.plugin
from daemon_hooks import RuntimeFactory
from recorded import recorded
from thatch.runtime import Runtime
from thatch.testing import EventRecorder, send_hook

SESSION = "ses_opencode_1"
EXTRACTION_MARK = "from this session may hold knowledge worth keeping"


@pytest.fixture
def app(runtimes: RuntimeFactory, workdir: Path, observer: EventRecorder) -> Runtime:
    return runtimes(thatch_opencode.plugin, observer)


def payload(name: str, workdir: Path, **changes: Any) -> dict[str, Any]:
    return recorded("opencode", name, session_id=SESSION, cwd=str(workdir), **changes)


def hook(app: Runtime, event: str, body: dict[str, Any]) -> str:
    """What ``thatch hook opencode EVENT`` prints, then the daemon's deferred bookkeeping."""
    return send_hook(app, "opencode", event, body)


def prompt(app: Runtime, workdir: Path, text: str, message_id: str) -> str:
    parts = [{"text": text, "synthetic": False}]
    body = payload("chat_message", workdir, parts=parts, message_id=message_id)
    return hook(app, "chat.message", body)


def test_a_new_session_gets_the_briefing_as_plain_text(app: Runtime, workdir: Path) -> None:
    text = hook(app, "session.created", payload("session_created", workdir))
    assert text.startswith("[thatch] Memory for this session")


def test_a_tool_call_is_queued_and_the_next_prompt_asks_to_save_it(
    app: Runtime, workdir: Path
) -> None:
    assert hook(app, "tool.execute.after", payload("tool_execute_after", workdir)) == ""
    assert [item.tool_name for item in app.sessions.pending(SESSION)] == ["bash"]
    text = prompt(app, workdir, "Now wire the deploy script into CI", "msg_1")
    assert EXTRACTION_MARK in text
    assert f'session_id="{SESSION}"' in text
    assert not text.startswith("{")  # plain text: the JS plugin makes it a message part


def test_thatch_own_tools_are_not_queued(app: Runtime, workdir: Path) -> None:
    body = payload("tool_execute_after", workdir, tool="thatch_memory_recall")
    hook(app, "tool.execute.after", body)
    assert app.sessions.pending(SESSION) == []


def test_compaction_silences_prompts_until_it_is_over(app: Runtime, workdir: Path) -> None:
    hook(app, "tool.execute.after", payload("tool_execute_after", workdir))
    compacting = payload("session_compacting", workdir)
    assert hook(app, "experimental.session.compacting", compacting) == ""
    assert prompt(app, workdir, "Now wire the deploy script into CI", "msg_1") == ""
    restarted = hook(app, "session.compacted", payload("session_compacted", workdir))
    assert restarted.startswith("[thatch] Memory for this session")
    assert EXTRACTION_MARK in prompt(app, workdir, "Now wire the deploy script into CI", "msg_2")


def test_a_message_forwarded_by_two_copies_of_the_plugin_counts_once(
    app: Runtime, workdir: Path, observer: EventRecorder
) -> None:
    # Set up globally and in the project, opencode loads the plugin twice.
    hook(app, "tool.execute.after", payload("tool_execute_after", workdir))
    assert hook(app, "tool.execute.after", payload("tool_execute_after", workdir)) == ""
    first = prompt(app, workdir, "Now wire the deploy script into CI", "msg_1")
    assert EXTRACTION_MARK in first
    assert prompt(app, workdir, "Now wire the deploy script into CI", "msg_1") == ""
    assert [event.kind for event in observer.events] == ["tool_use", "prompt"]
    state = app.sessions.state(SESSION)
    assert state is not None
    assert state.prompts == 1


def test_a_malformed_payload_is_answered_with_nothing(
    app: Runtime, workdir: Path, observer: EventRecorder
) -> None:
    body = payload("chat_message", workdir, parts="not a list")
    assert hook(app, "chat.message", body) == ""
    assert observer.events == []
