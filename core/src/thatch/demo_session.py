"""The session ``thatch demo`` plays: Claude Code hook payloads and what the agent saves.

The payloads have the fields Claude Code 2.1 sends (see tests/data/claude);
the session works on a small shop's refund code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SESSION = "5d2c7a10-demo-4f1e-9b2a-6c3e8d4f0a11"
TRANSCRIPT = f"/home/dev/.claude/projects/-home-dev-shop/{SESSION}.jsonl"

# A fake AWS key, assembled so no scanner mistakes this file for a leak.
_FAKE_KEY = "AKIA" + "Z7Q3" + "EXAMPLE" + "KEY5"

BATCH: dict[str, Any] = {
    "session_id": SESSION,
    "transcript_path": TRANSCRIPT,
    "hook_event_name": "PostToolBatch",
    "tool_calls": [
        {
            "tool_name": "Bash",
            "tool_use_id": "toolu_01DemoBash000000000000001",
            "tool_input": {"command": "uv run pytest -q tests/payments"},
            "tool_response": {
                "stdout": (
                    "FAILED tests/payments/test_refund.py::test_partial_refund - refunds must go "
                    "through the ledger service, not the orders table\n"
                    f"(CI env: AWS_ACCESS_KEY_ID={_FAKE_KEY})\n1 failed, 41 passed in 3.02s"
                ),
                "stderr": "",
                "interrupted": False,
            },
        },
        {
            "tool_name": "Read",
            "tool_use_id": "toolu_01DemoRead000000000000002",
            "tool_input": {"file_path": "docs/CONTRIBUTING.md"},
            "tool_response": {
                "type": "text",
                "file": {
                    "filePath": "docs/CONTRIBUTING.md",
                    "content": "Money amounts are integers in cents everywhere; never floats.\n",
                },
            },
        },
        {
            "tool_name": "Grep",
            "tool_use_id": "toolu_01DemoGrep000000000000003",
            "tool_input": {"pattern": "ledger", "path": "src"},
            "tool_response": {"filenames": ["src/ledger/client.py", "src/orders/refund.py"]},
        },
    ],
}

FIRST_PROMPT = "Fix the failing refund test"
LATER_PROMPT = "How should partial refunds for gift cards be recorded?"
SITUATION_PROMPT = "Add a new payment method for bank transfers"

#: What the agent saves after reading the extraction nudge.
MEMORIES = (
    (
        "refunds-via-ledger",
        "Refunds must go through the ledger service (src/ledger/client.py), never by "
        "editing the orders table.",
    ),
    ("money-in-cents", "Money amounts are integers in cents everywhere; never floats."),
)

#: (situation, preference) the user states.
PREFERENCE = (
    "adding or changing a payment feature",
    "Write the ledger test first, then the code",
)


def session_start_payload(project: Path) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": TRANSCRIPT,
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }


def prompt_payload(prompt: str, project: Path) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": TRANSCRIPT,
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


#: The wall the agent hits at the end: it edits and runs a test that keeps failing.
WALL_FILE = "src/payments/settlement.py"
WALL_COMMAND = "uv run pytest -q tests/payments/test_settlement.py"
WALL_ERROR = (
    "Exit code 1\nFAILED tests/payments/test_settlement.py::test_settles_next_day - TypeError: "
    "can't compare offset-naive and offset-aware datetimes\n1 failed, 8 passed in 0.61s"
)
#: What an earlier session saved about it; the receptor finds it when the wall comes.
WALL_MEMORY = (
    "aware-datetimes",
    "Settlement code compares timezone-aware UTC datetimes: build them with "
    "payments.clock.utc_now(), never datetime.now(); a naive one raises TypeError "
    "(can't compare offset-naive and offset-aware datetimes).",
)
#: How many times the agent edits and runs the test in vain.
WALL_ROUNDS = 3


def edit_payload(project: Path, attempt: int) -> dict[str, Any]:
    """A batch of one Edit, as Claude Code reports a turn's successful calls."""
    path = str(project / WALL_FILE)
    change = {
        "file_path": path,
        "old_string": f"# try {attempt}",
        "new_string": f"# try {attempt + 1}",
    }
    return {
        "session_id": SESSION,
        "transcript_path": TRANSCRIPT,
        "cwd": str(project),
        "hook_event_name": "PostToolBatch",
        "tool_calls": [
            {
                "tool_name": "Edit",
                "tool_use_id": f"toolu_01DemoWallEdit{attempt:010d}",
                "tool_input": change,
                "tool_response": {"filePath": path, "oldString": change["old_string"]},
            }
        ],
    }


def failure_payload(project: Path, attempt: int) -> dict[str, Any]:
    """The test run failing, as Claude Code's PostToolUseFailure reports it."""
    return {
        "session_id": SESSION,
        "transcript_path": TRANSCRIPT,
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_use_id": f"toolu_01DemoWallTest{attempt:010d}",
        "tool_input": {"command": WALL_COMMAND, "description": "Run the settlement tests"},
        "error": WALL_ERROR,
        "is_interrupt": False,
    }
