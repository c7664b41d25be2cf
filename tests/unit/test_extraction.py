"""Turning tool calls into queued interactions: own tools out, secrets redacted, text cut.

Secrets below are fake and assembled at run time, so this file holds nothing
a secret scanner would take for a live key.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import attrs
import pytest
import thatch_claude.plugin
import thatch_cursor.plugin
import thatch_opencode.plugin
from thatch.plugin.events import Event, ToolCall
from thatch.sessions.ingest import (
    THATCH_TOOL_NAMES,
    interactions_from,
    is_thatch_tool,
    salient,
    truncate,
)
from thatch.testing import plugins_with

AWS_KEY_ID = "AK" + "IA" + "".join(itertools.islice(itertools.cycle("Q3Z7ABCDEFGH"), 16))
GITHUB_TOKEN = "gh" + "p_" + "".join(itertools.islice(itertools.cycle("a1B2c3D4e5F6"), 36))

_CUT = re.compile(r"\[\.\.\. ([\d,]+) characters cut \.\.\.\]")


#: The shipped harnesses, as the daemon finds them (the extraction asks the event's).
SHIPPED = plugins_with(thatch_claude.plugin, thatch_cursor.plugin, thatch_opencode.plugin)
CLAUDE = SHIPPED.harness("claude")


def tool_event(*tool_calls: ToolCall) -> Event:
    return Event(kind="tool_use", harness="claude", session_id="s1", tool_calls=tool_calls)


def cut_count(text: str) -> int:
    match = _CUT.search(text)
    assert match, text
    return int(match.group(1).replace(",", ""))


# -- own tools ---------------------------------------------------------------------


#: How each harness's events spell thatch's tools (Cursor also runs Claude Code's hooks).
SPELLINGS = [
    *(("claude", s) for s in ("{}", "mcp__thatch__{}", "MCP:{}", "MCP:mcp__thatch__{}")),
    *(("cursor", s) for s in ("{}", "MCP:{}", "MCP: {}", "MCP:mcp__thatch__{}")),
    *(("opencode", s) for s in ("{}", "thatch_{}")),
]


@pytest.mark.parametrize("tool", THATCH_TOOL_NAMES)
@pytest.mark.parametrize(("harness", "spelling"), SPELLINGS)
def test_every_harness_spelling_of_an_own_tool_is_excluded(
    tool: str, harness: str, spelling: str
) -> None:
    name = spelling.format(tool)
    assert is_thatch_tool(name, SHIPPED.harness(harness))
    event = attrs.evolve(tool_event(ToolCall(name=name, input={}, response="ok")), harness=harness)
    assert interactions_from(event, SHIPPED.harness(harness)) == []


def test_plugin_tools_of_the_thatch_server_are_excluded() -> None:
    assert is_thatch_tool("mcp__thatch__tickets_sync", CLAUDE)
    assert is_thatch_tool("MCP:mcp__thatch__tickets_sync", SHIPPED.harness("cursor"))
    assert is_thatch_tool("thatch_tickets_sync", SHIPPED.harness("opencode"))


@pytest.mark.parametrize("harness", ["claude", "cursor", "opencode", None])
@pytest.mark.parametrize(
    "name", ["Bash", "Read", "mcp__github__create_issue", "MCP:create_issue", "memory", "recall"]
)
def test_other_tools_are_kept(harness: str | None, name: str) -> None:
    chosen = SHIPPED.harness(harness) if harness else None
    assert not is_thatch_tool(name, chosen)
    assert len(interactions_from(tool_event(ToolCall(name=name, input="x")), chosen)) == 1


@pytest.mark.parametrize("tool", THATCH_TOOL_NAMES)
def test_a_harness_no_plugin_serves_is_known_by_the_bare_names_only(tool: str) -> None:
    assert is_thatch_tool(tool)
    assert not is_thatch_tool(f"mcp__thatch__{tool}")
    assert not is_thatch_tool(f"MCP:{tool}")


def test_each_harness_says_its_own_prefixes() -> None:
    # opencode's server prefix is not Claude Code's: a Claude tool so named is the user's.
    assert not is_thatch_tool("thatch_tickets_sync", CLAUDE)
    assert not is_thatch_tool("mcp__thatch__tickets_sync", SHIPPED.harness("opencode"))


def test_own_tools_are_dropped_and_the_rest_keep_their_order() -> None:
    event = tool_event(
        ToolCall(name="Bash", input={"command": "pytest"}, response="3 passed", call_id="t1"),
        ToolCall(name="mcp__thatch__memory_remember", input={"content": "x"}, response="ok"),
        ToolCall(name="Edit", input={"file_path": "a.py"}, response=None, failed=True),
    )
    first, second = interactions_from(event, CLAUDE)
    assert (first.tool_name, first.call_id, first.failed) == ("Bash", "t1", False)
    assert (second.tool_name, second.call_id, second.failed) == ("Edit", None, True)


def test_an_event_without_tool_calls_gives_nothing() -> None:
    prompt = Event(kind="prompt", harness="claude", session_id="s1", prompt="hello")
    assert interactions_from(prompt) == []


# -- text ----------------------------------------------------------------------------


def test_structured_values_become_compact_json_and_strings_stay() -> None:
    value = {"command": "ls -la", "flags": [1, 2], "note": "café"}
    (item,) = interactions_from(tool_event(ToolCall(name="Bash", input=value, response="a\nb")))
    assert item.tool_input == '{"command":"ls -la","flags":[1,2],"note":"café"}'
    assert json.loads(item.tool_input) == value
    assert item.tool_response == "a\nb"


def test_missing_values_become_empty_text() -> None:
    (item,) = interactions_from(tool_event(ToolCall(name="Bash")))
    assert (item.tool_input, item.tool_response) == ("", "")


def test_values_json_cannot_encode_are_shown_as_text() -> None:
    (item,) = interactions_from(tool_event(ToolCall(name="X", input={"at": Path("/srv/app")})))
    assert item.tool_input == '{"at":"/srv/app"}'


@pytest.mark.parametrize("secret", [AWS_KEY_ID, GITHUB_TOKEN], ids=["aws", "github"])
def test_secrets_in_tool_output_and_input_are_redacted(secret: str) -> None:
    call = ToolCall(
        name="Bash",
        input={"command": f"deploy --key {secret}"},
        response=f"using credentials {secret}\ndone",
    )
    (item,) = interactions_from(tool_event(call))
    for text in (item.tool_input, item.tool_response):
        assert secret not in text
        assert "[REDACTED:" in text
    assert item.tool_response.endswith("\ndone")


@pytest.mark.parametrize("secret", [AWS_KEY_ID, GITHUB_TOKEN], ids=["aws", "github"])
def test_a_secret_in_a_tool_name_is_redacted(secret: str) -> None:
    (item,) = interactions_from(tool_event(ToolCall(name=f"Bash-{secret}", input={})), CLAUDE)
    assert secret not in item.tool_name
    assert item.tool_name.startswith("Bash-[REDACTED:")


def test_a_secret_in_the_tail_of_a_huge_output_is_redacted() -> None:
    huge = "line of build output\n" * 400_000 + f"token {GITHUB_TOKEN}\nfinished"
    (item,) = interactions_from(tool_event(ToolCall(name="Bash", response=huge)))
    assert GITHUB_TOKEN not in item.tool_response
    assert "[REDACTED:github-token]" in item.tool_response
    assert item.tool_response.endswith("finished")
    assert len(item.tool_response) <= 2000


def test_long_values_keep_head_and_tail_within_the_limits() -> None:
    command = "A" * 3000 + "B" * 3000
    output = "start\n" + "x" * 10_000 + "\nTraceback: the error"
    call = ToolCall(name="Bash", input={"command": command}, response=output)
    (item,) = interactions_from(tool_event(call), max_input=300, max_response=500)
    assert len(item.tool_input) <= 300
    assert len(item.tool_response) <= 500
    assert item.tool_input.startswith('{"command":"AAA')
    assert item.tool_input.endswith('BBB"}')
    assert item.tool_response.startswith("start\n")
    assert item.tool_response.endswith("Traceback: the error")


# -- failed calls ------------------------------------------------------------------------


def failed(error: str | None, response: object = None, *, interrupted: bool = False) -> ToolCall:
    return ToolCall(
        name="Bash",
        input={"command": "pytest"},
        response=response,
        failed=True,
        error=error,
        interrupted=interrupted,
    )


def test_a_failed_call_is_queued_with_its_error() -> None:
    (item,) = interactions_from(tool_event(failed("Exit code 1\n1 failed, 3 passed")))
    assert item.failed
    assert item.tool_response == "error: Exit code 1\n1 failed, 3 passed"


def test_output_a_failed_call_still_gave_follows_its_error() -> None:
    call = failed("permission denied", {"stdout": "wrote 3 of 5 files", "interrupted": False})
    (item,) = interactions_from(tool_event(call))
    assert item.tool_response == "error: permission denied\nwrote 3 of 5 files"


def test_a_response_that_repeats_the_error_is_not_shown_twice() -> None:
    (item,) = interactions_from(tool_event(failed("no such file", " no such file\n")))
    assert item.tool_response == "error: no such file"


def test_an_interrupted_call_says_so() -> None:
    call = failed("[Request interrupted by user for tool use]", interrupted=True)
    (item,) = interactions_from(tool_event(call))
    assert item.tool_response == (
        "interrupted by the user: [Request interrupted by user for tool use]"
    )
    (bare,) = interactions_from(tool_event(failed(None, interrupted=True)))
    assert bare.tool_response == "interrupted by the user"


def test_a_failed_call_without_a_message_keeps_its_response_alone() -> None:
    # Cursor's plugin puts what it knows of a failure in the response.
    (item,) = interactions_from(tool_event(failed(None, {"error": "exit status 2"})))
    assert (item.failed, item.tool_response) == (True, "exit status 2")


def test_a_secret_in_an_error_is_redacted() -> None:
    (item,) = interactions_from(tool_event(failed(f"auth failed for token {GITHUB_TOKEN}")))
    assert GITHUB_TOKEN not in item.tool_response
    assert item.tool_response.startswith("error: auth failed for token [REDACTED:")


def test_a_long_error_keeps_its_head_and_tail_within_the_limit() -> None:
    error = "Exit code 2\n" + "warning: deprecated\n" * 2000 + "E   KeyError: 'ledger_account'"
    (item,) = interactions_from(tool_event(failed(error)), max_response=400)
    assert len(item.tool_response) <= 400
    assert item.tool_response.startswith("error: Exit code 2\n")
    assert item.tool_response.endswith("KeyError: 'ledger_account'")
    assert cut_count(item.tool_response) > 30_000


# -- truncate --------------------------------------------------------------------------


def test_short_text_is_untouched() -> None:
    assert truncate("hello", 5) == "hello"


@pytest.mark.parametrize("length", [201, 999, 123_456])
@pytest.mark.parametrize("limit", [40, 50, 64, 200])
def test_truncate_fits_and_counts_what_it_cut(length: int, limit: int) -> None:
    text = "".join(itertools.islice(itertools.cycle("abcdefghij"), length))
    short = truncate(text, limit)
    assert len(short) <= limit
    head, _, tail = _CUT.split(short)
    head, tail = head.removesuffix("\n"), tail.removeprefix("\n")
    assert head
    assert text.startswith(head)
    assert text.endswith(tail)
    assert cut_count(short) == length - len(head) - len(tail)


def test_truncate_below_the_marker_size_keeps_the_head() -> None:
    assert truncate("0123456789" * 10, 8) == "01234567"
    assert truncate("anything", 0) == ""


def test_truncate_adds_what_the_caller_already_hid() -> None:
    short = truncate("z" * 100, 60, hidden=1000)
    assert len(short) <= 60
    assert cut_count(short) == 1000 + 100 - short.count("z")
    # Even a text that fits says something was cut when something was.
    assert cut_count(truncate("short", 100, hidden=7)) == 7


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ({"stdout": "1 failed", "stderr": "", "interrupted": False, "isImage": False}, "1 failed"),
        ({"stdout": "out", "stderr": "warning: x"}, "out\nwarning: x"),
        ({"type": "text", "file": {"filePath": "/a.md", "content": "# A\n"}}, "# A\n"),
        (
            {"mode": "files", "filenames": ["a.py"], "truncated": False},
            {"mode": "files", "filenames": ["a.py"]},
        ),
        ("plain text", "plain text"),
        (["a", "b"], ["a", "b"]),
    ],
)
def test_salient_keeps_what_the_tool_produced(response: object, expected: object) -> None:
    assert salient(response) == expected
