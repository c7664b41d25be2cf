"""Core events from the payloads of Claude Code's named hook commands.

``thatch reminder``, ``buffer-batch``, ``buffer-tool``, ``flush-tools`` and
``flush-predictions`` are what older setups wrote into Claude Code's hooks
(``thatch hook claude EVENT`` reads the same payloads through
:mod:`thatch_claude.events`). Cursor runs those hooks too, so these readers
also take Cursor's spellings (``conversation_id``, ``tool_output``,
``error_message``, ``workspace_roots``); whose payload it is, core tells by
the harnesses' claims and sets the event's harness accordingly.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from thatch.plugin import (
    Event,
    InvalidInputError,
    ToolCall,
    optional_flag,
    optional_text,
    shared_identity,
    text_field,
)

from thatch_claude import HARNESS

if TYPE_CHECKING:
    from thatch.plugin import HookCommand

log = logging.getLogger("thatch")

#: Hook events that report only failed tool calls, as Claude Code and Cursor name them.
FAILURE_EVENTS = frozenset({"PostToolUseFailure", "postToolUseFailure"})

#: Background results Claude Code hands back as prompts; they get no nudges.
SYNTHETIC_PROMPT_PREFIX = "<task-notification>"


def parse_command_payload(command: HookCommand, payload: Mapping[str, Any]) -> Event:
    """The event a named hook command received; raises InvalidInputError naming the field."""
    from thatch_claude.events import EVENT_KINDS

    kind = EVENT_KINDS[command.event]
    session_id = text_field(
        payload, "conversation_id" if "conversation_id" in payload else "session_id"
    )
    hook_event = optional_text(payload, "hook_event_name") or command.event
    fields: dict[str, Any] = {}
    if command.event == "PostToolBatch":
        fields["tool_calls"] = batch_calls(payload)
    elif kind == "tool_use":
        call = tool_call(payload, "", failed=hook_event in FAILURE_EVENTS)
        fields["tool_calls"] = (call,)
        # The same rule as the harness plugins, so one call reported both
        # ways (a named hook and `thatch hook`) is taken once.
        fields["identity"] = shared_identity("tool_use", session_id, call.call_id)
    elif kind == "prompt":
        fields.update(prompt_fields(payload))
    elif kind == "session_start":
        fields["source"] = optional_text(payload, "source")
    return Event(
        kind=kind,
        harness=HARNESS,
        session_id=session_id,
        hook_event=hook_event,
        cwd=optional_text(payload, "cwd") or first_root(payload),
        **fields,
    )


def prompt_fields(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A prompt event's ``prompt``, and ``synthetic`` for a background result posing as one."""
    prompt = text_field(payload, "prompt", allow_empty=True)
    return {"prompt": prompt, "synthetic": prompt.lstrip().startswith(SYNTHETIC_PROMPT_PREFIX)}


def batch_calls(payload: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    """The calls of a batch's ``tool_calls``; a malformed one is logged and left out.

    A batch reports a whole turn (twenty calls, say): one call a harness got
    wrong must not cost the others. A batch whose every call is malformed is
    a bad payload.

    :raises InvalidInputError: ``tool_calls`` is not a list, or none of its
        calls is well formed (the first one's error).
    """
    calls = payload.get("tool_calls")
    if not isinstance(calls, list):
        raise InvalidInputError("payload field 'tool_calls' must be a list of tool calls")
    kept: list[ToolCall] = []
    errors: list[InvalidInputError] = []
    for i, call in enumerate(calls):
        try:
            kept.append(tool_call(call, f"tool_calls[{i}]."))
        except InvalidInputError as exc:
            errors.append(exc)
    if errors and not kept:
        raise errors[0]
    for error in errors:
        log.warning("a tool call of the batch was left out: %s", error)
    return tuple(kept)


def tool_call(data: Any, where: str, *, failed: bool = False) -> ToolCall:
    """One tool call; ``where`` prefixes field names in errors (``tool_calls[2].``).

    A failure's message is ``error`` (Claude Code's PostToolUseFailure) or
    ``error_message`` (Cursor's postToolUseFailure). Either one, or
    ``is_interrupt``, marks the call failed; so does ``failed``, for an
    event that reports only failures.
    """
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"{where.rstrip('.') or 'payload'} must be a JSON object")
    name = text_field(data, "tool_name", where=where)
    response = data.get("tool_response", data.get("tool_output"))
    if isinstance(response, str) and "tool_output" in data:
        # Cursor sends the output as a JSON string.
        with contextlib.suppress(ValueError):
            response = json.loads(response)
    error = optional_text(data, "error", where=where, keep_empty=True)
    if error is None:
        error = optional_text(data, "error_message", where=where, keep_empty=True)
    interrupted = optional_flag(data, "is_interrupt", where=where)
    return ToolCall(
        name=name,
        input=data.get("tool_input"),
        response=response,
        call_id=optional_text(data, "tool_use_id", where=where),
        # An empty message still says the call failed, but says nothing more.
        failed=failed or error is not None or interrupted,
        error=error or None,
        interrupted=interrupted,
    )


def first_root(payload: Mapping[str, Any]) -> str | None:
    """The first of Cursor's ``workspace_roots``: the project when ``cwd`` is missing."""
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return None
