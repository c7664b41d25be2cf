"""mini-swe-agent trajectories as core events, and the event JSONL format."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.events import Event, ToolCall
from thatch_receptor.trajectories import (
    ends_in_grep,
    read_events,
    read_trajectories,
    read_trajectory,
    step_call,
    write_events,
)

GIFT_CARDS = "shop/payments/gift_cards.py"
FIXTURE = Path(__file__).parent.parent / "data" / "receptor" / "traj_gift_cards.json"


def _bash(command: str) -> dict[str, str]:
    return {"command": command}


def test_a_trajectory_is_one_event_per_assistant_turn_in_its_own_session() -> None:
    events = read_trajectory(FIXTURE)

    assert len(events) == 6
    assert {event.session_id for event in events} == {"acme__shop-42"}
    assert {(event.kind, event.harness, event.received_at) for event in events} == {
        ("tool_use", "mini-swe-agent", 0.0)
    }
    assert [event.event_id for event in events] == [f"acme__shop-42:{n}" for n in range(6)]
    assert all(len(event.tool_calls) == 1 for event in events)


def test_each_step_becomes_a_call_shaped_like_a_claude_bash_call() -> None:
    calls = [event.tool_calls[0] for event in read_trajectory(FIXTURE)]

    assert calls == [
        ToolCall(
            name="bash",
            input=_bash('grep -rn "def refund" shop/'),
            response={
                "stdout": "shop/payments/gift_cards.py:3:def refund(card, cents):",
                "stderr": "",
            },
            call_id="step-0",
        ),
        # grep's exit 1 says "no match": an answer, not a failure.
        ToolCall(
            name="bash",
            input=_bash("grep -rn ledger_account shop/"),
            response={"stdout": "", "stderr": ""},
            call_id="step-1",
        ),
        ToolCall(
            name="bash",
            input=_bash("python -m pytest -q tests/test_gift_cards.py"),
            call_id="step-2",
            failed=True,
            error="Exit code 1\nFAILED tests/test_gift_cards.py::test_partial_refund"
            " - KeyError: 'ledger_account'",
        ),
        ToolCall(
            name="format_error",
            input={"blocks": 2},
            call_id="step-3",
            failed=True,
            error="Please always provide EXACTLY ONE action in triple backticks, found 2 actions.",
        ),
        ToolCall(
            name="bash",
            input=_bash("python -m pytest tests/"),
            call_id="step-4",
            failed=True,
            error="Timed out\n....",
        ),
        # The submission answers with the diff and no return code.
        ToolCall(
            name="bash",
            input=_bash(
                "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"
            ),
            response={
                "stdout": f"diff --git a/{GIFT_CARDS} b/{GIFT_CARDS}\n",
                "stderr": "",
            },
            call_id="step-5",
        ),
    ]


@pytest.mark.parametrize(
    ("command", "no_match"),
    [
        ("grep -n foo a.py", True),
        ("cd src && grep -rn foo .", True),
        ("pip list | grep httpbin", True),
        ("/usr/bin/egrep x y", True),
        ("git grep -n foo", True),
        ("rg foo", True),
        ("grep -rn foo . | head -5", False),
        ("python run.py", False),
        ("grep foo a.py && python run.py", False),
    ],
)
def test_only_a_trailing_grep_makes_exit_1_no_match(command: str, no_match: bool) -> None:
    assert ends_in_grep(command) is no_match
    call = step_call(f"```bash\n{command}\n```", "<returncode>1</returncode>\n<output>\n</output>")
    assert call.failed is not no_match


def test_grep_exit_2_is_a_failure() -> None:
    call = step_call(
        "```bash\ngrep foo missing.py\n```", "<returncode>2</returncode>\n<output>\nx\n</output>"
    )

    assert call.failed
    assert call.error == "Exit code 2\nx"


def test_a_turn_with_no_bash_block_is_a_format_error() -> None:
    call = step_call("THOUGHT: I am done.", "Please always provide EXACTLY ONE action")

    assert call == ToolCall(
        name="format_error",
        input={"blocks": 0},
        failed=True,
        error="Please always provide EXACTLY ONE action",
    )


def test_a_command_the_run_never_answered_has_no_response() -> None:
    call = step_call("```bash\nls\n```", None)

    assert call == ToolCall(name="bash", input=_bash("ls"))


def test_a_long_output_keeps_its_warning_head_and_tail() -> None:
    answer = (
        "<returncode>0</returncode>\n<warning>\ntoo long\n</warning>"
        "<output_head>\nfirst\n</output_head>\n<output_tail>\nlast\n</output_tail>"
    )
    call = step_call("```bash\ncat big.log\n```", answer)

    assert call.response is not None
    assert call.response["stdout"].startswith("<warning>")
    assert "first" in call.response["stdout"]
    assert "last" in call.response["stdout"]


def test_a_folder_is_read_run_by_run_by_name(tmp_path: Path) -> None:
    shutil.copy(FIXTURE, tmp_path / "b.traj.json")
    unnamed = json.loads(FIXTURE.read_text())
    del unnamed["instance_id"]
    (tmp_path / "a__run-1.traj.json").write_text(json.dumps(unnamed))
    (tmp_path / "notes.txt").write_text("not a run")

    runs = list(read_trajectories(tmp_path))

    assert [run for run, _ in runs] == ["a__run-1", "acme__shop-42"]
    assert all(len(events) == 6 for _, events in runs)
    assert {event.session_id for event in runs[0][1]} == {"a__run-1"}


def test_a_folder_without_trajectories_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"no \*\.traj\.json file"):
        list(read_trajectories(tmp_path))


def test_a_malformed_trajectory_names_the_file_and_field(tmp_path: Path) -> None:
    broken = tmp_path / "x.traj.json"
    broken.write_text(json.dumps({"messages": [{"role": "user"}]}))

    with pytest.raises(
        InvalidInputError, match=r"x\.traj\.json: field 'messages\[0\]\.content' must be"
    ):
        read_trajectory(broken)

    broken.write_text("{not json")
    with pytest.raises(InvalidInputError, match="cannot read it as a mini-swe-agent trajectory"):
        read_trajectory(broken)


def test_events_survive_the_jsonl_round_trip() -> None:
    events = [
        *read_trajectory(FIXTURE),
        Event(
            kind="prompt",
            harness="claude",
            session_id="s1",
            hook_event="UserPromptSubmit",
            cwd="/home/dev/shop",
            prompt="fix the refunds",
            received_at=1764600000.5,
            identity="prompt:s1:g1",
            parent_session_id="s0",
            synthetic=True,
        ),
        Event(
            kind="tool_use",
            harness="claude",
            session_id="s1",
            tool_calls=(
                ToolCall(name="Bash", input=_bash("ls"), failed=True, interrupted=True),
                ToolCall(name="Read", input={"file_path": "a.py"}, response="1\tx"),
            ),
        ),
    ]
    stream = io.StringIO()

    assert write_events(events, stream) == len(events)
    lines = stream.getvalue().splitlines()
    assert len(lines) == len(events)
    assert list(read_events(["", *lines, "  "])) == events


def test_an_event_line_may_leave_out_the_defaults() -> None:
    line = json.dumps(
        {
            "kind": "tool_use",
            "harness": "mini-swe-agent",
            "session_id": "r1",
            "tool_calls": [{"name": "bash", "input": {"command": "ls"}}],
        }
    )

    assert list(read_events([line])) == [
        Event(
            kind="tool_use",
            harness="mini-swe-agent",
            session_id="r1",
            tool_calls=(ToolCall(name="bash", input={"command": "ls"}),),
        )
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{oops", r"runs\.jsonl line 1: not JSON"),
        ("[]", r"line 1: an event is a JSON object, got a list"),
        ('{"kind": "tool", "harness": "h", "session_id": "s"}', "field 'kind' must be one of"),
        ('{"kind": "stop", "session_id": "s"}', "field 'harness' must be a non-empty string"),
        (
            '{"kind": "stop", "harness": "h", "session_id": "s", "received_at": "now"}',
            "field 'received_at' must be a number",
        ),
        (
            '{"kind": "stop", "harness": "h", "session_id": "s", "received_at": NaN}',
            "field 'received_at' must be a finite number of epoch seconds, got NaN",
        ),
        (
            '{"kind": "stop", "harness": "h", "session_id": "s", "received_at": 1e999}',
            "field 'received_at' must be a finite number .* got an infinite or too large number",
        ),
        (
            '{"kind": "stop", "harness": "h", "session_id": "s", "received_at": 1'
            + "0" * 400
            + "}",
            "field 'received_at' must be a finite number .* got an infinite or too large number",
        ),
        (
            '{"kind": "stop", "harness": "h", "session_id": "s", "received_at": 1'
            + "0" * 5000
            + "}",
            r"line 1: not JSON \(a number with too many digits\)",
        ),
        (
            '{"kind": "tool_use", "harness": "h", "session_id": "s", "tool_calls": [{}]}',
            r"field 'tool_calls\[0\]\.name'",
        ),
        (
            '{"kind": "tool_use", "harness": "h", "session_id": "s",'
            ' "tool_calls": [{"name": "x", "error": "boom"}]}',
            r"field 'tool_calls\[0\]' has 'error' or 'interrupted' but not \"failed\": true",
        ),
    ],
)
def test_a_bad_event_line_names_the_line_and_field(line: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        list(read_events([line], source="runs.jsonl"))
