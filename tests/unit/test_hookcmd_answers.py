"""The hook table: written from the harness objects, read by the hook commands.

Which hook commands wait out a cold start (those whose answer the agent
reads) and what they print when no daemon answers, as the table has it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from thatch.hookcmd import HOOK_COMMANDS, HookArgs, answers, fallback
from thatch.hooktable import build_hook_table, write_hook_table
from thatch.instructions import reminders as reminder_text
from thatch.plugin import AnswerKind, Event, HarnessBase, Nudge
from thatch_claude.harness import ClaudeHarness
from thatch_cursor.harness import CursorHarness
from thatch_opencode.harness import OpencodeHarness

#: Event kinds whose hook output reaches the agent (see thatch.daemon.hook_events).
READ_KINDS = {"session_start", "prompt"}
SESSION = reminder_text.SESSION_REMINDER_STATIC
SAVE = reminder_text.SAVE_REMINDER
CLAUDE_PAYLOAD = {"session_id": "s1"}
CURSOR_PAYLOAD = {"conversation_id": "c1"}


def shipped() -> list[Any]:
    return [ClaudeHarness(), CursorHarness(), OpencodeHarness()]


@pytest.fixture
def table(tmp_path: Path) -> answers.HookTable:
    """The table of the shipped harnesses, written and read back as the hook reads it."""
    write_hook_table(shipped(), answers.table_path(str(tmp_path)))
    loaded = answers.load(str(tmp_path))
    assert loaded is not None
    return loaded


def harness_tables() -> dict[str, dict[str, str]]:
    """Each shipped harness plugin's event names and the core kind each becomes."""
    from thatch_claude.events import EVENT_KINDS as CLAUDE
    from thatch_cursor.payloads import EVENT_KINDS as CURSOR
    from thatch_opencode.events import EVENT_KINDS as OPENCODE

    return {"claude": dict(CLAUDE), "cursor": dict(CURSOR), "opencode": dict(OPENCODE)}


# -- which hooks wait for the daemon ---------------------------------------------------
def test_the_named_commands_match_their_events(table: answers.HookTable) -> None:
    kinds = harness_tables()["claude"]
    read = {
        command.name for command in ClaudeHarness.commands if kinds[command.event] in READ_KINDS
    }
    answered = {name for name, command in table.commands.items() if command["answer"]}
    assert read == answered == {"reminder", "flush-tools", "flush-predictions"}
    assert set(table.commands).issubset(HOOK_COMMANDS)


def test_the_harness_events_match_the_plugins(table: answers.HookTable) -> None:
    for name, events in harness_tables().items():
        read = {event.lower() for event, kind in events.items() if kind in READ_KINDS}
        assert set(table.harnesses[name]["answers"]) == read
        # The table says what each stands for, as the plugin parses it.
        for event, kind in events.items():
            if kind in READ_KINDS:
                assert table.harnesses[name]["answers"][event.lower()] == kind


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
        (HookArgs("hook", "Cursor", "beforeSubmitPrompt"), True),
        (HookArgs("hook", "cursor", "postToolUse"), False),
        (HookArgs("hook", "opencode", "session.compacted"), True),
        (HookArgs("hook", "opencode", "experimental.session.compacting"), False),
        (HookArgs("hook", "unknown", "Whatever"), False),
    ],
    ids=repr,
)
def test_answer_read(table: answers.HookTable, args: HookArgs, read: bool) -> None:
    assert (table.kind(args) is not None) is read


def test_the_forwarded_variables_are_the_harnesses(table: answers.HookTable) -> None:
    expected = {name for harness in shipped() for name in harness.environment}
    assert set(table.environment) == expected
    assert "CLAUDE_PROJECT_DIR" in table.environment


# -- the stand-in answers, in each harness's format --------------------------------------
def stand_in(
    table: answers.HookTable,
    args: HookArgs,
    payload: Mapping[str, Any] = CLAUDE_PAYLOAD,
    environ: Mapping[str, str] | None = None,
) -> str:
    return fallback.output(args, payload, environ or {}, table)


def test_claude_reads_plain_text_from_its_own_hooks(table: answers.HookTable) -> None:
    assert stand_in(table, HookArgs("hook", "claude", "SessionStart")) == SESSION
    assert stand_in(table, HookArgs("hook", "claude", "UserPromptSubmit", json=True)) == SAVE
    assert stand_in(table, HookArgs("reminder")) == SESSION
    assert stand_in(table, HookArgs("flush-tools")) == SAVE


@pytest.mark.parametrize(
    ("command", "text", "event"),
    [("reminder", SESSION, "SessionStart"), ("flush-tools", SAVE, "UserPromptSubmit")],
)
def test_a_named_command_with_json_gets_claudes_hook_json(
    table: answers.HookTable, command: str, text: str, event: str
) -> None:
    printed = json.loads(stand_in(table, HookArgs(command, json=True)))
    assert printed == {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def test_the_decision_models_command_stands_in_with_nothing(table: answers.HookTable) -> None:
    assert stand_in(table, HookArgs("flush-predictions")) == ""
    assert stand_in(table, HookArgs("flush-predictions", json=True)) == ""
    assert stand_in(table, HookArgs("flush-predictions"), CURSOR_PAYLOAD) == ""


@pytest.mark.parametrize("args", [HookArgs("buffer-tool"), HookArgs("hook", "claude", "Stop")])
def test_events_nobody_reads_stand_in_with_nothing(
    table: answers.HookTable, args: HookArgs
) -> None:
    assert stand_in(table, args) == ""


def test_cursor_adds_context_at_session_start_only(table: answers.HookTable) -> None:
    started = json.loads(stand_in(table, HookArgs("hook", "cursor", "sessionStart")))
    assert started == {"additional_context": SESSION}
    assert stand_in(table, HookArgs("hook", "cursor", "beforeSubmitPrompt")) == ""


@pytest.mark.parametrize(
    ("payload", "environ"),
    [(CURSOR_PAYLOAD, {}), (CLAUDE_PAYLOAD, {"CURSOR_VERSION": "1.7"})],
    ids=["conversation_id", "CURSOR_VERSION"],
)
@pytest.mark.parametrize("as_json", [False, True])
def test_a_cursor_payload_in_a_named_command_gets_cursors_answer(
    table: answers.HookTable, payload: dict[str, Any], environ: dict[str, str], as_json: bool
) -> None:
    started = stand_in(table, HookArgs("reminder", json=as_json), payload, environ)
    assert json.loads(started) == {"additional_context": SESSION}
    assert stand_in(table, HookArgs("flush-tools", json=as_json), payload, environ) == ""


def test_an_empty_cursor_version_is_not_cursor(table: answers.HookTable) -> None:
    assert stand_in(table, HookArgs("reminder"), CLAUDE_PAYLOAD, {"CURSOR_VERSION": ""}) == SESSION


def test_opencode_names_the_tools_as_it_shows_them(table: answers.HookTable) -> None:
    text = stand_in(table, HookArgs("hook", "opencode", "session.created"))
    assert text == reminder_text.named(SESSION, "thatch_")
    assert "thatch_memory_recall" in text
    assert stand_in(table, HookArgs("hook", "opencode", "chat.message")) == (
        reminder_text.named(SAVE, "thatch_")
    )


class Boxed(HarnessBase):
    """A harness no core module knows: its hooks answer in its own format."""

    name = "boxed"
    hook_answers: Mapping[str, AnswerKind] = {"Begin": "session_start", "Ask": "prompt"}

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        return f"<{event.kind}:{event.hook_event}>" + " | ".join(n.text for n in nudges)


class Broken(Boxed):
    name = "broken"

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        raise RuntimeError("delivery boom")


def test_any_harness_gets_its_own_stand_ins_and_waits(tmp_path: Path) -> None:
    write_hook_table([Boxed(), Broken()], answers.table_path(str(tmp_path)))
    table = answers.load(str(tmp_path))
    assert table is not None
    assert table.kind(HookArgs("hook", "boxed", "begin")) == "session_start"
    assert stand_in(table, HookArgs("hook", "boxed", "Ask")) == f"<prompt:Ask>{SAVE}"
    # A harness whose delivery fails loses its stand-ins, not the table.
    assert table.kind(HookArgs("hook", "broken", "Ask")) == "prompt"
    assert stand_in(table, HookArgs("hook", "broken", "Ask")) == ""
    # No harness here serves the named commands: they wait for nothing.
    assert table.kind(HookArgs("flush-tools")) is None
    assert stand_in(table, HookArgs("flush-tools")) == ""


# -- the file --------------------------------------------------------------------------
def test_the_table_is_owner_only_and_rewritten_only_when_it_changes(tmp_path: Path) -> None:
    path = Path(answers.table_path(str(tmp_path / "state")))
    write_hook_table(shipped(), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == build_hook_table(shipped())
    written = path.stat().st_mtime_ns
    os.utime(path, ns=(written - 10**9, written - 10**9))
    write_hook_table(shipped(), path)
    assert path.stat().st_mtime_ns == written - 10**9
    write_hook_table([ClaudeHarness()], path)
    assert list(json.loads(path.read_text())["harnesses"]) == ["claude"]
    assert [p.name for p in path.parent.iterdir()] == [path.name]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"version": 2, "harnesses": {}, "commands": {}, "environment": []}',
        b'{"version": 1, "harnesses": {"x": {"answers": []}}, "commands": {}, "environment": []}',
        b'{"version": 1, "harnesses": {}, "commands": {}, "environment": [3]}',
        b'{"version": 1}',
    ],
    ids=["empty", "garbled", "not-an-object", "other-version", "wrong-shape", "bad-name", "short"],
)
def test_a_corrupt_table_is_no_table(tmp_path: Path, content: bytes) -> None:
    path = Path(answers.table_path(str(tmp_path)))
    path.write_bytes(content)
    path.chmod(0o600)
    assert answers.load(str(tmp_path)) is None


def test_a_missing_table_is_no_table(tmp_path: Path) -> None:
    assert answers.load(str(tmp_path / "never-made")) is None


def test_a_table_others_may_write_is_not_trusted(tmp_path: Path) -> None:
    path = Path(answers.table_path(str(tmp_path)))
    write_hook_table(shipped(), path)
    path.chmod(0o622)
    assert answers.load(str(tmp_path)) is None
    path.chmod(0o600)
    assert answers.load(str(tmp_path)) is not None
