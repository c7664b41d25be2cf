"""Core events: what a harness's hook payload means, independent of the harness.

A harness (:class:`thatch.plugin.harness.Harness`) turns its raw JSON into
an :class:`Event` (``Harness.parse_event``); observers (``thatch_ingest``) and nudge sources
(``thatch_nudges``) only ever see events.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

#: What happened. ``compact`` means the harness is about to compact the
#: conversation; ``session_start`` with ``source == "compact"`` means it is done.
EventKind = Literal[
    "session_start", "prompt", "tool_use", "stop", "subagent_stop", "compact", "session_end"
]
EVENT_KINDS: tuple[str, ...] = EventKind.__args__  # type: ignore[attr-defined]


@attrs.frozen
class ToolCall:
    """One tool the agent ran, with what it was given and what it returned.

    A failed call (it raised, was refused, or the user stopped it) has
    ``failed`` set; ``error`` and ``interrupted`` say more when the harness
    does, and either one requires ``failed``.
    """

    name: str
    input: Any = None
    response: Any = None
    #: The harness's id of the call (Claude ``tool_use_id``), when it has one.
    call_id: str | None = None
    failed: bool = False
    #: What went wrong, in the harness's words (Claude ``error``); None when it said nothing.
    error: str | None = None
    #: The user stopped the call (Claude ``is_interrupt``).
    interrupted: bool = False

    def __attrs_post_init__(self) -> None:
        if (self.error is not None or self.interrupted) and not self.failed:
            raise ValueError(
                f"tool call {self.name!r} has an error or was interrupted but is not "
                "marked failed; pass failed=True"
            )


@attrs.frozen
class Event:
    """One hook event of one session."""

    kind: EventKind
    harness: str
    session_id: str
    #: The harness's own name for the event (``UserPromptSubmit``, ``postToolUse``...).
    hook_event: str = ""
    cwd: str | None = None
    prompt: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    #: Why a session started or ended, or what triggered a compaction.
    source: str | None = None
    #: Set by core: unique per hook invocation (a replayed spool file keeps it).
    event_id: str = ""
    #: Set by core: when the hook command received the event (epoch seconds).
    received_at: float = 0.0
    #: The harness's identity of the event, when two harnesses may report the
    #: same one (Cursor also runs Claude Code hooks); core processes it once.
    identity: str | None = None
    #: The session that started this one as a sub-agent, when the harness
    #: gives sub-agents sessions of their own and says whose (opencode).
    parent_session_id: str | None = None
    #: The harness made the prompt up (Claude Code hands background results
    #: back as prompts): it is recorded and observed, but gets no nudges.
    synthetic: bool = False
    #: The session's transcript file, when the harness names it (Claude Code's
    #: ``transcript_path``): read with ``Harness.read_transcript``.
    transcript_path: str | None = None


def shared_identity(kind: str, session_id: str, key: str | None) -> str | None:
    """The identity of an event that two harnesses may both report.

    Cursor also runs Claude Code's hooks, so with both set up one Cursor
    event reaches ``thatch hook cursor ...`` and ``thatch hook claude ...``.
    Both plugins build the identity from the same payload fields with this
    function, and core processes the first and drops the second.

    :param kind: the event kind (``tool_use``, ``prompt``...).
    :param session_id: the harness's session or conversation id.
    :param key: what tells this event apart within the session (the tool
        call id, the generation id); None when the payload has none.
    """
    return f"{kind}:{session_id}:{key}" if key else None
