"""Cursor hook payloads turned into core events.

Every Cursor payload carries ``conversation_id``, ``generation_id``,
``hook_event_name``, ``workspace_roots``, ``transcript_path`` and
``cursor_version``; each event adds its own fields. The event name comes
from the command line (``thatch hook cursor postToolUse``), which setup
wrote, so a payload whose ``hook_event_name`` disagrees is still read as the
hook it was sent to.

Standard library and core's attrs models only: this runs for every hook.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from thatch.plugin import (
    Event,
    EventKind,
    InvalidInputError,
    ToolCall,
    describe_value,
    optional_text,
    shared_identity,
    text_field,
)

from thatch_cursor import HARNESS

#: Cursor's hook events thatch reads, and the core event each one stands for.
EVENT_KINDS: dict[str, EventKind] = {
    "sessionStart": "session_start",
    "beforeSubmitPrompt": "prompt",
    "postToolUse": "tool_use",
    "postToolUseFailure": "tool_use",
    "stop": "stop",
    "preCompact": "compact",
    "sessionEnd": "session_end",
}

#: Cursor's spelling of each event, looked up case-insensitively: a hand-written
#: ``thatch hook cursor posttooluse`` still means postToolUse.
_CANONICAL = {name.lower(): name for name in EVENT_KINDS}

#: The payload field that says why an event happened, per event (Event.source).
_SOURCE_FIELDS = {"stop": "status", "preCompact": "trigger", "sessionEnd": "reason"}


def event_name(hook_event: str) -> str:
    """Cursor's own spelling of ``hook_event``; raises InvalidInputError for one thatch ignores."""
    name = _CANONICAL.get(hook_event.lower())
    if name is None:
        known = ", ".join(EVENT_KINDS)
        raise InvalidInputError(
            f"Cursor hook event {hook_event!r} is not one thatch reads; "
            f"hook one of {known} (run 'thatch setup --cursor' to rewrite .cursor/hooks.json)"
        )
    return name


def parse_event(hook_event: str, payload: Mapping[str, Any]) -> Event:
    """The core event for one Cursor hook payload.

    :param hook_event: the event name on the command line (``postToolUse``).
    :param payload: the JSON object Cursor wrote to the hook's stdin.
    :raises InvalidInputError: a field is missing or has the wrong type; the
        message names it.
    """
    name = event_name(hook_event)
    kind = EVENT_KINDS[name]
    conversation = text_field(payload, "conversation_id")
    fields: dict[str, Any] = {}
    key: str | None = None
    if kind == "session_start":
        key = conversation
    elif kind == "prompt":
        fields["prompt"] = text_field(payload, "prompt", allow_empty=True)
        key = optional_text(payload, "generation_id")
    elif kind == "tool_use":
        call = _tool_call(payload, failed=name == "postToolUseFailure")
        fields["tool_calls"] = (call,)
        key = call.call_id
    if name in _SOURCE_FIELDS:
        fields["source"] = optional_text(payload, _SOURCE_FIELDS[name])
    return Event(
        kind=kind,
        harness=HARNESS,
        session_id=conversation,
        hook_event=name,
        cwd=optional_text(payload, "cwd") or _first_root(payload),
        identity=shared_identity(kind, conversation, key),
        **fields,
    )


def _tool_call(payload: Mapping[str, Any], *, failed: bool) -> ToolCall:
    """The one tool call of a postToolUse or postToolUseFailure payload."""
    output = _tool_output(payload)
    if failed:
        # UNCERTAIN: Cursor's failure payload is documented as carrying an
        # error message and a failure type; keep whichever fields it sends.
        details: dict[str, Any] = {}
        message = optional_text(payload, "error_message") or optional_text(payload, "error")
        if message:
            details["error"] = message
        failure_type = optional_text(payload, "failure_type")
        if failure_type:
            details["failure_type"] = failure_type
        if output is not None:
            details["response"] = output
        response: Any = details or None
    else:
        response = output
    return ToolCall(
        name=text_field(payload, "tool_name"),
        input=payload.get("tool_input"),
        response=response,
        call_id=optional_text(payload, "tool_use_id"),
        failed=failed,
    )


def _tool_output(payload: Mapping[str, Any]) -> Any:
    """``tool_output``: Cursor sends a JSON string; objects and lists are decoded.

    A string that decodes to a bare number or word stays as it is: a shell
    printing ``42`` produced text, not the integer 42.
    """
    output = payload.get("tool_output")
    if not isinstance(output, str):
        return output
    try:
        decoded = json.loads(output)
    except ValueError:
        return output
    return decoded if isinstance(decoded, dict | list) else output


def _first_root(payload: Mapping[str, Any]) -> str | None:
    """The first folder of ``workspace_roots``, the project a hook without ``cwd`` runs for."""
    roots = payload.get("workspace_roots")
    if roots is None:
        return None
    if not isinstance(roots, list):
        raise InvalidInputError(
            f"payload field 'workspace_roots' must be a list of folder paths, "
            f"got {describe_value(roots)}"
        )
    for index, root in enumerate(roots):
        if not isinstance(root, str) or not root:
            raise InvalidInputError(
                f"payload field 'workspace_roots[{index}]' must be a folder path, "
                f"got {describe_value(root)}"
            )
    return roots[0] if roots else None
