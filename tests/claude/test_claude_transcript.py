"""Claude Code transcripts → texts that may state Predictions (``read_transcript``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import thatch_claude.plugin
from claude_transcripts import SESSION, assistant, notification, prompt, write_transcript
from recorded import DATA, recorded
from thatch.plugin import Candidate, InvalidInputError
from thatch.plugin.harness import Harness
from thatch.testing import plugins_with
from thatch_claude.transcript import notification_result, read_transcript, transcript_session

RECORDED = DATA / "claude" / "transcripts" / "session.jsonl"


@pytest.fixture
def claude() -> Harness:
    harness = plugins_with(thatch_claude.plugin).harness("claude")
    assert harness is not None
    return harness


def test_a_recorded_session_gives_the_agent_s_texts_and_the_sub_agent_s_result(
    claude: Harness,
) -> None:
    candidates = list(claude.read_transcript(RECORDED) or [])
    assert [(c.source, c.line) for c in candidates] == [
        # One message written as three lines (thinking, text, tool_use): its first line.
        ("assistant", 3),
        ("assistant", 8),
        ("task-notification", 12),
        ("assistant", 13),
    ]
    first, prediction, result, last = (c.text for c in candidates)
    assert first == "Let me look at the refund code first."  # no thinking, no tool call
    assert prediction.startswith("I'll route refunds")
    assert "confidence: 70" in prediction
    assert result.startswith("The ledger client lives in src/ledger/client.py.")
    assert result.endswith("```")
    assert "<result>" not in result
    assert "<status>" not in result
    assert last == "The sub-agent found it.\n\nI will wire it up next."  # blocks joined in order


def test_prompts_tool_results_and_a_sub_agent_s_own_lines_are_not_read() -> None:
    texts = " ".join(c.text for c in read_transcript(RECORDED))
    assert "Add partial refunds" not in texts  # the user's prompt
    assert "def refund(order)" not in texts  # a tool result, though it holds a block
    assert "(sub-agent)" not in texts  # isSidechain: the session was shown the result
    assert "confidence: 99" not in texts  # thinking


def test_the_session_is_the_one_its_lines_name(tmp_path: Path) -> None:
    assert transcript_session(RECORDED) == "3f1c2a9e-7b4d-4c1e-9a55-0d2f6e8b1c47"
    path = write_transcript(tmp_path / "other-name.jsonl", [assistant("hi")], session="s-7")
    assert transcript_session(path) == "s-7"
    nameless = tmp_path / "nameless.jsonl"
    nameless.write_text(json.dumps({"type": "summary", "summary": "x"}) + "\n")
    assert transcript_session(nameless) is None


def test_a_notification_without_result_tags_is_read_whole() -> None:
    text = "<task-notification><task-id>7</task-id><status>failed</status></task-notification>"
    assert notification_result(text) == text
    assert notification_result([{"type": "text", "text": "  " + text}]) == "  " + text
    assert notification_result("Please look at <task-notification>") is None


def test_texts_keep_transcript_order_and_only_consecutive_lines_of_one_message_join(
    tmp_path: Path,
) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        [prompt("go"), notification("from the sub-agent"), assistant("one"), assistant("two")],
    )
    assert read_transcript(path) == [
        Candidate("from the sub-agent", "task-notification", 2),
        Candidate("one", "assistant", 3),
        Candidate("two", "assistant", 4),  # another message id: another message
    ]


def test_assistant_content_may_be_a_plain_string(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = {"type": "assistant", "message": {"role": "assistant", "content": "plain text"}}
    path.write_text(json.dumps(line) + "\n\n")
    assert read_transcript(path) == [Candidate("plain text", "assistant", 1)]


def test_a_line_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", [assistant("fine")])
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(InvalidInputError, match=rf"^{path}:2: not JSON"):
        read_transcript(path)


@pytest.mark.parametrize("line", ['"a string"', "[1, 2]", "42"])
def test_a_line_that_is_not_an_object_is_named(tmp_path: Path, line: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InvalidInputError, match=rf"^{path}:1: not a JSON object"):
        read_transcript(path)


def test_text_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"type": "user"}\n{"type": "assistant", "x": "\xff"}\n')
    with pytest.raises(InvalidInputError, match=rf"^{path}:2: not JSON"):
        read_transcript(path)


def test_a_missing_file_is_named(tmp_path: Path, claude: Harness) -> None:
    missing = tmp_path / "gone.jsonl"
    with pytest.raises(InvalidInputError, match=rf"^{missing}: missing file"):
        claude.read_transcript(missing)


def test_a_stop_event_names_the_transcript_to_read(claude: Harness) -> None:
    for hook_event, name in [("Stop", "stop"), ("SubagentStop", "subagent_stop")]:
        payload = recorded("claude", name)
        event = claude.parse_event(hook_event, payload)
        assert event.transcript_path == payload["transcript_path"]
        assert event.transcript_path.endswith(f"{SESSION}.jsonl")
    without = claude.parse_event("Stop", recorded("claude", "stop", transcript_path=None))
    assert without.transcript_path is None


def test_a_malformed_transcript_path_is_named(claude: Harness) -> None:
    with pytest.raises(InvalidInputError, match="transcript_path"):
        claude.parse_event("Stop", recorded("claude", "stop", transcript_path=7))


@pytest.mark.parametrize(
    ("hook_event", "name"), [("Stop", "stop"), ("PostToolUse", "post_tool_use")]
)
def test_cursor_s_transcript_is_never_read_as_claude_s(
    claude: Harness, hook_event: str, name: str
) -> None:
    # Cursor runs Claude Code's hooks too; its transcript is in Cursor's own format.
    payload = recorded("claude/cursor", name)
    assert payload["transcript_path"]
    assert claude.parse_event(hook_event, payload).transcript_path is None
