"""What the JS plugin sends becomes the right core event; opencode's delivery is plain text."""

from __future__ import annotations

from typing import Any

import pytest
import thatch_opencode.plugin
from recorded import Payload
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.events import Event, ToolCall
from thatch.plugin.nudge import Nudge
from thatch.testing import plugins_with
from thatch_opencode.events import EVENT_KINDS, parse_event
from thatch_opencode.harness import OpencodeHarness

SESSION = "ses_dd473acd9ffeZ9jt5oCA6h0WFp"
CWD = "/home/dev/shop"


def test_session_created_starts_a_session(payload: Payload) -> None:
    event = parse_event("session.created", payload("session.created"))
    assert event == Event(
        kind="session_start",
        harness="opencode",
        session_id=SESSION,
        hook_event="session.created",
        cwd=CWD,
        source="startup",
    )


def test_a_subagent_session_says_so(payload: Payload) -> None:
    body = payload("session.created", parent_id="ses_parent")
    assert parse_event("session.created", body).source == "subagent"


def test_session_compacted_starts_the_session_again(payload: Payload) -> None:
    event = parse_event("session.compacted", payload("session.compacted"))
    assert (event.kind, event.source, event.session_id) == ("session_start", "compact", SESSION)


def test_compacting_is_a_compact_event(payload: Payload) -> None:
    event = parse_event(
        "experimental.session.compacting", payload("experimental.session.compacting")
    )
    assert event == Event(
        kind="compact",
        harness="opencode",
        session_id=SESSION,
        hook_event="experimental.session.compacting",
        cwd=CWD,
    )


def test_chat_message_is_a_prompt_identified_by_its_message(payload: Payload) -> None:
    body = payload("chat.message")
    event = parse_event("chat.message", body)
    assert (event.kind, event.prompt, event.cwd) == ("prompt", '"Please say hello using bash"', CWD)
    assert event.identity == f"prompt:{SESSION}:{body['message_id']}"


def test_the_prompt_leaves_out_the_parts_opencode_added(payload: Payload) -> None:
    # A file attached with -f arrives as two synthetic parts before the user's words.
    body = payload("chat_message_with_file")
    assert [part["synthetic"] for part in body["parts"]] == [True, True, False]
    assert parse_event("chat.message", body).prompt == "How do we deploy"


def test_text_parts_are_joined_line_by_line(payload: Payload) -> None:
    parts = [{"text": "first", "synthetic": False}, {"text": ""}, {"text": "second"}]
    assert parse_event("chat.message", payload("chat.message", parts=parts)).prompt == (
        "first\nsecond"
    )


def test_a_message_without_an_id_has_no_identity(payload: Payload) -> None:
    event = parse_event("chat.message", payload("chat.message", message_id=None))
    assert event.identity is None


def test_a_tool_call_keeps_its_arguments_and_output(payload: Payload) -> None:
    event = parse_event("tool.execute.after", payload("tool.execute.after"))
    assert event.kind == "tool_use"
    assert event.tool_calls == (
        ToolCall(
            name="bash",
            input={"command": "echo hello from bash", "description": "Say hello"},
            response="hello from bash\n",
            call_id="call_1",
        ),
    )
    assert event.identity == f"tool_use:{SESSION}:call_1"


def test_an_empty_tool_output_stays_empty(payload: Payload) -> None:
    event = parse_event("tool.execute.after", payload("tool.execute.after", output=""))
    assert event.tool_calls[0].response == ""


def test_every_event_the_plugin_forwards_is_read() -> None:
    assert set(EVENT_KINDS) == {
        "session.created",
        "session.compacted",
        "chat.message",
        "tool.execute.after",
        "experimental.session.compacting",
    }


@pytest.mark.parametrize(
    ("event", "changes", "message"),
    [
        ("session.created", {"session_id": None}, "'session_id' must be a non-empty string"),
        ("session.created", {"session_id": 7}, "got a number"),
        ("session.created", {"session_id": ""}, "got an empty string"),
        ("session.created", {"cwd": ["/a"]}, "'cwd' must be a string, got a list"),
        ("session.created", {"parent_id": True}, "'parent_id' must be a string, got true/false"),
        ("chat.message", {"parts": None}, "'parts' must be a list of text parts"),
        ("chat.message", {"parts": "hi"}, "'parts' must be a list of text parts, got a str"),
        ("chat.message", {"parts": [{"text": "a"}, "b"]}, "'parts[1]' must be an object"),
        ("chat.message", {"parts": [{"text": 3}]}, "'parts[0].text' must be a string"),
        ("chat.message", {"parts": [{}]}, "'parts[0].text' must be a string, got nothing"),
        (
            "chat.message",
            {"parts": [{"text": "a", "synthetic": "no"}]},
            "'parts[0].synthetic' must be true/false",
        ),
        ("chat.message", {"message_id": {}}, "'message_id' must be a string, got an object"),
        ("tool.execute.after", {"tool": None}, "'tool' must be a non-empty string"),
        ("tool.execute.after", {"call_id": 1}, "'call_id' must be a string"),
        ("tool.execute.after", {"output": {"x": 1}}, "'output' must be a string"),
    ],
)
def test_malformed_payloads_name_the_field(
    payload: Payload, event: str, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInputError, match=r"payload field") as raised:
        parse_event(event, payload(event, **changes))
    assert message in str(raised.value)


def test_an_unknown_event_names_the_events_thatch_reads(payload: Payload) -> None:
    with pytest.raises(InvalidInputError) as raised:
        parse_event("session.idle", payload("session.created"))
    message = str(raised.value)
    assert "'session.idle'" in message
    assert "chat.message" in message
    assert "thatch setup --opencode" in message


def test_the_plugin_parses_only_opencode_payloads(payload: Payload) -> None:
    plugins = plugins_with(thatch_opencode.plugin)
    body = payload("chat.message")
    event = plugins.harness("opencode").parse_event("chat.message", body)
    assert event is not None
    assert event.harness == "opencode"
    assert plugins.harness("claude") is None


def test_delivery_is_plain_text_for_opencode_only(payload: Payload) -> None:
    event = parse_event("chat.message", payload("chat.message"))
    nudges = [Nudge(source="recall", text="[thatch] one"), Nudge(source="x", text="[thatch] two")]
    assert OpencodeHarness().deliver(nudges, event) == "[thatch] one\n\n[thatch] two"
