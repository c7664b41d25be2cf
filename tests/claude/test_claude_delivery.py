"""Nudges as Claude Code reads them, through the plugin's harness (``ClaudeHarness.deliver``)."""

from __future__ import annotations

import json

import pytest
import thatch_claude.plugin
from thatch.plugin.events import Event
from thatch.plugin.harness import Harness
from thatch.plugin.nudge import Nudge
from thatch.testing import plugins_with
from thatch_claude.delivery import CUT_MARK, OUTPUT_LIMIT, hook_json
from thatch_claude.events import EVENT_KINDS

NUDGES = [
    Nudge(source="extraction", text="[thatch] 3 tool interactions may hold knowledge.", tier=1),
    Nudge(source="recall", text="[thatch] Memories:\n- refunds go through the ledger"),
]
JOINED = NUDGES[0].text + "\n\n" + NUDGES[1].text
PLAIN_EVENTS = ("UserPromptSubmit", "SessionStart")
JSON_EVENTS = tuple(name for name in EVENT_KINDS if name not in PLAIN_EVENTS)


def event(hook_event: str, harness: str = "claude") -> Event:
    return Event(kind="prompt", harness=harness, session_id="s", hook_event=hook_event)


def claude() -> Harness:
    """The Claude harness, as core finds it among the installed plugins."""
    harness = plugins_with(thatch_claude.plugin).harness("claude")
    assert harness is not None
    return harness


def deliver(nudges: list[Nudge], hook_event: str) -> str:
    return claude().deliver(nudges, event(hook_event))


def answer_command(nudges: list[Nudge], hook_event: str, *, as_json: bool) -> str:
    return claude().answer_command(nudges, event(hook_event), as_json=as_json)


@pytest.mark.parametrize("hook_event", PLAIN_EVENTS)
def test_plain_text_where_claude_adds_stdout_to_the_context(hook_event: str) -> None:
    assert deliver(NUDGES, hook_event) == JOINED


@pytest.mark.parametrize("hook_event", JSON_EVENTS)
def test_hook_specific_output_json_elsewhere(hook_event: str) -> None:
    output = json.loads(deliver(NUDGES, hook_event))
    assert output == {
        "hookSpecificOutput": {"hookEventName": hook_event, "additionalContext": JOINED}
    }


@pytest.mark.parametrize("hook_event", [*PLAIN_EVENTS, *JSON_EVENTS])
def test_no_nudges_print_nothing(hook_event: str) -> None:
    assert deliver([], hook_event) == ""


def test_an_event_without_a_name_gets_plain_text() -> None:
    assert deliver(NUDGES, "") == JOINED


def test_the_plugin_serves_claude_alone() -> None:
    plugins = plugins_with(thatch_claude.plugin)
    assert list(plugins.harnesses()) == ["claude"]
    assert plugins.harness("cursor") is None


def test_hook_json_is_what_claude_code_reads() -> None:
    output = hook_json("remember … this", "UserPromptSubmit")
    assert json.loads(output) == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "remember … this",
        }
    }
    assert output.isascii()
    assert hook_json("", "SessionStart") == ""


# -- the named commands (thatch flush-tools): the format the command line chose -------
@pytest.mark.parametrize("hook_event", [*PLAIN_EVENTS, *JSON_EVENTS])
def test_a_named_command_prints_plain_text_without_json(hook_event: str) -> None:
    assert answer_command(NUDGES, hook_event, as_json=False) == JOINED


@pytest.mark.parametrize("hook_event", [*PLAIN_EVENTS, *JSON_EVENTS])
def test_a_named_command_with_json_prints_the_hook_json(hook_event: str) -> None:
    output = json.loads(answer_command(NUDGES, hook_event, as_json=True))
    assert output == {
        "hookSpecificOutput": {"hookEventName": hook_event, "additionalContext": JOINED}
    }


@pytest.mark.parametrize("as_json", [False, True])
def test_a_named_commands_answer_stays_under_the_limit(as_json: bool) -> None:
    nudges = [_long("first", 6000), _long("second", 6000)]
    output = answer_command(nudges, "UserPromptSubmit", as_json=as_json)
    assert len(output) < OUTPUT_LIMIT
    assert "[first]" in output
    assert "[second]" not in output
    assert answer_command([], "UserPromptSubmit", as_json=as_json) == ""


def _long(source: str, size: int, letter: str = "x") -> Nudge:
    return Nudge(source=source, text=f"[{source}] " + letter * size)


@pytest.mark.parametrize("hook_event", ["UserPromptSubmit", "PostToolBatch"])
def test_trailing_nudges_are_dropped_to_stay_under_the_limit(hook_event: str) -> None:
    nudges = [_long("first", 4000), _long("second", 4000), _long("third", 4000)]
    output = deliver(nudges, hook_event)
    assert len(output) < OUTPUT_LIMIT
    assert "[first]" in output
    assert "[second]" in output
    assert "[third]" not in output
    assert CUT_MARK not in output


@pytest.mark.parametrize(
    ("hook_event", "letter"),
    [
        ("UserPromptSubmit", "x"),
        ("Stop", "x"),
        # Non-ASCII text grows sixfold in the JSON (\\u escapes): the cut must allow for it.
        ("Stop", "é"),
    ],
)
def test_a_single_nudge_too_long_is_cut_with_a_mark(hook_event: str, letter: str) -> None:
    output = deliver([_long("huge", 30_000, letter)], hook_event)
    assert len(output) < OUTPUT_LIMIT
    text = output if hook_event == "UserPromptSubmit" else _context(output)
    assert text.startswith("[huge] " + letter * 100)
    assert text.endswith(CUT_MARK)
    # Nearly the whole allowance is used, not just a token start.
    assert len(output) > OUTPUT_LIMIT - 20


def test_a_nudge_exactly_at_the_limit_is_cut_and_one_just_below_is_not() -> None:
    below = Nudge(source="n", text="y" * (OUTPUT_LIMIT - 1))
    at = Nudge(source="n", text="y" * OUTPUT_LIMIT)
    assert deliver([below], "UserPromptSubmit") == below.text
    assert deliver([at], "UserPromptSubmit").endswith(CUT_MARK)


def _context(output: str) -> str:
    text: str = json.loads(output)["hookSpecificOutput"]["additionalContext"]
    return text
