"""Cursor reads no context from beforeSubmitPrompt: a prompt's nudges wait for a hook that can.

Recorded Cursor payloads go through the daemon's handler, as
``thatch hook cursor EVENT`` sends them. A prompt's nudges are held for the
conversation and come back, once, in the ``additional_context`` of its next
postToolUse (or of a sessionStart, if one comes first). Memories count as
shown and recalled, and decision-model fires are logged, only then.
"""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path
from typing import Any

import pytest
import thatch_claude.plugin
import thatch_cursor.plugin
from daemon_hooks import RuntimeFactory
from framed import data_lines
from recorded import Payload, recorded
from thatch.decisions.nudge import HEADER as DECISION_HEADER
from thatch.nudges.recall import HEADER as RECALL_HEADER
from thatch.runtime import Runtime
from thatch.testing import send_hook

GIFT_CARDS = "Gift card refunds go through the ledger service, the way card refunds do"
GIFT_CARDS_LINE = f"- gift-card-refunds (global): {GIFT_CARDS}"
INVOICES = "Invoices are numbered per tenant and year, never globally"
SESSION_BRIEFING = "[thatch] Memory for this session"
#: The conversation of every recorded Cursor payload.
CONVERSATION = recorded("cursor", "before_submit_prompt")["conversation_id"]

_call_ids = count(1)


@pytest.fixture
def app(runtimes: RuntimeFactory) -> Runtime:
    """The daemon's runtime with both harness plugins, as a Cursor user with both set up has."""
    runtime = runtimes(thatch_cursor.plugin, thatch_claude.plugin)
    runtime.thatch.remember("gift-card-refunds", GIFT_CARDS, store="global")
    return runtime


@pytest.fixture
def send(app: Runtime, payload: Payload, project: Path) -> Any:
    """Send a recorded Cursor event of the project; a postToolUse gets a new call id."""

    def send(event: str, **changes: Any) -> str:
        if event == "postToolUse":
            changes.setdefault("tool_use_id", f"toolu_{next(_call_ids)}")
        body = payload(event, cwd=str(project), workspace_roots=[str(project)], **changes)
        return send_hook(app, "cursor", event, body)

    return send


def context(output: str) -> str:
    """The ``additional_context`` of a hook's JSON answer ("" for no answer)."""
    if not output:
        return ""
    answer = json.loads(output)
    assert set(answer) == {"additional_context"}
    return str(answer["additional_context"])


def recall_count(app: Runtime, label: str = "gift-card-refunds") -> int:
    return app.thatch.show(label, store="global").recall_count


def test_a_prompts_recall_arrives_with_the_next_tool_call_once(app: Runtime, send: Any) -> None:
    memory = app.thatch.show("gift-card-refunds", store="global")
    started = context(send("sessionStart"))
    assert started.startswith(SESSION_BRIEFING)
    assert GIFT_CARDS not in started

    assert send("beforeSubmitPrompt") == ""
    assert recall_count(app) == 0
    assert app.sessions.shown_recently(CONVERSATION, [memory.id], 10) == set()

    delivered = context(send("postToolUse"))
    assert delivered.startswith(RECALL_HEADER)
    assert GIFT_CARDS_LINE in data_lines(delivered)
    assert len(delivered) <= app.settings.budget
    assert recall_count(app) == 1
    assert app.sessions.shown_recently(CONVERSATION, [memory.id], 10) == {memory.id}

    assert send("postToolUse") == ""
    assert recall_count(app) == 1


def test_a_newer_prompts_nudges_replace_those_still_held(app: Runtime, send: Any) -> None:
    app.thatch.remember("invoice-numbers", INVOICES, store="global")
    send("beforeSubmitPrompt", generation_id="gen-1")
    asked = "How are invoices numbered per tenant?"
    send("beforeSubmitPrompt", generation_id="gen-2", prompt=asked)
    delivered = context(send("postToolUse"))
    assert INVOICES in delivered
    assert GIFT_CARDS not in delivered
    assert recall_count(app) == 0
    assert recall_count(app, "invoice-numbers") == 1


def test_nudges_still_held_at_a_session_start_go_out_there(app: Runtime, send: Any) -> None:
    send("beforeSubmitPrompt")
    started = context(send("sessionStart"))
    assert started.startswith(SESSION_BRIEFING)
    assert GIFT_CARDS_LINE in started
    assert recall_count(app) == 1
    assert send("postToolUse") == ""


def test_nothing_is_delivered_while_the_conversation_compacts(app: Runtime, send: Any) -> None:
    send("beforeSubmitPrompt")
    send("preCompact")
    assert send("postToolUse") == ""
    assert recall_count(app) == 0
    assert GIFT_CARDS_LINE in context(send("sessionStart"))


def test_another_conversations_tool_call_gets_nothing(app: Runtime, send: Any) -> None:
    send("beforeSubmitPrompt")
    assert send("postToolUse", conversation_id="another-conversation") == ""
    assert GIFT_CARDS_LINE in context(send("postToolUse"))


def test_decision_fires_are_logged_when_the_nudge_is_delivered(app: Runtime, send: Any) -> None:
    th = app.thatch
    # Global, like the memory: the test process's own folder may be a repository.
    th.decisions.update(
        "adding partial refunds", "reuse the card refund flow", "create", store="global"
    )
    send("beforeSubmitPrompt")
    assert th.decision_storage.fires() == []
    delivered = context(send("postToolUse"))
    assert DECISION_HEADER in delivered
    assert [fire.session for fire in th.decision_storage.fires()] == [CONVERSATION]


@pytest.mark.parametrize("claude_first", [True, False], ids=["claude-first", "cursor-first"])
def test_a_tool_call_reported_through_both_plugins_delivers_the_set_once(
    app: Runtime, payload: Payload, project: Path, send: Any, claude_first: bool
) -> None:
    send("beforeSubmitPrompt")
    body = payload("postToolUse", cwd=str(project), workspace_roots=[str(project)])
    as_claude = {**body, "hook_event_name": "PostToolUse"}
    reports = [("cursor", "postToolUse", body), ("claude", "PostToolUse", as_claude)]
    answers = [send_hook(app, *report) for report in (reports[::-1] if claude_first else reports)]
    delivered = [answer for answer in answers if answer]
    if claude_first:
        # The Claude-format answer is not one Cursor is sure to read: the set waits.
        assert delivered == []
        assert GIFT_CARDS_LINE in context(send("postToolUse"))
    else:
        (only,) = delivered
        assert GIFT_CARDS_LINE in context(only)
        assert send("postToolUse") == ""
    assert recall_count(app) == 1


def test_a_failed_calls_hook_leaves_the_held_nudges_for_the_next_post_tool_use(
    send: Any,
) -> None:
    # Cursor reads additional_context from postToolUse, not from postToolUseFailure.
    send("beforeSubmitPrompt")
    assert send("postToolUseFailure", tool_use_id="toolu_failed_1") == ""
    assert GIFT_CARDS in context(send("postToolUse"))
