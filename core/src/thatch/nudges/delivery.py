"""Core's output formats for chosen nudges: plain text and Claude Code's hook JSON.

Standard library only at import time, like the hook commands.
"""

from __future__ import annotations

import json

# Not ``typing.TYPE_CHECKING``: importing typing costs the hook commands ~2 ms.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Sequence

    from thatch.plugin.nudge import Nudge

SEPARATOR = "\n\n"


def plain(nudges: Sequence[Nudge]) -> str:
    """The nudges' texts separated by blank lines ("" for none)."""
    return SEPARATOR.join(nudge.text for nudge in nudges)


def hook_json(text: str, hook_event_name: str) -> str:
    """``text`` as the JSON a Claude Code hook prints to add context ("" for no text).

    Claude Code reads ``hookSpecificOutput.additionalContext`` on
    SessionStart, UserPromptSubmit, PostToolUse and others; ``hookEventName``
    must be the event the hook answers.
    """
    if not text:
        return ""
    output = {"hookSpecificOutput": {"hookEventName": hook_event_name, "additionalContext": text}}
    # ASCII escapes: the hook's stdout may not be UTF-8, and JSON readers undo them.
    return json.dumps(output)
