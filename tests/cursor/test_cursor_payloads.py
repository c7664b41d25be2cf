"""Recorded Cursor payloads turned into core events by the Cursor plugin."""

from __future__ import annotations

import json
from typing import Any

import pytest
import thatch_cursor.plugin
from recorded import Payload
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.events import ToolCall
from thatch.testing import plugins_with
from thatch_cursor.payloads import parse_event

CONVERSATION = "b41e7c02-5d9a-4f3e-8c61-2a7f0e9d4b18"
GENERATION = "6f0d2c84-91b7-4e5a-a3c2-7d18e5b0f943"
ROOT = "/home/dev/shop"


@pytest.fixture
def plugins() -> Any:
    return plugins_with(thatch_cursor.plugin)


# -- every event, from its recorded payload ------------------------------------
@pytest.mark.parametrize(
    ("hook_event", "kind", "source"),
    [
        ("sessionStart", "session_start", None),
        ("beforeSubmitPrompt", "prompt", None),
        ("postToolUse", "tool_use", None),
        ("postToolUseFailure", "tool_use", None),
        ("stop", "stop", "completed"),
        ("preCompact", "compact", "auto"),
        ("sessionEnd", "session_end", "completed"),
    ],
)
def test_each_recorded_event_becomes_its_core_event(
    plugins: Any, payload: Payload, hook_event: str, kind: str, source: str | None
) -> None:
    event = plugins.harness("cursor").parse_event(hook_event, payload(hook_event))
    assert (event.kind, event.harness, event.hook_event) == (kind, "cursor", hook_event)
    assert (event.session_id, event.cwd, event.source) == (CONVERSATION, ROOT, source)
    assert (event.event_id, event.received_at) == ("", 0.0)


def test_session_start_is_identified_by_its_conversation(payload: Payload) -> None:
    event = parse_event("sessionStart", payload("sessionStart"))
    assert event.identity == f"session_start:{CONVERSATION}:{CONVERSATION}"
    assert (event.prompt, event.tool_calls) == (None, ())


def test_prompt_carries_the_text_and_is_identified_by_its_generation(payload: Payload) -> None:
    event = parse_event("beforeSubmitPrompt", payload("beforeSubmitPrompt"))
    assert event.prompt == "Add partial refunds for gift cards the way card refunds work"
    assert event.identity == f"prompt:{CONVERSATION}:{GENERATION}"


def test_prompt_without_a_generation_has_no_identity(payload: Payload) -> None:
    event = parse_event("beforeSubmitPrompt", payload("beforeSubmitPrompt", generation_id=None))
    assert event.identity is None


def test_an_empty_prompt_is_still_a_prompt(payload: Payload) -> None:
    assert parse_event("beforeSubmitPrompt", payload("beforeSubmitPrompt", prompt="")).prompt == ""


def test_tool_use_decodes_the_json_output(payload: Payload) -> None:
    event = parse_event("postToolUse", payload("postToolUse"))
    (call,) = event.tool_calls
    assert call == ToolCall(
        name="Shell",
        input={"command": "uv run pytest -q tests/payments", "cwd": ROOT},
        response={
            "output": "FAILED tests/payments/test_refund.py::test_partial_refund - "
            "AssertionError: refunds must go through the ledger service\n"
            "1 failed, 41 passed in 3.02s",
            "exitCode": 1,
        },
        call_id="toolu_01Rf8Kq2Zt6WbN3cVx9LmA4E",
        failed=False,
    )
    assert event.identity == f"tool_use:{CONVERSATION}:toolu_01Rf8Kq2Zt6WbN3cVx9LmA4E"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("plain text, not JSON {", "plain text, not JSON {"),
        ("42", "42"),
        ('"quoted"', '"quoted"'),
        (json.dumps(["a", "b"]), ["a", "b"]),
        ({"already": "an object"}, {"already": "an object"}),
        (None, None),
    ],
)
def test_tool_output_is_decoded_only_when_it_holds_an_object_or_list(
    payload: Payload, output: Any, expected: Any
) -> None:
    event = parse_event("postToolUse", payload("postToolUse", tool_output=output))
    assert event.tool_calls[0].response == expected


def test_a_tool_call_without_an_id_has_no_identity(payload: Payload) -> None:
    event = parse_event("postToolUse", payload("postToolUse", tool_use_id=None))
    assert (event.tool_calls[0].call_id, event.identity) == (None, None)


def test_a_failed_tool_call_is_marked_failed_with_its_error(payload: Payload) -> None:
    event = parse_event("postToolUseFailure", payload("postToolUseFailure"))
    (call,) = event.tool_calls
    assert (call.name, call.failed, call.call_id) == (
        "Read",
        True,
        "toolu_01Gp5Hs7Yd2QeT9nJw4KcB6R",
    )
    assert call.input == {"target_file": "/home/dev/shop/docs/REFUNDS.md"}
    assert call.response == {
        "error": "File not found: /home/dev/shop/docs/REFUNDS.md",
        "failure_type": "error",
    }
    assert event.identity == f"tool_use:{CONVERSATION}:toolu_01Gp5Hs7Yd2QeT9nJw4KcB6R"


def test_a_failed_tool_call_keeps_any_output_it_had(payload: Payload) -> None:
    body = payload(
        "postToolUseFailure",
        error_message=None,
        failure_type=None,
        error="exit status 2",
        tool_output=json.dumps({"output": "make: *** [lint] Error 2"}),
    )
    (call,) = parse_event("postToolUseFailure", body).tool_calls
    assert call.response == {
        "error": "exit status 2",
        "response": {"output": "make: *** [lint] Error 2"},
    }


def test_a_failure_with_no_details_still_counts_as_failed(payload: Payload) -> None:
    body = payload("postToolUseFailure", error_message=None, failure_type=None)
    (call,) = parse_event("postToolUseFailure", body).tool_calls
    assert (call.failed, call.response) == (True, None)


@pytest.mark.parametrize("hook_event", ["stop", "preCompact", "sessionEnd"])
def test_events_with_no_key_have_no_identity(payload: Payload, hook_event: str) -> None:
    assert parse_event(hook_event, payload(hook_event)).identity is None


# -- which folder --------------------------------------------------------------
def test_cwd_wins_over_the_workspace_roots(payload: Payload) -> None:
    body = payload("postToolUse", cwd="/home/dev/shop/src", workspace_roots=["/a", "/b"])
    assert parse_event("postToolUse", body).cwd == "/home/dev/shop/src"


def test_without_cwd_the_first_workspace_root_is_the_folder(payload: Payload) -> None:
    body = payload("postToolUse", cwd=None, workspace_roots=["/home/dev/lib", "/home/dev/shop"])
    assert parse_event("postToolUse", body).cwd == "/home/dev/lib"


@pytest.mark.parametrize("roots", [None, []])
def test_no_cwd_and_no_roots_leave_the_folder_to_core(payload: Payload, roots: Any) -> None:
    body = payload("stop", cwd=None, workspace_roots=roots)
    assert parse_event("stop", body).cwd is None


# -- the event name ------------------------------------------------------------
def test_the_command_line_event_wins_over_the_payloads_name(payload: Payload) -> None:
    body = payload("postToolUse", hook_event_name="afterShellExecution")
    assert parse_event("postToolUse", body).hook_event == "postToolUse"


def test_event_names_are_matched_without_case(payload: Payload) -> None:
    event = parse_event("POSTTOOLUSE", payload("postToolUse"))
    assert (event.kind, event.hook_event) == ("tool_use", "postToolUse")


def test_an_event_thatch_does_not_read_is_refused_with_the_fix(payload: Payload) -> None:
    with pytest.raises(InvalidInputError, match=r"'afterFileEdit'.*thatch setup --cursor"):
        parse_event("afterFileEdit", payload("stop"))


def test_other_harnesses_are_left_to_their_plugins(plugins: Any) -> None:
    assert [harness.name for harness in thatch_cursor.plugin.thatch_harnesses()] == ["cursor"]
    assert plugins.harness("opencode") is None


# -- malformed payloads --------------------------------------------------------
@pytest.mark.parametrize(
    ("hook_event", "changes", "field", "got"),
    [
        ("stop", {"conversation_id": None}, "conversation_id", "nothing"),
        ("stop", {"conversation_id": ""}, "conversation_id", "an empty string"),
        ("stop", {"conversation_id": 7}, "conversation_id", "a number"),
        ("beforeSubmitPrompt", {"prompt": None}, "prompt", "nothing"),
        ("beforeSubmitPrompt", {"prompt": ["hi"]}, "prompt", "a list"),
        ("beforeSubmitPrompt", {"generation_id": 3}, "generation_id", "a number"),
        ("postToolUse", {"tool_name": None}, "tool_name", "nothing"),
        ("postToolUse", {"tool_name": {"n": 1}}, "tool_name", "an object"),
        ("postToolUse", {"tool_use_id": 12}, "tool_use_id", "a number"),
        ("postToolUse", {"cwd": True}, "cwd", "true/false"),
        ("postToolUseFailure", {"error_message": 500}, "error_message", "a number"),
        ("postToolUseFailure", {"failure_type": ["x"]}, "failure_type", "a list"),
        ("stop", {"status": 1}, "status", "a number"),
        ("preCompact", {"trigger": 1.5}, "trigger", "a number"),
        ("sessionEnd", {"reason": {}}, "reason", "an object"),
        ("stop", {"cwd": None, "workspace_roots": "/home"}, "workspace_roots", "a string"),
        ("stop", {"cwd": None, "workspace_roots": ["/a", 2]}, "workspace_roots[1]", "a number"),
    ],
)
def test_a_malformed_field_is_named_in_the_error(
    payload: Payload, hook_event: str, changes: dict[str, Any], field: str, got: str
) -> None:
    with pytest.raises(InvalidInputError) as raised:
        parse_event(hook_event, payload(hook_event, **changes))
    message = str(raised.value)
    assert f"payload field '{field}'" in message
    assert f"got {got}" in message
