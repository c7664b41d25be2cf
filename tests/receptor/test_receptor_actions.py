"""Tool calls → actions, from each harness's recorded payloads through its own parser."""

from __future__ import annotations

import pytest
from recorded import recorded
from thatch.plugin import Event, ToolCall
from thatch_claude.events import parse_event as claude_event
from thatch_cursor.payloads import parse_event as cursor_event
from thatch_opencode.events import parse_event as opencode_event
from thatch_receptor import actions as actions_module
from thatch_receptor.actions import Action, action_of, actions_of, shell_kind, tool_kind


def only(event: Event) -> Action:
    (action,) = actions_of(event)
    return action


def test_a_claude_failure_gives_the_exit_code_and_the_telling_line() -> None:
    action = only(claude_event("PostToolUseFailure", recorded("claude", "post_tool_use_failure")))
    assert action.kind == "run"
    assert action.failed
    assert action.exit_code == 1
    assert action.error is not None
    assert action.error.startswith("FAILED tests/payments/test_gift_cards.py::test_partial_refund")
    assert action.paths == ("tests/payments/test_gift_cards.py",)
    assert action.text.startswith(
        "bash: uv run pytest -q tests/payments/test_gift_cards.py -> exit 1: FAILED"
    )


def test_a_claude_batch_entry_that_failed_is_read_from_its_exit_code() -> None:
    """The batch gives the failed call's error as its response, with no flag saying it failed."""
    event = claude_event("PostToolBatch", recorded("claude", "post_tool_batch_with_failure"))
    shell, file_read = actions_of(event)
    assert (shell.kind, shell.failed, shell.exit_code) == ("run", True, 1)
    assert (file_read.kind, file_read.failed) == ("read", False)
    assert file_read.text == "read /home/dev/shop/src/payments/gift_cards.py"


def test_a_claude_edit_names_its_file() -> None:
    action = only(claude_event("PostToolUse", recorded("claude", "post_tool_use")))
    assert action.kind == "edit"
    assert action.paths == ("/home/dev/shop/src/orders/refund.py",)
    assert not action.failed


def test_a_cursor_shell_call_gives_its_exit_code_from_the_output() -> None:
    action = only(cursor_event("postToolUse", recorded("cursor", "post_tool_use")))
    assert (action.kind, action.failed, action.exit_code) == ("run", True, 1)
    assert action.text == (
        "shell: uv run pytest -q tests/payments -> exit 1: FAILED tests/payments/test_refund.py"
        "::test_partial_refund - AssertionError: refunds must go through the ledger service"
    )


def test_a_cursor_failure_gives_its_error_message() -> None:
    action = only(cursor_event("postToolUseFailure", recorded("cursor", "post_tool_use_failure")))
    assert (action.kind, action.failed) == ("read", True)
    assert action.error == "File not found: /home/dev/shop/docs/REFUNDS.md"
    assert action.paths == ("/home/dev/shop/docs/REFUNDS.md",)


def test_an_opencode_shell_call_that_says_no_code_passed() -> None:
    action = only(opencode_event("tool.execute.after", recorded("opencode", "tool_execute_after")))
    assert (action.kind, action.failed, action.exit_code) == ("run", False, 0)
    assert action.text == "bash: echo hello from bash -> ok"


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (
            ToolCall("Grep", {"pattern": "token refresh", "path": "auth/"}, {"numFiles": 0}),
            'grep "token refresh" in auth/ -> 0 files',
        ),
        (
            ToolCall("grep", {"pattern": "token", "path": "auth/"}, "Found 3 matches\n..."),
            'grep "token" in auth/ -> 3 files',
        ),
        (ToolCall("glob", {"pattern": "**/*.py"}, "No files found"), 'glob "**/*.py" -> 0 files'),
        (
            ToolCall(
                "Bash",
                {"command": "grep -rn 'token refresh' auth/"},
                None,
                failed=True,
                error="Exit code 1",
            ),
            "bash: grep -rn 'token refresh' auth/ -> 0 files",
        ),
        (
            ToolCall(
                "mcp__thatch__memory_recall", {"query": "refund"}, [{"type": "text", "text": "[]"}]
            ),
            'memory_recall "refund" -> 0 results',
        ),
    ],
)
def test_searches_give_their_query_and_result_count(call: ToolCall, text: str) -> None:
    action = action_of(call)
    assert action.kind in ("search", "memory_read")
    assert not action.failed
    assert action.text == text


def test_a_failing_run_names_the_error_line() -> None:
    call = ToolCall(
        "Bash",
        {"command": "pytest tests/test_auth.py"},
        failed=True,
        error="Exit code 1\ncollected 3 items\nE   AssertionError: token expired\n1 failed",
    )
    assert (
        action_of(call).text
        == "bash: pytest tests/test_auth.py -> exit 1: E AssertionError: token expired"
    )


def test_a_recall_counts_only_relevant_matches() -> None:
    hits = [{"label": "a", "relevant": True}, {"label": "b", "relevant": False}]
    assert action_of(ToolCall("memory_recall", {"query": "x"}, hits)).result_count == 1


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("Bash", "run"),
        ("Shell", "run"),
        ("Task", "delegation"),
        ("mcp__thatch__memory_remember", "memory_write"),
        ("thatch_memory_recall", "memory_read"),
        ("MCP:memory_show", "memory_read"),
        ("MultiEdit", "edit"),
        ("apply_patch", "edit"),
        ("TodoWrite", "other"),
    ],
)
def test_tools_are_known_by_name_whatever_the_harness(name: str, kind: str) -> None:
    assert tool_kind(name) == kind


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("grep -rn token src/", "search"),
        ("cat src/auth.py", "read"),
        ("sed -n 1,20p src/auth.py", "read"),
        ("sed -i s/a/b/ src/auth.py", "edit"),
        ("cat > src/auth.py <<EOF", "edit"),
        ("cat <<'EOF' > src/auth.py\nx = 1\nEOF", "edit"),
        ("cat <<'EOF'\nx > 1\nEOF", "edit"),
        ("cat src/a.py|head", "read"),
        ("tee src/auth.py", "edit"),
        ("  /usr/bin/sed -n 5p src/a.py  ", "read"),
        ("sed s/a/b/ src/auth.py", "run"),
        ("git grep token", "search"),
        ("python -m pytest", "run"),
    ],
)
def test_shell_commands_are_read_by_their_program(command: str, kind: str) -> None:
    assert shell_kind(command) == kind


def test_a_returncode_in_the_output_is_the_exit_code() -> None:
    """A bash-only agent's observation (``<returncode>N</returncode><output>...``)."""
    output = "<returncode>2</returncode>\n<output>\nE   ImportError: no module named foo\n</output>"
    action = action_of(ToolCall("bash", {"command": "python -m pytest"}, output))
    assert (action.failed, action.exit_code) == (True, 2)
    assert action.error == "E ImportError: no module named foo"
    found = "<returncode>0</returncode>\n<output>\na.py:1:x\nb.py:2:x\n</output>"
    assert action_of(ToolCall("bash", {"command": "grep -rn x ."}, found)).result_count == 2


def test_a_long_command_is_cut_in_its_text() -> None:
    """A heredoc's body is not split word by word, and the text is the same as if it were."""
    body = "\n".join(f"line {i}   with   words" for i in range(500))
    action = action_of(ToolCall("bash", {"command": f"cat <<'EOF' > notes.txt\n{body}\nEOF"}))
    head = " ".join(f"cat <<'EOF' > notes.txt {body}".split())
    assert action.text == f"bash: {head[:119]}… -> ok"
    short = action_of(ToolCall("bash", {"command": "ls   -la \n src"}))
    assert short.text == "bash: ls -la src -> ok"


def test_result_lines_skip_exit_lines_only_when_there_are_some() -> None:
    plain = "a.py:1:x\n\n   \nb.py:2:x\n"
    assert action_of(ToolCall("bash", {"command": "grep -rn x ."}, plain)).result_count == 2
    tagged = "Exit code 0\na.py:1:x\n</output>\n"
    assert action_of(ToolCall("Grep", {"pattern": "x"}, tagged)).result_count == 1


@pytest.mark.parametrize(
    ("error", "line"),
    [
        ("ok\nNo such file: a.py\nTraceback (most recent call last)", "No such file: a.py"),
        ("collected 3\nFAILED test_a.py - Error\nerror: x", "FAILED test_a.py - Error"),
        ("Exception here\nError there", "Exception here"),
        ("all went\nas planned", "as planned"),
        ("Erro\nnot foun\nmodule not found", "module not found"),
    ],
)
def test_the_telling_line_is_the_first_naming_an_error(error: str, line: str) -> None:
    action = action_of(ToolCall(name="Bash", input={"command": "pytest"}, failed=True, error=error))
    assert action.error == line


@pytest.mark.parametrize(
    "line",
    [
        'grep -rn "token refresh" src/auth.py',
        "sed -i 's/a/b/' x.py 'y z'.txt",
        'echo ""empty"" a"b"c',
        "unclosed \"quote a/b.py and 'single' c.py",
        "a'b\"c'd\"e f.py",
        "'' \"\" ' \"",
        "tab\tsep\x1cunit 'x\ty' z.py",
    ],
)
def test_quoted_words_are_the_shell_word_pattern_s(line: str) -> None:
    # The finds stand for the pattern: the same words, in order, quotes off.
    found = [w[1:-1] if w[0] in "\"'" else w for w in actions_module._SHELL_WORD.findall(line)]
    assert actions_module._quoted_words(line) == found


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("python3 reproduce_issue.py", ("reproduce_issue.py",)),
        ("ls -la", ()),
        ('grep -n "def f" src/a.py "b/c d.py"', ("src/a.py",)),
        ("cat café/é.py docs/x.md", ("café/é.py", "docs/x.md")),
        ("cd /testbed && python -m pytest tests/unit -x", ("/testbed", "tests/unit")),
    ],
)
def test_command_paths_are_the_path_like_words(command: str, paths: tuple[str, ...]) -> None:
    assert actions_module._command_paths(command) == paths
