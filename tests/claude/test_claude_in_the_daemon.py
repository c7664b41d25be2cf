"""``thatch hook claude EVENT`` end to end in the daemon's handler: the plugin's parse,
core's recording and nudges, and the plugin's delivery, on a real runtime."""

from __future__ import annotations

import importlib
import json
import logging
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import thatch_claude.plugin
import thatch_sqlite.plugin
from thatch import hookimpl
from thatch.builtin import BUILTIN_PLUGINS
from thatch.config import Config
from thatch.daemon.hook_events import handle_hook
from thatch.events import Event
from thatch.runtime import Runtime
from thatch.testing import plugins_with

DATA = Path(__file__).parent.parent / "data" / "claude"
SESSION = "claude-session-1"
EXTRACTION_MARK = "from this session may hold knowledge worth keeping"


class Observer:
    """Records every event shown to ``thatch_ingest``."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    @hookimpl
    def thatch_ingest(self, event: Event, app: Runtime) -> None:
        self.events.append(event)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder outside git, also the working directory."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def observer() -> Observer:
    return Observer()


@pytest.fixture
def app(home: Path, project: Path, observer: Observer) -> Iterator[Runtime]:
    builtins = [importlib.import_module(module) for module in BUILTIN_PLUGINS.values()]
    plugins = plugins_with(thatch_sqlite.plugin, *builtins, thatch_claude.plugin, observer)
    runtime = Runtime(Config.load(home, environ={}), plugins)
    yield runtime
    runtime.close()


def payload(name: str, project: Path, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    if "conversation_id" not in data:
        data.update(session_id=SESSION, cwd=str(project))
    data.update(changes)
    return data


def hook(app: Runtime, event: str, body: dict[str, Any], **extra: Any) -> str:
    """What ``thatch hook claude EVENT`` prints, then the daemon's deferred bookkeeping."""
    sent = {
        "command": "hook",
        "harness": "claude",
        "event": event,
        "payload": body,
        "event_id": uuid.uuid4().hex,
        "received_at": time.time(),
        "cwd": None,
        "env": {},
        "json": False,
        **extra,
    }
    text = handle_hook(app, sent)
    app.run_deferred()
    return text


def prompt(app: Runtime, project: Path, text: str) -> str:
    return hook(app, "UserPromptSubmit", payload("user_prompt_submit", project, prompt=text))


def test_a_session_start_prints_the_reminder_as_plain_text(app: Runtime, project: Path) -> None:
    text = hook(app, "SessionStart", payload("session_start", project))
    assert text.startswith("[thatch] Memory for this session")


def test_a_batch_is_queued_and_the_next_prompt_asks_to_save_it(app: Runtime, project: Path) -> None:
    assert hook(app, "PostToolBatch", payload("post_tool_batch", project)) == ""
    assert [item.tool_name for item in app.sessions.pending(SESSION)] == ["Bash", "Read", "Grep"]
    text = prompt(app, project, "Now add partial refunds for gift cards the same way")
    assert EXTRACTION_MARK in text
    assert f'session_id="{SESSION}"' in text
    assert not text.startswith("{")  # plain text: Claude reads UserPromptSubmit stdout


def test_task_notifications_get_no_nudges(app: Runtime, project: Path) -> None:
    hook(app, "PostToolBatch", payload("post_tool_batch", project))
    notice = "<task-notification><task-id>7</task-id><status>completed</status></task-notification>"
    assert prompt(app, project, notice) == ""
    state = app.sessions.state(SESSION)
    assert state is not None
    assert state.nudge_level == 0  # nothing was shown, so nothing escalates
    assert EXTRACTION_MARK in prompt(app, project, "Carry on with the refunds")


def test_compaction_silences_prompts_until_claude_starts_again(app: Runtime, project: Path) -> None:
    hook(app, "PostToolBatch", payload("post_tool_batch", project))
    assert hook(app, "PreCompact", payload("pre_compact", project)) == ""
    assert prompt(app, project, "Now add partial refunds for gift cards") == ""
    restarted = hook(app, "SessionStart", payload("session_start", project, source="compact"))
    assert restarted.startswith("[thatch] Memory for this session")
    assert EXTRACTION_MARK in prompt(app, project, "Now add partial refunds for gift cards")


@pytest.mark.parametrize(
    ("event", "name", "kind", "source"),
    [
        ("Stop", "stop", "stop", None),
        ("SubagentStop", "subagent_stop", "subagent_stop", None),
        ("SessionEnd", "session_end", "session_end", "prompt_input_exit"),
        ("PostToolUse", "post_tool_use", "tool_use", None),
    ],
)
def test_other_events_are_recorded_and_answered_with_nothing(
    app: Runtime,
    project: Path,
    observer: Observer,
    event: str,
    name: str,
    kind: str,
    source: str | None,
) -> None:
    assert hook(app, event, payload(name, project)) == ""
    (seen,) = observer.events
    assert (seen.kind, seen.hook_event, seen.source, seen.cwd) == (
        kind,
        event,
        source,
        str(project),
    )


def test_a_malformed_payload_is_logged_and_answered_with_nothing(
    app: Runtime, project: Path, observer: Observer, caplog: pytest.LogCaptureFixture
) -> None:
    body = payload("post_tool_batch", project, tool_calls="Bash")
    with caplog.at_level(logging.WARNING, logger="thatch"):
        assert hook(app, "PostToolBatch", body) == ""
    assert "'tool_calls'" in caplog.text
    assert observer.events == []


def test_a_cursor_event_reported_twice_is_processed_once(
    app: Runtime, project: Path, observer: Observer
) -> None:
    # Cursor runs the Claude hook and its own: two hook calls, two event ids, one event.
    hook(app, "PostToolUse", payload("cursor/post_tool_use", project))
    body = payload("cursor/user_prompt_submit", project)
    first = hook(app, "UserPromptSubmit", body)
    assert EXTRACTION_MARK in first
    assert hook(app, "UserPromptSubmit", body) == ""
    assert [event.kind for event in observer.events] == ["tool_use", "prompt"]
    state = app.sessions.state(body["conversation_id"])
    assert state is not None
    assert state.prompts == 1
    # The next generation is a new prompt.
    again = hook(app, "UserPromptSubmit", body | {"generation_id": "next-generation"})
    assert again.startswith("[thatch] Reminder:")


def test_the_cursor_plugin_and_this_one_process_a_shared_event_once(
    home: Path, project: Path, observer: Observer
) -> None:
    cursor_plugin = pytest.importorskip("thatch_cursor.plugin")
    builtins = [importlib.import_module(module) for module in BUILTIN_PLUGINS.values()]
    plugins = plugins_with(
        thatch_sqlite.plugin, *builtins, thatch_claude.plugin, cursor_plugin, observer
    )
    app = Runtime(Config.load(home, environ={}), plugins)
    try:
        body = payload("cursor/user_prompt_submit", project)
        hook(app, "UserPromptSubmit", body)
        hook(app, "beforeSubmitPrompt", body, harness="cursor")
        assert [event.harness for event in observer.events] == ["claude"]
    finally:
        app.close()
