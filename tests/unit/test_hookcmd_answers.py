"""Which hook commands wait out a cold start: those whose answer the agent reads."""

from __future__ import annotations

import pytest
from thatch.hookcmd import HOOK_COMMANDS, HookArgs
from thatch.hookcmd.answers import ANSWERED_COMMANDS, ANSWERED_EVENTS, answer_read
from thatch.payloads import COMMAND_EVENTS

#: Event kinds whose hook output reaches the agent (see thatch.daemon.hook_events).
READ_KINDS = {"session_start", "prompt"}


def harness_tables() -> dict[str, dict[str, str]]:
    """Each shipped harness plugin's event names and the core kind each becomes."""
    from thatch_claude.events import EVENT_KINDS as CLAUDE
    from thatch_cursor.payloads import EVENT_KINDS as CURSOR
    from thatch_opencode.events import EVENT_KINDS as OPENCODE

    return {"claude": dict(CLAUDE), "cursor": dict(CURSOR), "opencode": dict(OPENCODE)}


def test_the_named_commands_match_their_events() -> None:
    read = {command for command, (kind, _) in COMMAND_EVENTS.items() if kind in READ_KINDS}
    assert read == ANSWERED_COMMANDS
    assert ANSWERED_COMMANDS.issubset(HOOK_COMMANDS)


def test_the_harness_events_match_the_plugins() -> None:
    read = {
        name.lower()
        for table in harness_tables().values()
        for name, kind in table.items()
        if kind in READ_KINDS
    }
    assert read == ANSWERED_EVENTS
    # No harness names another kind of event the same way.
    unread = {
        name.lower()
        for table in harness_tables().values()
        for name, kind in table.items()
        if kind not in READ_KINDS
    }
    assert not unread & ANSWERED_EVENTS


@pytest.mark.parametrize(
    ("args", "read"),
    [
        (HookArgs("reminder"), True),
        (HookArgs("flush-tools"), True),
        (HookArgs("flush-predictions"), True),
        (HookArgs("buffer-tool"), False),
        (HookArgs("buffer-batch"), False),
        (HookArgs("hook", "claude", "SessionStart"), True),
        (HookArgs("hook", "claude", "UserPromptSubmit"), True),
        (HookArgs("hook", "claude", "PostToolUse"), False),
        (HookArgs("hook", "cursor", "sessionstart"), True),  # Cursor reads any case
        (HookArgs("hook", "cursor", "postToolUse"), False),
        (HookArgs("hook", "opencode", "session.compacted"), True),
        (HookArgs("hook", "opencode", "experimental.session.compacting"), False),
        (HookArgs("hook", "unknown", "Whatever"), False),
    ],
    ids=repr,
)
def test_answer_read(args: HookArgs, read: bool) -> None:
    assert answer_read(args) is read
