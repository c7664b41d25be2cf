"""Which hook commands print an answer the agent reads: session starts and prompts.

Only those wait for a daemon that is starting or warming up (see
:mod:`thatch.hookcmd.cap`, the cold-start allowance); the others — tool
calls, stops, compaction — answer nothing, so they spool and exit at once.

The hot path cannot ask the harness plugins (importing them costs every
hook far more than this lookup), so the event names are listed here: the
named commands of :data:`thatch.payloads.COMMAND_EVENTS` and each shipped
harness's session-start and prompt events. Unit tests keep both lists in
step with the plugins' own tables. An unknown event name is treated as one
whose answer nobody reads: it loses at most a reply, never the event.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from thatch.hookcmd.args import HookArgs

#: Named commands that stand for a session start, and for a prompt.
SESSION_START_COMMANDS = frozenset({"reminder"})
PROMPT_COMMANDS = frozenset({"flush-tools", "flush-predictions"})
ANSWERED_COMMANDS = SESSION_START_COMMANDS | PROMPT_COMMANDS

#: ``thatch hook HARNESS EVENT`` events that stand for a session start, and
#: for a prompt, lower-cased (Cursor's plugin reads its event names in any case).
SESSION_START_EVENTS = frozenset(
    {
        # Claude Code (and Cursor's sessionStart, lower-cased)
        "sessionstart",
        # opencode
        "session.created",
        "session.compacted",
    }
)
PROMPT_EVENTS = frozenset(
    {
        # Claude Code
        "userpromptsubmit",
        # Cursor
        "beforesubmitprompt",
        # opencode
        "chat.message",
    }
)
ANSWERED_EVENTS = SESSION_START_EVENTS | PROMPT_EVENTS

#: :func:`kind`'s answers.
SESSION_START = "session_start"
PROMPT = "prompt"


def answer_read(args: HookArgs) -> bool:
    """Whether the agent reads what this hook command prints."""
    return kind(args) is not None


def kind(args: HookArgs) -> str | None:
    """:data:`SESSION_START`, :data:`PROMPT`, or None for an event whose answer nobody reads."""
    if args.command == "hook":
        event = (args.event or "").lower()
        if event in SESSION_START_EVENTS:
            return SESSION_START
        return PROMPT if event in PROMPT_EVENTS else None
    if args.command in SESSION_START_COMMANDS:
        return SESSION_START
    return PROMPT if args.command in PROMPT_COMMANDS else None


def from_cursor(payload: Mapping[str, Any], environ: Mapping[str, str]) -> bool:
    """Whether a named command's payload is Cursor's, else it is Claude Code's.

    Cursor's names a ``conversation_id``, and Cursor sets ``CURSOR_VERSION``
    for the commands it runs. The daemon reads the payload by this rule
    (:mod:`thatch.payloads`), and the hook answers by it when no daemon does
    (:mod:`thatch.hookcmd.fallback`).
    """
    return "conversation_id" in payload or bool(environ.get("CURSOR_VERSION"))
