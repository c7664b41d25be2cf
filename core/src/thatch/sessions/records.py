"""What the session store holds: queued tool interactions and per-session state."""

from __future__ import annotations

import attrs


@attrs.frozen
class NewInteraction:
    """A tool interaction to queue, already redacted and truncated.

    Made by :func:`thatch.sessions.ingest.interactions_from`; the store gives it a
    ``seq`` and a session when it is recorded.
    """

    tool_name: str
    tool_input: str
    tool_response: str
    #: The harness's id of the call, when it has one.
    call_id: str | None = None
    failed: bool = False


@attrs.frozen
class Interaction:
    """One queued tool call, already redacted and truncated."""

    #: Arrival order, unique across sessions (SQLite AUTOINCREMENT: never reused).
    seq: int
    session_id: str
    tool_name: str
    tool_input: str
    tool_response: str
    call_id: str | None
    failed: bool
    #: When the event that carried it was received (epoch seconds).
    created_at: float


@attrs.frozen
class SessionState:
    """What the store knows about one session."""

    session_id: str
    harness: str
    cwd: str | None
    #: Prompt events recorded so far.
    prompts: int
    #: Extraction nudges shown since the agent last called ``extraction_done``.
    nudge_level: int
    #: The last seq an extraction nudge covered (0: never nudged).
    last_nudged_seq: int
    #: The harness is compacting the conversation (no nudges meanwhile).
    compacting: bool
    #: When the session's last event was received (epoch seconds).
    last_seen: float
    #: Interactions queued and not yet drained.
    pending: int
    #: The session that started this one as a sub-agent, when the harness said.
    parent_id: str | None = None
