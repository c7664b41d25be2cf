"""What a hook prints itself when no daemon answers a session start or a prompt.

A daemon that cannot start, hangs or answers with an error must not leave
the agent without its memory's instructions: a session start still gets the
fixed part of its reminder (how to recall, what to save), a prompt the
one-line save reminder, in the format of the harness whose payload came
(:func:`harness_of`). Both texts come from :mod:`thatch.reminder_text`,
which the daemon's reminders use too.

Nothing is printed for an event whose answer nobody reads (a tool call, a
stop), for ``flush-predictions`` (it answers with the decision model alone,
beside ``flush-tools``, which already carries the save reminder), for
Cursor's prompt hook (its output cannot add context), nor for a harness
whose format is unknown here.
"""

from __future__ import annotations

import json

from thatch import reminder_text
from thatch.hookcmd import answers

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from thatch.hookcmd.args import HookArgs

#: The Claude Code event a named command answers when the payload names none
#: (as :data:`thatch.payloads.COMMAND_EVENTS` has it).
_CLAUDE_EVENTS = {answers.SESSION_START: "SessionStart", answers.PROMPT: "UserPromptSubmit"}
#: Harnesses that read a session start's or a prompt's plain stdout.
_PLAIN_TEXT_HARNESSES = frozenset({"claude", "opencode"})


def output(args: HookArgs, payload: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """The hook's stdout standing in for the daemon's answer ("" for none)."""
    kind = answers.kind(args)
    if kind is None or args.command == "flush-predictions":
        return ""
    if kind == answers.SESSION_START:
        text = reminder_text.SESSION_REMINDER_STATIC
    else:
        text = reminder_text.SAVE_REMINDER
    harness = harness_of(args, payload, environ)
    text = reminder_text.named(text, reminder_text.tool_prefix(harness))
    if harness == "cursor":
        # Cursor adds context from sessionStart only (see thatch_cursor.delivery).
        return json.dumps({"additional_context": text}) if kind == answers.SESSION_START else ""
    if harness not in _PLAIN_TEXT_HARNESSES:
        return ""
    if args.json and args.command != "hook":
        from thatch.nudges.delivery import hook_json

        event = payload.get("hook_event_name")
        return hook_json(text, event if isinstance(event, str) and event else _CLAUDE_EVENTS[kind])
    return text


def harness_of(args: HookArgs, payload: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """The harness the event came from, as the daemon tells it (:mod:`thatch.payloads`).

    ``thatch hook`` names it; a named command reads Claude Code's payloads or
    Cursor's, which carry a ``conversation_id`` (or run with ``CURSOR_VERSION`` set).
    """
    if args.command == "hook":
        return (args.harness or "").lower()
    if answers.from_cursor(payload, environ):
        return "cursor"
    return "claude"
