"""What a Cursor hook prints: nudges as ``{"additional_context": ...}``.

Cursor reads ``additional_context`` from sessionStart and postToolUse hooks
only (:data:`CONTEXT_KINDS`). beforeSubmitPrompt's output is ``continue`` and
``user_message`` alone: it cannot add context, so the prompt hook prints
nothing, which lets the prompt through. The harness declares these kinds
(``CursorHarness.context_kinds``), and core holds a prompt's nudges in the
session store until the conversation's next postToolUse, or sessionStart, which
carries them. ``followup_message`` is never used: on stop it would make the
agent run another turn, and thatch must never keep an agent looping.

Standard library only.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from thatch.plugin import Event, EventKind, Nudge

#: Event kinds whose Cursor hook can add context for the agent.
CONTEXT_KINDS: frozenset[EventKind] = frozenset({"session_start", "tool_use"})
#: The events themselves: a failed tool call's postToolUseFailure output adds nothing.
CONTEXT_EVENTS: frozenset[str] = frozenset({"sessionStart", "postToolUse"})

SEPARATOR = "\n\n"


def deliver(nudges: Sequence[Nudge], event: Event) -> str:
    """The exact stdout of the hook answering ``event`` ("" when there is nothing to add).

    Never None: plain text on a Cursor hook's stdout is not JSON, so core's
    plain-text fallback must not run for Cursor.
    """
    text = SEPARATOR.join(nudge.text for nudge in nudges if nudge.text)
    if not text or event.kind not in CONTEXT_KINDS:
        return ""
    # ASCII escapes: the hook's stdout may not be UTF-8, and JSON readers undo them.
    return json.dumps({"additional_context": text})
