"""Claude Code's named hook commands' payloads (and Cursor's, which runs them) as core events.

``thatch reminder``, ``buffer-*`` and ``flush-*`` are served by the Claude
plugin (``ClaudeHarness.commands``, parsed by ``ClaudeHarness.parse_command``).
Whose payload it is, Claude Code's or Cursor's, core tells by Cursor's
claim (``CursorHarness.claim``): the end of this file runs those through the
daemon's handler.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from daemon_hooks import RuntimeFactory, answer, request
from thatch.plugin import Event, InvalidInputError, ToolCall
from thatch.testing import EventRecorder
from thatch_claude.events import EVENT_KINDS
from thatch_claude.harness import ClaudeHarness

CLAUDE = Path(__file__).parent.parent / "data" / "claude"
SESSION = "3f1c2a9e-7b4d-4c1e-9a55-0d2f6e8b1c47"
HARNESS = ClaudeHarness()
#: The named commands, by name, as the harness declares them.
COMMANDS = {command.name: command for command in HARNESS.commands}
#: The event each named command stands for, and its Claude Code event name.
COMMAND_EVENTS = {name: (EVENT_KINDS[c.event], c.event) for name, c in COMMANDS.items()}


def parse_command_payload(command: str, payload: dict[str, Any]) -> Event:
    """The event the Claude plugin reads from a named command's payload."""
    return HARNESS.parse_command(COMMANDS[command], payload)


def claude(name: str, **changes: Any) -> dict[str, Any]:
    """A recorded Claude Code payload with some fields replaced (None removes one)."""
    payload: dict[str, Any] = json.loads((CLAUDE / f"{name}.json").read_text())
    for key, value in changes.items():
        if value is None:
            payload.pop(key, None)
        else:
            payload[key] = value
    return payload


def cursor_tool(**changes: Any) -> dict[str, Any]:
    """A Cursor postToolUse payload (``tool_output`` is a JSON string)."""
    payload: dict[str, Any] = {
        "conversation_id": "conv-7",
        "generation_id": "gen-1",
        "hook_event_name": "postToolUse",
        "workspace_roots": ["/home/dev/shop", "/home/dev/lib"],
        "cursor_version": "1.7.2",
        "tool_name": "Shell",
        "tool_input": {"command": "make lint"},
        "tool_output": json.dumps({"stdout": "all clean", "exit_code": 0}),
        "tool_use_id": "call-42",
    }
    payload.update(changes)
    return payload


def test_the_commands_are_the_ones_older_setups_wrote() -> None:
    assert COMMAND_EVENTS == {
        "reminder": ("session_start", "SessionStart"),
        "buffer-batch": ("tool_use", "PostToolBatch"),
        "buffer-tool": ("tool_use", "PostToolUse"),
        "flush-tools": ("prompt", "UserPromptSubmit"),
        "flush-predictions": ("prompt", "UserPromptSubmit"),
    }


# -- Claude Code ---------------------------------------------------------------
def test_claude_tool_batch_keeps_every_call_in_order() -> None:
    event = parse_command_payload("buffer-batch", claude("post_tool_batch"))
    assert (event.kind, event.harness, event.session_id) == ("tool_use", "claude", SESSION)
    assert (event.hook_event, event.cwd) == ("PostToolBatch", "/home/dev/shop")
    assert [call.name for call in event.tool_calls] == ["Bash", "Read", "Grep"]
    assert [call.call_id for call in event.tool_calls] == [
        "toolu_01HkVq7rJd2mXa9LQe3sTb4N",
        "toolu_01PzR4cW8nTq5yLm2KdE7vGh",
        "toolu_01Sx3bN6fYw1uQe8RjA5mLcT",
    ]
    bash = event.tool_calls[0]
    assert bash.input == {
        "command": "uv run pytest -q tests/payments",
        "description": "Run the payment tests",
    }
    assert "ledger service" in bash.response["stdout"]
    assert not any(call.failed for call in event.tool_calls)
    # A batch has no single identity: each of its calls is queued once with the event.
    assert event.identity is None


def test_claude_single_tool_call_carries_its_identity() -> None:
    event = parse_command_payload("buffer-tool", claude("post_tool_use"))
    assert (event.kind, event.harness, event.hook_event) == ("tool_use", "claude", "PostToolUse")
    (call,) = event.tool_calls
    assert call.name == "Edit"
    assert call.input["new_string"] == "ledger.refund(order_id, cents=refund)"
    assert call.response["filePath"] == "/home/dev/shop/src/orders/refund.py"
    assert call.call_id == "toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8O"
    assert event.identity == f"tool_use:{SESSION}:toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8O"


def test_a_tool_call_without_an_id_has_no_identity() -> None:
    event = parse_command_payload("buffer-tool", claude("post_tool_use", tool_use_id=None))
    assert event.tool_calls[0].call_id is None
    assert event.identity is None


def test_identity_depends_on_the_session_and_the_call() -> None:
    one = parse_command_payload("buffer-tool", claude("post_tool_use"))
    other_session = parse_command_payload("buffer-tool", claude("post_tool_use", session_id="s2"))
    other_call = parse_command_payload("buffer-tool", claude("post_tool_use", tool_use_id="t2"))
    assert len({one.identity, other_session.identity, other_call.identity}) == 3


@pytest.mark.parametrize("command", ["flush-tools", "flush-predictions"])
def test_claude_prompt(command: str) -> None:
    event = parse_command_payload(command, claude("user_prompt_submit"))
    assert (event.kind, event.hook_event) == ("prompt", "UserPromptSubmit")
    assert event.prompt == "Now add partial refunds for gift cards the same way"
    assert event.tool_calls == ()


def test_an_empty_prompt_is_still_a_prompt() -> None:
    event = parse_command_payload("flush-tools", claude("user_prompt_submit", prompt=""))
    assert (event.kind, event.prompt) == ("prompt", "")


def test_claude_session_start_keeps_its_source() -> None:
    event = parse_command_payload("reminder", claude("session_start", source="compact"))
    assert (event.kind, event.hook_event, event.source) == (
        "session_start",
        "SessionStart",
        "compact",
    )


@pytest.mark.parametrize(
    ("command", "kind", "hook_event"),
    [(command, *COMMAND_EVENTS[command]) for command in COMMAND_EVENTS],
)
def test_the_event_name_defaults_to_the_commands(command: str, kind: str, hook_event: str) -> None:
    payload = {"session_id": "s1", "tool_name": "Bash", "tool_calls": [], "prompt": "hi"}
    event = parse_command_payload(command, payload)
    assert (event.kind, event.hook_event, event.harness, event.cwd) == (
        kind,
        hook_event,
        "claude",
        None,
    )


def test_a_tool_error_marks_the_call_failed_and_keeps_both_parts() -> None:
    payload = claude("post_tool_use", error="permission denied", tool_response="partial")
    (call,) = parse_command_payload("buffer-tool", payload).tool_calls
    assert (call.failed, call.error, call.response) == (True, "permission denied", "partial")
    assert not call.interrupted


def test_a_batch_call_with_an_error_is_failed_alone() -> None:
    payload = claude("post_tool_batch")
    payload["tool_calls"][1]["error"] = "no such file"
    calls = parse_command_payload("buffer-batch", payload).tool_calls
    assert [call.failed for call in calls] == [False, True, False]
    assert [call.error for call in calls] == [None, "no such file", None]


def test_a_claude_failure_payload_through_buffer_tool() -> None:
    payload = claude("post_tool_use_failure")
    event = parse_command_payload("buffer-tool", payload)
    assert event.hook_event == "PostToolUseFailure"
    (call,) = event.tool_calls
    assert (call.failed, call.error, call.call_id) == (
        True,
        payload["error"],
        payload["tool_use_id"],
    )
    assert call.response is None


def test_an_interrupted_call_is_failed_even_without_a_message() -> None:
    payload = claude("post_tool_use_failure", error=None, is_interrupt=True)
    (call,) = parse_command_payload("buffer-tool", payload).tool_calls
    assert (call.failed, call.interrupted, call.error) == (True, True, None)


def test_an_empty_error_still_means_failed() -> None:
    payload = claude("post_tool_use", error="")
    (call,) = parse_command_payload("buffer-tool", payload).tool_calls
    assert (call.failed, call.error) == (True, None)


def test_the_failure_event_marks_a_call_failed_without_error_fields() -> None:
    payload = claude("post_tool_use_failure", error=None, is_interrupt=None)
    (call,) = parse_command_payload("buffer-tool", payload).tool_calls
    assert (call.failed, call.error, call.interrupted) == (True, None, False)


def test_a_cursor_error_message_is_the_error() -> None:
    payload = cursor_tool(hook_event_name="postToolUseFailure", error_message="exit status 2")
    (call,) = parse_command_payload("buffer-tool", payload).tool_calls
    assert (call.failed, call.error) == (True, "exit status 2")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("error", 500, "must be a string, got a number"),
        ("error_message", ["x"], "must be a string, got a list"),
        ("is_interrupt", "yes", "must be true/false, got a string"),
    ],
)
def test_malformed_failure_fields_are_named(field: str, value: Any, words: str) -> None:
    payload = claude("post_tool_use_failure", error=None) | {field: value}
    with pytest.raises(InvalidInputError, match=f"payload field '{field}' {words}"):
        parse_command_payload("buffer-tool", payload)


def test_a_failed_call_must_be_marked_failed() -> None:
    with pytest.raises(ValueError, match="pass failed=True"):
        ToolCall(name="Bash", error="boom")
    with pytest.raises(ValueError, match="pass failed=True"):
        ToolCall(name="Bash", interrupted=True)


def test_an_empty_batch_has_no_calls() -> None:
    event = parse_command_payload("buffer-batch", claude("post_tool_batch", tool_calls=[]))
    assert event.tool_calls == ()


# -- Cursor ----------------------------------------------------------------------
#: Sends a named command's request to a daemon with the Claude and Cursor
#: plugins and returns the event its observers were shown.
Through = Callable[..., Event]


@pytest.fixture
def through_the_daemon(runtimes: RuntimeFactory) -> Through:
    import thatch_claude.plugin
    import thatch_cursor.plugin

    observer = EventRecorder()
    app = runtimes(thatch_claude.plugin, thatch_cursor.plugin, observer)

    def send(command: str, payload: dict[str, Any], env: dict[str, str] | None = None) -> Event:
        answer(app, request(command, payload, env=env or {}))
        return observer.events[-1]

    return send


def test_cursor_tool_call_is_recognised_by_conversation_id(through_the_daemon: Through) -> None:
    event = through_the_daemon("buffer-tool", cursor_tool())
    assert (event.harness, event.session_id, event.hook_event) == (
        "cursor",
        "conv-7",
        "postToolUse",
    )
    assert event == attrs.evolve(
        parse_command_payload("buffer-tool", cursor_tool()),
        harness="cursor",
        event_id=event.event_id,
        received_at=event.received_at,
    )
    assert event.tool_calls == (
        ToolCall(
            name="Shell",
            input={"command": "make lint"},
            response={"stdout": "all clean", "exit_code": 0},
            call_id="call-42",
            failed=False,
        ),
    )
    assert event.identity == "tool_use:conv-7:call-42"


def test_cursor_cwd_falls_back_to_the_first_workspace_root() -> None:
    assert parse_command_payload("buffer-tool", cursor_tool()).cwd == "/home/dev/shop"
    with_cwd = parse_command_payload("buffer-tool", cursor_tool(cwd="/elsewhere"))
    assert with_cwd.cwd == "/elsewhere"


@pytest.mark.parametrize("roots", [[], "/home/dev/shop", [7], None])
def test_unusable_workspace_roots_give_no_cwd(roots: Any) -> None:
    event = parse_command_payload("buffer-tool", cursor_tool(workspace_roots=roots))
    assert event.cwd is None


def test_cursor_output_that_is_not_json_stays_text() -> None:
    event = parse_command_payload("buffer-tool", cursor_tool(tool_output="plain {not json"))
    assert event.tool_calls[0].response == "plain {not json"


def test_cursor_failure_event_marks_the_call_failed() -> None:
    payload = cursor_tool(hook_event_name="postToolUseFailure")
    event = parse_command_payload("buffer-tool", payload)
    assert event.hook_event == "postToolUseFailure"
    assert event.tool_calls[0].failed


def test_cursor_version_in_the_environment_means_cursor(through_the_daemon: Through) -> None:
    payload = claude("post_tool_use")
    event = through_the_daemon("buffer-tool", payload, {"CURSOR_VERSION": "1.7.2"})
    assert (event.harness, event.session_id) == ("cursor", SESSION)
    other = claude("post_tool_use", tool_use_id="toolu_other")
    assert through_the_daemon("buffer-tool", other, {"CURSOR_VERSION": ""}).harness == "claude"
    assert through_the_daemon("buffer-tool", claude("post_tool_use", session_id="s2")).harness == (
        "claude"
    )


def test_the_plugin_itself_labels_every_payload_claudes() -> None:
    # Telling Cursor's apart is core's, by the harnesses' claims.
    assert parse_command_payload("buffer-tool", cursor_tool()).harness == "claude"


def test_cursor_prompt(through_the_daemon: Through) -> None:
    payload = {
        "conversation_id": "conv-7",
        "hook_event_name": "beforeSubmitPrompt",
        "prompt": "rename the ledger client",
        "attachments": [],
        "workspace_roots": ["/home/dev/shop"],
    }
    event = through_the_daemon("flush-tools", payload)
    assert (event.kind, event.harness, event.session_id, event.hook_event, event.cwd) == (
        "prompt",
        "cursor",
        "conv-7",
        "beforeSubmitPrompt",
        "/home/dev/shop",
    )
    assert event.prompt == "rename the ledger client"


def test_cursor_session_id_comes_from_conversation_id_even_beside_session_id() -> None:
    payload = cursor_tool(session_id="claude-style")
    assert parse_command_payload("buffer-tool", payload).session_id == "conv-7"


# -- errors name the field -------------------------------------------------------
def error_of(command: str, payload: dict[str, Any]) -> str:
    with pytest.raises(InvalidInputError) as caught:
        parse_command_payload(command, payload)
    return str(caught.value)


@pytest.mark.parametrize("value", [None, 42, "", ["s1"]])
@pytest.mark.parametrize("command", list(COMMAND_EVENTS))
def test_a_bad_session_id_is_named(command: str, value: Any) -> None:
    payload = claude("post_tool_batch", session_id=value)
    payload.update(tool_name="Bash", prompt="hello")
    message = error_of(command, payload)
    assert "'session_id'" in message
    assert "string" in message


def test_a_missing_session_id_says_missing() -> None:
    message = error_of("flush-tools", claude("user_prompt_submit", session_id=None))
    assert "'session_id'" in message
    assert "missing" in message


def test_a_bad_conversation_id_is_named() -> None:
    message = error_of("buffer-tool", cursor_tool(conversation_id=5))
    assert "'conversation_id'" in message
    assert "a number" in message


@pytest.mark.parametrize("calls", [None, {"tool_name": "Bash"}, "Bash", 3])
def test_tool_calls_must_be_a_list(calls: Any) -> None:
    message = error_of("buffer-batch", claude("post_tool_batch", tool_calls=calls))
    assert "'tool_calls'" in message
    assert "list" in message


def left_out(payload: dict[str, Any], caplog: pytest.LogCaptureFixture) -> tuple[list[str], str]:
    """The tools of the batch's calls that were kept, and the warning about the others."""
    with caplog.at_level(logging.WARNING, logger="thatch"):
        event = parse_command_payload("buffer-batch", payload)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    return [call.name for call in event.tool_calls], "\n".join(warnings)


@pytest.mark.parametrize("item", ["Bash", 3, None, ["Bash"]])
def test_a_tool_call_that_is_not_an_object_is_left_out_and_named_by_index(
    item: Any, caplog: pytest.LogCaptureFixture
) -> None:
    payload = claude("post_tool_batch")
    payload["tool_calls"].insert(1, item)
    kept, warning = left_out(payload, caplog)
    assert kept == ["Bash", "Read", "Grep"]
    assert "tool_calls[1]" in warning
    assert "object" in warning


@pytest.mark.parametrize("name", [None, "", 7])
def test_a_single_call_needs_a_tool_name(name: Any) -> None:
    assert "'tool_name'" in error_of("buffer-tool", claude("post_tool_use", tool_name=name))


def test_a_bad_field_inside_a_batch_call_costs_that_call_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    payload = claude("post_tool_batch")
    del payload["tool_calls"][2]["tool_name"]
    payload["tool_calls"][0]["tool_use_id"] = 17
    kept, warning = left_out(payload, caplog)
    assert kept == ["Read"]
    assert "'tool_calls[2].tool_name'" in warning
    assert "'tool_calls[0].tool_use_id'" in warning


def test_a_batch_whose_every_call_is_malformed_is_refused_naming_the_first() -> None:
    payload = claude("post_tool_batch", tool_calls=["Bash", {"tool_name": 3}])
    message = error_of("buffer-batch", payload)
    assert "tool_calls[0] must be a JSON object" in message


@pytest.mark.parametrize("prompt", [None, 12, ["hi"], {"text": "hi"}])
@pytest.mark.parametrize("command", ["flush-tools", "flush-predictions"])
def test_prompt_must_be_a_string(command: str, prompt: Any) -> None:
    assert "'prompt'" in error_of(command, claude("user_prompt_submit", prompt=prompt))


@pytest.mark.parametrize(
    ("command", "name", "field"),
    [
        ("flush-tools", "user_prompt_submit", "hook_event_name"),
        ("flush-tools", "user_prompt_submit", "cwd"),
        ("reminder", "session_start", "source"),
        ("buffer-tool", "post_tool_use", "tool_use_id"),
    ],
)
def test_optional_text_fields_of_the_wrong_type_are_named(
    command: str, name: str, field: str
) -> None:
    payload = claude(name)
    payload[field] = 99
    message = error_of(command, payload)
    assert f"'{field}'" in message
    assert "a number" in message
