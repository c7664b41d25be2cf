"""Claude Code hook payloads as core events (``thatch hook claude EVENT``).

The event name on the command line decides the kind; the payload gives the
session, the folder and what the event carries:

==================  ===============  ==========================================
Claude Code event   core kind        from the payload
==================  ===============  ==========================================
SessionStart        session_start    ``source`` (startup, resume, clear, compact)
UserPromptSubmit    prompt           ``prompt`` (``synthetic`` when it is a
                                     background result, ``<task-notification>``)
PostToolUse         tool_use         one call: ``tool_name``, ``tool_input``,
                                     ``tool_response``, ``tool_use_id``
PostToolUseFailure  tool_use         one failed call: ``tool_name``,
                                     ``tool_input``, ``tool_use_id``, ``error``
                                     (the failure message), ``is_interrupt``
PostToolBatch       tool_use         ``tool_calls[]``, each shaped like
                                     PostToolUse's, less those a failure
                                     event reported (below)
Stop                stop
SubagentStop        subagent_stop
PreCompact          compact          ``trigger`` (manual, auto) as ``source``
SessionEnd          session_end      ``reason`` as ``source``
==================  ===============  ==========================================

Every payload has ``session_id``, ``cwd`` and ``transcript_path`` (the
session's transcript, read by :mod:`thatch_claude.transcript`); a malformed
field raises :class:`~thatch.plugin.errors.InvalidInputError` naming it,
except in one of a batch's calls: that call is logged and left out, the
others are kept (:func:`thatch_claude.payloads.batch_calls`).

A failed call is reported twice
-------------------------------
Claude Code fires PostToolUse for successful calls only. A failed one fires
PostToolUseFailure, whose event carries the call with ``failed``, ``error``
and ``interrupted`` set; the turn's PostToolBatch then lists it again, its
``tool_response`` being the error text and nothing marking it failed. Given
a :class:`~thatch_claude.failures.ReportedFailures`, the batch's event
leaves out the calls a failure event already carried, so each call reaches
core once (see :mod:`thatch_claude.failures`).

Cursor runs Claude Code hooks too
---------------------------------
Cursor also runs the hooks in ``.claude/settings.json``, so with both the
Claude and the Cursor plugin set up, one Cursor event can reach
``thatch hook claude ...`` and ``thatch hook cursor ...``. Both plugins give
such an event the same identity, and core processes it once. The rule,
which the Cursor plugin mirrors (:func:`cursor_identity`):

- A payload came from Cursor when it has ``conversation_id`` or
  ``cursor_version``. Its session is ``conversation_id`` (``session_id``
  when absent), so both plugins record the same session.
- Its identity is ``shared_identity(kind, conversation_id, key)`` with key:
  a ``tool_use`` event: the tool call id (several calls: their ids joined by
  ``,``; none when a call has no id); a ``prompt``: ``generation_id``; a
  ``session_start``: the conversation id itself; any other kind: none (no
  identity; Cursor names no key for them and processing one twice is harmless).
- Payloads from Claude Code itself get no identity: only Cursor repeats events.

Cursor's ``transcript_path`` names a transcript in Cursor's own format, so
an event from Cursor has no ``transcript_path``: it is never read as Claude
Code's.

The event's harness stays ``claude`` either way: whoever runs the hook reads
its output the Claude Code way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from thatch.plugin import (
    Event,
    EventKind,
    InvalidInputError,
    ToolCall,
    optional_text,
    shared_identity,
    text_field,
)

from thatch_claude import HARNESS
from thatch_claude.failures import ReportedFailures

# The named commands' payload readers, so both paths name bad fields the same way.
from thatch_claude.payloads import batch_calls, first_root, prompt_fields, tool_call

#: Each Claude Code hook event thatch understands, and the core kind it becomes.
EVENT_KINDS: Mapping[str, EventKind] = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PostToolUse": "tool_use",
    "PostToolUseFailure": "tool_use",
    "PostToolBatch": "tool_use",
    "Stop": "stop",
    "SubagentStop": "subagent_stop",
    "PreCompact": "compact",
    "SessionEnd": "session_end",
}

#: The payload field that becomes ``Event.source``: why it started, compacts or ends.
SOURCE_FIELDS: Mapping[str, str] = {
    "SessionStart": "source",
    "PreCompact": "trigger",
    "SessionEnd": "reason",
}

#: Fields only Cursor's payloads have: their presence means Cursor ran the hook.
CURSOR_FIELDS = ("conversation_id", "cursor_version")


def parse_event(
    hook_event: str, payload: Mapping[str, Any], failures: ReportedFailures | None = None
) -> Event:
    """The core event for one Claude Code hook payload.

    :param hook_event: the Claude Code event name from the command line
        (``UserPromptSubmit``); it decides the kind, since Cursor may name
        the event differently in the payload.
    :param payload: the JSON object the harness wrote to the hook's stdin.
    :param failures: the failure events seen so far, noted and used to leave
        their calls out of the batch that repeats them (None: every call is
        kept, and nothing is noted).
    :raises InvalidInputError: the event is unknown or a field is malformed;
        the message names the field.
    """
    kind = EVENT_KINDS.get(hook_event)
    if kind is None:
        known = ", ".join(EVENT_KINDS)
        raise InvalidInputError(
            f"unknown Claude Code hook event {hook_event!r}; thatch handles {known} "
            "(run 'thatch setup --claude' to rewrite the hooks)"
        )
    if not isinstance(payload, Mapping):
        raise InvalidInputError(f"the {hook_event} payload must be a JSON object")
    from_cursor = came_from_cursor(payload)
    session_id = text_field(
        payload, "conversation_id" if "conversation_id" in payload else "session_id"
    )
    calls = _tool_calls(hook_event, payload)
    if failures is not None and not from_cursor:
        # Only Claude Code repeats a failure in its batch; Cursor's repeats
        # are caught by identity.
        if hook_event == "PostToolUseFailure":
            failures.note(session_id, calls)
        elif hook_event == "PostToolBatch":
            calls = failures.not_reported(session_id, calls)
    fields: dict[str, Any] = {"tool_calls": calls}
    if kind == "prompt":
        fields.update(prompt_fields(payload))
    if hook_event in SOURCE_FIELDS:
        fields["source"] = optional_text(payload, SOURCE_FIELDS[hook_event])
    if from_cursor:
        call_ids = [call.call_id for call in calls]
        fields["identity"] = cursor_identity(kind, session_id, payload, call_ids)
    else:
        # Cursor's transcript_path is in Cursor's own format: never read as Claude's.
        fields["transcript_path"] = optional_text(payload, "transcript_path")
    return Event(
        kind=kind,
        harness=HARNESS,
        session_id=session_id,
        hook_event=hook_event,
        cwd=optional_text(payload, "cwd") or first_root(payload),
        **fields,
    )


def came_from_cursor(payload: Mapping[str, Any]) -> bool:
    """Whether Cursor, not Claude Code, ran the hook that received ``payload``."""
    return any(field in payload for field in CURSOR_FIELDS)


def cursor_identity(
    kind: str,
    conversation_id: str,
    payload: Mapping[str, Any],
    call_ids: Sequence[str | None] = (),
) -> str | None:
    """The identity of an event Cursor reports through both plugins (see the module docs).

    :param kind: the core event kind.
    :param conversation_id: Cursor's ``conversation_id``.
    :param payload: the payload, for ``generation_id``.
    :param call_ids: the ids of the event's tool calls, in order.
    :raises InvalidInputError: ``generation_id`` is not a string.
    """
    key: str | None = None
    if kind == "tool_use":
        ids = [call_id for call_id in call_ids if call_id]
        key = ",".join(ids) if ids and len(ids) == len(call_ids) else None
    elif kind == "prompt":
        key = optional_text(payload, "generation_id")
    elif kind == "session_start":
        key = conversation_id
    return shared_identity(kind, conversation_id, key)


def _tool_calls(hook_event: str, payload: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    if hook_event in ("PostToolUse", "PostToolUseFailure"):
        # A failure payload has no tool_response; its error is the message.
        return (tool_call(payload, "", failed=hook_event == "PostToolUseFailure"),)
    if hook_event != "PostToolBatch":
        return ()
    return batch_calls(payload)
