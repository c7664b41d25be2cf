"""What a Cursor hook prints: nudges as ``{"additional_context": ...}``.

Cursor reads ``additional_context`` from sessionStart and postToolUse hooks.
For beforeSubmitPrompt its documented outputs are only ``continue`` and
``user_message``; whether it also honours ``additional_context`` there is
UNCERTAIN, so the prompt answer carries it too (an unknown key is ignored)
together with ``continue: true``, which lets the prompt through whatever
Cursor's default is. ``followup_message`` is never used: on stop it would
make the agent run another turn, and thatch must never keep an agent looping.

Standard library only.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from thatch.events import Event
    from thatch.nudges.model import Nudge

#: Event kinds whose Cursor hook can add context for the agent.
CONTEXT_KINDS = frozenset({"session_start", "prompt", "tool_use"})

SEPARATOR = "\n\n"


def deliver(nudges: Sequence[Nudge], event: Event) -> str:
    """The exact stdout of the hook answering ``event`` ("" when there is nothing to add).

    Never None: plain text on a Cursor hook's stdout is not JSON, so core's
    plain-text fallback must not run for Cursor.
    """
    return deliver_text(SEPARATOR.join(nudge.text for nudge in nudges if nudge.text), event)


def deliver_text(text: str, event: Event) -> str:
    """``text`` as the JSON the hook for ``event`` prints ("" for no text or no context slot)."""
    if not text or event.kind not in CONTEXT_KINDS:
        return ""
    output: dict[str, object] = {"additional_context": text}
    if event.kind == "prompt":
        output = {"continue": True, **output}
    # ASCII escapes: the hook's stdout may not be UTF-8, and JSON readers undo them.
    return json.dumps(output)
