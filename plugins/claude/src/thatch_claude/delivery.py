"""Nudges as Claude Code reads a hook's stdout.

Claude Code adds plain stdout to the context only for UserPromptSubmit and
SessionStart; every other event needs ``hookSpecificOutput.additionalContext``
JSON. Output over 10,000 characters is moved to a file the agent may never
open, so the output is kept below that: trailing nudges are dropped first,
and a single nudge still too long is cut.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thatch.plugin import Nudge

#: Between two nudges' texts, as :func:`thatch.plugin.plain_text` joins them.
SEPARATOR = "\n\n"

#: Claude Code moves hook output of this many characters or more to a file.
OUTPUT_LIMIT = 10_000

#: Events whose plain stdout Claude Code adds to the agent's context.
PLAIN_TEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart"})

#: Ends a nudge cut to fit, so the agent knows text is missing.
CUT_MARK = "\n[thatch: cut to fit Claude Code's hook output limit]"


def deliver(nudges: Sequence[Nudge], hook_event: str, limit: int = OUTPUT_LIMIT) -> str:
    """The hook's stdout for ``nudges`` answering ``hook_event`` ("" for none).

    :param nudges: the chosen nudges, most important first.
    :param hook_event: the Claude Code event being answered; unknown or empty
        names get plain text, since JSON needs the event's name.
    :param limit: the output stays shorter than this many characters.
    """
    return _fit(nudges, _renderer(hook_event), limit)


def answer_command(
    nudges: Sequence[Nudge], hook_event: str, *, as_json: bool, limit: int = OUTPUT_LIMIT
) -> str:
    """A named command's stdout (``thatch flush-tools``): plain text, or ``--json``'s JSON.

    Older setups chose the format on the command line, so it is kept as
    they asked rather than chosen by event as :func:`deliver` does.
    """
    if as_json:
        return _fit(nudges, lambda text: hook_json(text, hook_event), limit)
    return _fit(nudges, _plain, limit)


def _fit(nudges: Sequence[Nudge], render: Callable[[str], str], limit: int) -> str:
    """The rendered nudges, trailing ones dropped (and a last one cut) to stay under ``limit``."""
    texts = [nudge.text for nudge in nudges if nudge.text]
    while texts:
        output = render(SEPARATOR.join(texts))
        if len(output) < limit:
            return output
        if len(texts) == 1:
            return _cut(texts[0], render, limit)
        texts.pop()
    return ""


def _plain(text: str) -> str:
    return text


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


def _renderer(hook_event: str) -> Callable[[str], str]:
    if not hook_event or hook_event in PLAIN_TEXT_EVENTS:
        return _plain
    return lambda text: hook_json(text, hook_event)


def _cut(text: str, render: Callable[[str], str], limit: int) -> str:
    """The longest start of ``text`` (with :data:`CUT_MARK`) whose output fits ``limit``.

    JSON escapes make the output longer than the text by an amount that
    depends on the characters kept, so the length is searched, not computed.
    """
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if len(render(text[:middle].rstrip() + CUT_MARK)) < limit:
            low = middle
        else:
            high = middle - 1
    output = render(text[:low].rstrip() + CUT_MARK)
    return output if low and len(output) < limit else ""
