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


@attrs.frozen
class Delivered:
    """One nudge a hook answer carried to a session's agent."""

    session_id: str
    #: When the answer was given (epoch seconds).
    at: float
    #: The harness's event whose answer carried it (``UserPromptSubmit``, ``postToolUse`` …).
    event: str
    #: Who made it (:attr:`thatch.plugin.nudge.Nudge.source`).
    source: str
    tier: int
    text: str


@attrs.frozen
class PendingWrite:
    """A write to the storage backend that failed and waits to be tried again."""

    id: int
    #: What it writes (a kind :mod:`thatch.deferred` knows).
    kind: str
    #: Its arguments, as JSON text.
    args: str
    #: Tries so far, the first (the one that failed after the answer) included.
    tries: int
    #: When it is next due (epoch seconds).
    next_at: float
    #: The last try's error message.
    last_error: str
    #: When it first failed (epoch seconds).
    created_at: float
