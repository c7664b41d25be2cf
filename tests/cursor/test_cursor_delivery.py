"""What a Cursor hook prints for the nudges core chose, and where Cursor reads them."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
import thatch_cursor.plugin
from thatch.builtin import BUILTIN_PLUGINS
from thatch.plugin.events import Event
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


def test_the_plugin_tells_core_where_cursor_reads_context() -> None:
    plugins = plugins_with(thatch_cursor.plugin)
    assert plugins.context_kinds("cursor") == {"session_start", "tool_use"}
    assert plugins.context_kinds("claude") is None
    assert plugins_with().context_kinds("cursor") is None


@pytest.mark.parametrize("kind", ["session_start", "prompt", "tool_use"])
def test_no_nudges_print_nothing(kind: str) -> None:
    assert deliver([], event(kind, "x")) == ""


def test_the_output_is_ascii_json_that_reads_back_exactly() -> None:
    nudge = Nudge(source="recall", text="Prix en €, délai « court »")
    text = deliver([nudge], event("tool_use", "postToolUse"))
    assert text.isascii()
    assert json.loads(text)["additional_context"] == nudge.text


def test_the_plugin_answers_only_for_cursor() -> None:
    cursor_tool = event("tool_use", "postToolUse")
    assert thatch_cursor.plugin.thatch_deliver([RECALL], cursor_tool, "claude") is None
    plugins = plugins_with(thatch_cursor.plugin)
    assert json.loads(plugins.deliver([RECALL], cursor_tool, "cursor"))["additional_context"]


def test_core_plain_text_never_reaches_cursor() -> None:
    # Plain text on a Cursor hook's stdout is not the JSON Cursor reads; the
    # plugin answers "" (not None) so the first-result hook stops there.
    plain = importlib.import_module(BUILTIN_PLUGINS["plain-delivery"])
    plugins = plugins_with(plain, thatch_cursor.plugin)
    assert plugins.deliver([RECALL], event("stop", "stop"), "cursor") == ""
    assert plugins.deliver([RECALL], event("stop", "Stop"), "other") == RECALL.text
