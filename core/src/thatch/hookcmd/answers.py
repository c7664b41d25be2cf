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
    from thatch.hookcmd.args import HookArgs

#: Named commands that stand for a session start or a prompt.
ANSWERED_COMMANDS = frozenset({"reminder", "flush-tools", "flush-predictions"})

#: ``thatch hook HARNESS EVENT`` events that stand for a session start or a
#: prompt, lower-cased (Cursor's plugin reads its event names in any case).
ANSWERED_EVENTS = frozenset(
    {
        # Claude Code
        "sessionstart",
        "userpromptsubmit",
        # Cursor (sessionStart is Claude Code's name, lower-cased)
        "beforesubmitprompt",
        # opencode
        "session.created",
        "session.compacted",
        "chat.message",
    }
)


def answer_read(args: HookArgs) -> bool:
    """Whether the agent reads what this hook command prints."""
    if args.command == "hook":
        return (args.event or "").lower() in ANSWERED_EVENTS
    return args.command in ANSWERED_COMMANDS
