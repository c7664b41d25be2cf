"""Claude Code payloads → core events, through ``ClaudeHarness.parse_event``."""

from __future__ import annotations

from typing import Any

import pytest
import thatch_claude.plugin
from recorded import recorded
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.events import Event, ToolCall, shared_identity
from thatch.testing import plugins_with
from thatch_claude.events import EVENT_KINDS, parse_event
from thatch_claude.failures import ReportedFailures

SESSION = "3f1c2a9e-7b4d-4c1e-9a55-0d2f6e8b1c47"
CWD = "/home/dev/shop"
#: The transcript every recorded Claude Code payload names.
TRANSCRIPT = f"/home/dev/.claude/projects/-home-dev-shop/{SESSION}.jsonl"
CONVERSATION = "c92d1e07-3a4b-4f6c-b815-5e2a9d0f7c31"

#: Event name → recorded payload file.
FILES = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use_failure",
    "PostToolBatch": "post_tool_batch",
    "Stop": "stop",
    "SubagentStop": "subagent_stop",
    "PreCompact": "pre_compact",
    "SessionEnd": "session_end",
}


def load(name: str) -> dict[str, Any]:
    return recorded("claude", name)


def parse(hook_event: str, payload: Any, harness: str = "claude") -> Event | None:
    """The event ``harness`` parses, through the plugin; None when the plugin has no such one."""
    found = plugins_with(thatch_claude.plugin).harness(harness)
    return None if found is None else found.parse_event(hook_event, payload)


def claude_event(kind: Any, hook_event: str, **fields: Any) -> Event:
    fields.setdefault("transcript_path", TRANSCRIPT)
    return Event(
        kind=kind, harness="claude", session_id=SESSION, hook_event=hook_event, cwd=CWD, **fields
    )


def test_every_event_has_a_recorded_payload() -> None:
    assert set(FILES) == set(EVENT_KINDS)
    for hook_event, name in FILES.items():
        assert load(name)["hook_event_name"] == hook_event


def test_session_start() -> None:
    assert parse("SessionStart", load("session_start")) == claude_event(
        "session_start", "SessionStart", source="startup"
    )


def test_user_prompt_submit() -> None:
    assert parse("UserPromptSubmit", load("user_prompt_submit")) == claude_event(
        "prompt", "UserPromptSubmit", prompt="Now add partial refunds for gift cards the same way"
    )


def test_post_tool_use_is_one_call() -> None:
    payload = load("post_tool_use")
    call = ToolCall(
        name="Edit",
        input=payload["tool_input"],
        response=payload["tool_response"],
        call_id="toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8O",
    )
    assert parse("PostToolUse", payload) == claude_event(
        "tool_use", "PostToolUse", tool_calls=(call,)
    )


def test_post_tool_batch_keeps_every_call_in_order() -> None:
    payload = load("post_tool_batch")
    calls = tuple(
        ToolCall(
            name=call["tool_name"],
            input=call["tool_input"],
            response=call["tool_response"],
            call_id=call["tool_use_id"],
        )
        for call in payload["tool_calls"]
    )
    event = parse("PostToolBatch", payload)
    assert event == claude_event("tool_use", "PostToolBatch", tool_calls=calls)
    assert [call.name for call in event.tool_calls] == ["Bash", "Read", "Grep"]


def test_post_tool_use_failure_is_one_failed_call_with_its_error() -> None:
    payload = load("post_tool_use_failure")
    call = ToolCall(
        name="Bash",
        input=payload["tool_input"],
        call_id="toolu_01Fq8Zr2Wm6Yx4Lb9Nc3Hd7K",
        failed=True,
        error=payload["error"],
    )
    assert parse("PostToolUseFailure", payload) == claude_event(
        "tool_use", "PostToolUseFailure", tool_calls=(call,)
    )
    assert payload["error"].startswith("Exit code 1\nFAILED")


def test_an_interrupted_call_is_failed_and_interrupted() -> None:
    event = parse("PostToolUseFailure", load("post_tool_use_failure_interrupt"))
    assert event is not None
    (call,) = event.tool_calls
    assert (call.failed, call.interrupted) == (True, True)
    assert call.error == "[Request interrupted by user for tool use]"


def test_a_failure_payload_without_its_message_is_still_a_failure() -> None:
    payload = load("post_tool_use_failure")
    del payload["error"], payload["is_interrupt"]
    event = parse("PostToolUseFailure", payload)
    assert event is not None
    (call,) = event.tool_calls
    assert (call.failed, call.error, call.interrupted) == (True, None, False)


# -- a failure and the batch that repeats it ----------------------------------------------
def test_the_batch_leaves_out_the_call_its_failure_event_carried() -> None:
    failures = ReportedFailures()
    failure = parse_event("PostToolUseFailure", load("post_tool_use_failure"), failures)
    batch = parse_event("PostToolBatch", load("post_tool_batch_with_failure"), failures)
    (failed,) = failure.tool_calls
    assert [call.name for call in batch.tool_calls] == ["Read"]
    assert failed.call_id not in [call.call_id for call in batch.tool_calls]
    # A call is in one batch: the next batch with that id (a replayed one) keeps it.
    again = parse_event("PostToolBatch", load("post_tool_batch_with_failure"), failures)
    assert [call.name for call in again.tool_calls] == ["Bash", "Read"]


def test_without_a_record_the_batch_keeps_every_call() -> None:
    parse_event("PostToolUseFailure", load("post_tool_use_failure"))
    batch = parse_event("PostToolBatch", load("post_tool_batch_with_failure"))
    assert [call.name for call in batch.tool_calls] == ["Bash", "Read"]
    assert not any(call.failed for call in batch.tool_calls)


def test_a_failure_in_another_session_leaves_the_batch_whole() -> None:
    failures = ReportedFailures()
    parse_event("PostToolUseFailure", load("post_tool_use_failure"), failures)
    other = load("post_tool_batch_with_failure") | {"session_id": "another-session"}
    assert len(parse_event("PostToolBatch", other, failures).tool_calls) == 2


def test_a_cursor_failure_is_not_noted() -> None:
    # Cursor repeats an event through both plugins, caught by identity; it has no batch.
    failures = ReportedFailures()
    cursor_failure = load("post_tool_use_failure") | {"cursor_version": "2.1.46"}
    event = parse_event("PostToolUseFailure", cursor_failure, failures)
    assert event.identity == shared_identity("tool_use", SESSION, "toolu_01Fq8Zr2Wm6Yx4Lb9Nc3Hd7K")
    batch = parse_event("PostToolBatch", load("post_tool_batch_with_failure"), failures)
    assert len(batch.tool_calls) == 2


def test_the_record_forgets_the_oldest_failures_first() -> None:
    failures = ReportedFailures(limit=2)
    calls = [ToolCall(name="Bash", call_id=f"t{n}", failed=True) for n in range(3)]
    failures.note("s", calls)
    failures.note("s", [ToolCall(name="Bash", failed=True)])  # no id: nothing to match
    kept = failures.not_reported("s", [*calls, ToolCall(name="Read")])
    assert [call.call_id for call in kept] == ["t0", None]


def test_the_plugin_parses_with_the_daemons_record() -> None:
    parse("PostToolUseFailure", load("post_tool_use_failure"))
    batch = parse("PostToolBatch", load("post_tool_batch_with_failure"))
    assert batch is not None
    assert [call.name for call in batch.tool_calls] == ["Read"]


@pytest.mark.parametrize(
    ("hook_event", "kind", "source"),
    [
        ("Stop", "stop", None),
        ("SubagentStop", "subagent_stop", None),
        ("PreCompact", "compact", "auto"),
        ("SessionEnd", "session_end", "prompt_input_exit"),
    ],
)
def test_events_without_content(hook_event: str, kind: str, source: str | None) -> None:
    event = parse(hook_event, load(FILES[hook_event]))
    assert event == claude_event(kind, hook_event, source=source)


def test_the_command_line_event_decides_the_kind() -> None:
    # The hook was installed for SessionEnd; a payload naming another event is still an end.
    payload = load("session_end") | {"hook_event_name": "Stop"}
    event = parse("SessionEnd", payload)
    assert event is not None
    assert (event.kind, event.hook_event) == ("session_end", "SessionEnd")


def test_an_empty_prompt_is_a_prompt() -> None:
    event = parse("UserPromptSubmit", load("user_prompt_submit") | {"prompt": ""})
    assert event is not None
    assert event.prompt == ""


def test_a_claude_payload_has_no_identity() -> None:
    for hook_event, name in FILES.items():
        event = parse(hook_event, load(name))
        assert event is not None
        assert event.identity is None, hook_event


def test_other_harnesses_are_left_to_their_plugins() -> None:
    assert parse("UserPromptSubmit", load("user_prompt_submit"), harness="cursor") is None


# -- malformed payloads -----------------------------------------------------------
def _without(key: str) -> Any:
    return lambda data: {k: v for k, v in data.items() if k != key}


def _with(key: str, value: Any) -> Any:
    return lambda data: data | {key: value}


@pytest.mark.parametrize(
    ("hook_event", "change", "field"),
    [
        ("SessionStart", _without("session_id"), "'session_id'"),
        ("Stop", _with("session_id", 42), "'session_id'"),
        ("SessionEnd", _with("session_id", ""), "'session_id'"),
        ("SessionStart", _with("source", 1), "'source'"),
        ("SessionStart", _with("cwd", ["/a"]), "'cwd'"),
        ("UserPromptSubmit", _without("prompt"), "'prompt'"),
        ("UserPromptSubmit", _with("prompt", {"text": "hi"}), "'prompt'"),
        ("PostToolUse", _without("tool_name"), "'tool_name'"),
        ("PostToolUse", _with("tool_use_id", 7), "'tool_use_id'"),
        ("PostToolUseFailure", _with("error", {"message": "x"}), "'error'"),
        ("PostToolUseFailure", _with("is_interrupt", "no"), "'is_interrupt'"),
        ("PostToolUseFailure", _without("tool_name"), "'tool_name'"),
        ("PostToolBatch", _with("tool_calls", {"a": 1}), "'tool_calls'"),
        ("PostToolBatch", _without("tool_calls"), "'tool_calls'"),
        ("PreCompact", _with("trigger", True), "'trigger'"),
        ("SessionEnd", _with("reason", ["exit"]), "'reason'"),
    ],
)
def test_a_malformed_field_is_named(hook_event: str, change: Any, field: str) -> None:
    payload = change(load(FILES[hook_event]))
    with pytest.raises(InvalidInputError, match="payload field") as caught:
        parse(hook_event, payload)
    assert field in str(caught.value)


def test_a_payload_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="Stop payload must be a JSON object"):
        parse("Stop", ["session_id"])


def test_an_unknown_event_names_the_ones_thatch_handles() -> None:
    with pytest.raises(InvalidInputError, match="'Notification'") as caught:
        parse("Notification", load("stop"))
    message = str(caught.value)
    assert "PostToolBatch" in message
    assert "thatch setup --claude" in message


# -- payloads Cursor sends to Claude Code hooks ----------------------------------------
def cursor(name: str) -> dict[str, Any]:
    return load(f"cursor/{name}")


def test_cursor_session_start_is_keyed_by_the_conversation() -> None:
    event = parse("SessionStart", cursor("session_start"))
    assert event is not None
    assert event.session_id == CONVERSATION
    assert event.cwd == "/home/dev/shop"  # from workspace_roots: no cwd in the payload
    assert event.identity == shared_identity("session_start", CONVERSATION, CONVERSATION)


def test_cursor_prompt_is_keyed_by_its_generation() -> None:
    payload = cursor("user_prompt_submit")
    event = parse("UserPromptSubmit", payload)
    assert event is not None
    assert (event.kind, event.hook_event, event.harness) == ("prompt", "UserPromptSubmit", "claude")
    assert event.prompt == payload["prompt"]
    assert event.identity == shared_identity("prompt", CONVERSATION, payload["generation_id"])


def test_cursor_tool_call_is_keyed_by_its_id_and_its_output_decoded() -> None:
    event = parse("PostToolUse", cursor("post_tool_use"))
    assert event is not None
    (call,) = event.tool_calls
    assert call.response == {"output": "ruff check: all checks passed", "exitCode": 0}
    expected = shared_identity("tool_use", CONVERSATION, "toolu_01Wq5Hn8Lc3Tx7Yd2Bv9Kr6M")
    assert event.identity == expected


def test_a_cursor_batch_is_keyed_by_all_its_call_ids() -> None:
    payload = load("post_tool_batch") | {"conversation_id": CONVERSATION}
    event = parse("PostToolBatch", payload)
    assert event is not None
    ids = ",".join(call["tool_use_id"] for call in payload["tool_calls"])
    assert event.identity == shared_identity("tool_use", CONVERSATION, ids)
    # One call without an id: no key, so no identity (never a wrong match).
    del payload["tool_calls"][1]["tool_use_id"]
    again = parse("PostToolBatch", payload)
    assert again is not None
    assert again.identity is None


@pytest.mark.parametrize(
    ("hook_event", "name"),
    [("Stop", "cursor/stop"), ("UserPromptSubmit", "cursor/user_prompt_submit")],
)
def test_cursor_events_without_a_key_get_no_identity(hook_event: str, name: str) -> None:
    payload = load(name)
    payload.pop("generation_id")
    event = parse(hook_event, payload)
    assert event is not None
    assert event.identity is None


def test_cursor_version_alone_marks_a_cursor_payload() -> None:
    payload = load("session_start") | {"cursor_version": "2.1.46"}
    event = parse("SessionStart", payload)
    assert event is not None
    assert event.identity == shared_identity("session_start", SESSION, SESSION)


def test_a_malformed_generation_id_is_named() -> None:
    payload = cursor("user_prompt_submit") | {"generation_id": 5}
    with pytest.raises(InvalidInputError, match="'generation_id'"):
        parse("UserPromptSubmit", payload)


@pytest.mark.parametrize(
    ("claude_event_name", "cursor_event_name", "name"),
    [
        ("SessionStart", "sessionStart", "session_start"),
        ("UserPromptSubmit", "beforeSubmitPrompt", "user_prompt_submit"),
        ("PostToolUse", "postToolUse", "post_tool_use"),
    ],
)
def test_the_cursor_plugin_gives_the_same_identity(
    claude_event_name: str, cursor_event_name: str, name: str
) -> None:
    cursor_plugin = pytest.importorskip("thatch_cursor.plugin")
    payload = cursor(name)
    ours = parse(claude_event_name, payload)
    theirs = plugins_with(cursor_plugin).harness("cursor").parse_event(cursor_event_name, payload)
    assert ours is not None
    assert theirs is not None
    assert ours.identity is not None
    assert (ours.identity, ours.session_id) == (theirs.identity, theirs.session_id)
