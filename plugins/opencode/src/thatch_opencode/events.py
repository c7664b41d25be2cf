"""Core events from the payloads the thatch JS plugin sends from inside opencode.

The plugin (``thatch.js.tmpl``) runs ``thatch hook opencode EVENT`` with one
JSON object on stdin: ``session_id`` and ``cwd`` always, plus the event's
own fields:

- ``session.created``: ``parent_id`` (the parent session of a subagent, or
  null), kept as ``Event.parent_session_id`` so that a subagent's
  ``extraction_done`` can answer its parent's nudge;
- ``session.compacted``: nothing more (compaction is over);
- ``chat.message``: ``message_id`` and ``parts``, the message's text parts
  as ``{"text", "synthetic"}``;
- ``tool.execute.after``: ``tool``, ``call_id``, ``args``, ``title`` and
  ``output`` (cut to 20,000 characters);
- ``experimental.session.compacting``: nothing more (compaction begins).
"""

from __future__ import annotations

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

from thatch_opencode import HARNESS

#: Each opencode event the plugin forwards and the core event it becomes.
#: ``session.compacted`` starts the session afresh, as Claude Code's
#: SessionStart with source "compact" does, which ends the compaction.
EVENT_KINDS: dict[str, EventKind] = {
    "session.created": "session_start",
    "session.compacted": "session_start",
    "chat.message": "prompt",
    "tool.execute.after": "tool_use",
    "experimental.session.compacting": "compact",
}


def parse_event(hook_event: str, payload: Mapping[str, Any]) -> Event:
    """The core event for one payload; raises InvalidInputError naming the bad field."""
    kind = EVENT_KINDS.get(hook_event)
    if kind is None:
        known = ", ".join(EVENT_KINDS)
        raise InvalidInputError(
            f"opencode event {hook_event!r} is not one thatch reads; use one of {known} "
            "(run 'thatch setup --opencode' to rewrite the plugin)"
        )
    session_id = text_field(payload, "session_id")
    fields: dict[str, Any] = {}
    if hook_event == "session.created":
        parent = optional_text(payload, "parent_id")
        fields["source"] = "subagent" if parent else "startup"
        fields["parent_session_id"] = parent
    elif hook_event == "session.compacted":
        fields["source"] = "compact"
    elif kind == "prompt":
        message_id = optional_text(payload, "message_id")
        fields["prompt"] = _prompt(payload.get("parts"))
        # The plugin may be installed globally and in the project: both copies
        # forward the message, and core keeps the first.
        fields["identity"] = shared_identity(kind, session_id, message_id)
    elif kind == "tool_use":
        call = ToolCall(
            name=text_field(payload, "tool"),
            input=payload.get("args"),
            response=optional_text(payload, "output", keep_empty=True),
            call_id=optional_text(payload, "call_id"),
        )
        fields["tool_calls"] = (call,)
        fields["identity"] = shared_identity(kind, session_id, call.call_id)
    return Event(
        kind=kind,
        harness=HARNESS,
        session_id=session_id,
        hook_event=hook_event,
        cwd=optional_text(payload, "cwd"),
        **fields,
    )


def _prompt(parts: Any) -> str:
    """The user's words: the text parts opencode did not add itself, one per line."""
    if not isinstance(parts, list):
        raise InvalidInputError(
            f"payload field 'parts' must be a list of text parts, got {describe_value(parts)}"
        )
    texts: list[str] = []
    for index, part in enumerate(parts):
        where = f"parts[{index}]."
        if not isinstance(part, Mapping):
            raise InvalidInputError(
                f"payload field 'parts[{index}]' must be an object, got {describe_value(part)}"
            )
        text = text_field(part, "text", where=where, allow_empty=True)
        synthetic = part.get("synthetic", False)
        if not isinstance(synthetic, bool):
            raise InvalidInputError(
                f"payload field '{where}synthetic' must be true/false, "
                f"got {describe_value(synthetic)}"
            )
        # Synthetic parts are opencode's (a file's content, another plugin's
        # note), not what the user typed.
        if not synthetic and text:
            texts.append(text)
    return "\n".join(texts)
