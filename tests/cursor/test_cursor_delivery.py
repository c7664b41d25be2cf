"""What a Cursor hook prints for the nudges core chose, and where Cursor reads them."""

from __future__ import annotations

import json
from typing import Any

import pytest
import thatch_cursor.plugin
from thatch.plugin.events import Event
from thatch.plugin.harness import Harness
from thatch.plugin.nudge import Nudge
from thatch.testing import plugins_with
from thatch_cursor.delivery import deliver

RECALL = Nudge(source="recall", text="[thatch] Refunds go through the ledger service.")
DECISIONS = Nudge(source="decisions", text="[thatch] User decision model\n- prefers small PRs")


def event(kind: Any, hook_event: str) -> Event:
    return Event(kind=kind, harness="cursor", session_id="conv-1", hook_event=hook_event)


@pytest.mark.parametrize(
    ("kind", "hook_event"),
    [("session_start", "sessionStart"), ("tool_use", "postToolUse")],
)
def test_context_hooks_get_additional_context(kind: str, hook_event: str) -> None:
    output = json.loads(deliver([RECALL, DECISIONS], event(kind, hook_event)))
    assert output == {"additional_context": f"{RECALL.text}\n\n{DECISIONS.text}"}


@pytest.mark.parametrize(
    ("kind", "hook_event"),
    [
        # beforeSubmitPrompt reads only continue and user_message; nothing lets it through.
        ("prompt", "beforeSubmitPrompt"),
        ("stop", "stop"),
        ("compact", "preCompact"),
        ("session_end", "sessionEnd"),
    ],
)
def test_hooks_without_a_context_slot_print_nothing(kind: str, hook_event: str) -> None:
    # Never followup_message: on stop it would make the agent run another turn.
    assert deliver([RECALL], event(kind, hook_event)) == ""


def cursor() -> Harness:
    """The Cursor harness, as core finds it among the installed plugins."""
    harness = plugins_with(thatch_cursor.plugin).harness("cursor")
    assert harness is not None
    return harness


def test_the_plugin_tells_core_where_cursor_reads_context() -> None:
    assert cursor().context_kinds == {"session_start", "tool_use"}
    assert plugins_with(thatch_cursor.plugin).harness("claude") is None


@pytest.mark.parametrize("kind", ["session_start", "prompt", "tool_use"])
def test_no_nudges_print_nothing(kind: str) -> None:
    assert deliver([], event(kind, "x")) == ""


def test_the_output_is_ascii_json_that_reads_back_exactly() -> None:
    nudge = Nudge(source="recall", text="Prix en €, délai « court »")
    text = deliver([nudge], event("tool_use", "postToolUse"))
    assert text.isascii()
    assert json.loads(text)["additional_context"] == nudge.text


def test_the_harness_delivers_cursors_json() -> None:
    cursor_tool = event("tool_use", "postToolUse")
    assert json.loads(cursor().deliver([RECALL], cursor_tool))["additional_context"] == RECALL.text


def test_plain_text_never_reaches_cursor() -> None:
    # Plain text on a Cursor hook's stdout is not the JSON Cursor reads: a
    # hook without a context slot prints nothing at all, nor does a named
    # command's answer (the default: the harness's own delivery).
    assert cursor().deliver([RECALL], event("stop", "stop")) == ""
    for as_json in (False, True):
        assert cursor().answer_command([RECALL], event("stop", "stop"), as_json=as_json) == ""
