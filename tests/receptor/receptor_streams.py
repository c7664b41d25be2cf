"""Scripted event streams for receptor tests: one core event per tool call, a step apart."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import attrs
from thatch.plugin import Event, ToolCall

SESSION = "receptor-session"
#: When a stream starts (epoch seconds), far from 0 so that "no time" stays apart.
START = 1_800_000_000.0


def edit(path: str = "src/auth/token.py") -> ToolCall:
    return ToolCall("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, {})


def read(path: str = "src/auth/token.py") -> ToolCall:
    return ToolCall("Read", {"file_path": path}, "1\timport time\n")


def run(command: str = "pytest tests/test_auth.py", *, error: str | None = None) -> ToolCall:
    """A shell call, passing, or failing with Claude Code's ``Exit code 1`` message."""
    if error is None:
        return ToolCall("Bash", {"command": command}, {"stdout": "3 passed", "stderr": ""})
    return ToolCall("Bash", {"command": command}, None, failed=True, error=f"Exit code 1\n{error}")


def grep(pattern: str, path: str = "src/", *, found: int = 2) -> ToolCall:
    files = [f"{path}file{i}.py" for i in range(found)]
    return ToolCall(
        "Grep", {"pattern": pattern, "path": path}, {"filenames": files, "numFiles": found}
    )


def recall(query: str, *, found: int = 0) -> ToolCall:
    hits = [{"label": f"m{i}", "relevant": True} for i in range(found)]
    return ToolCall("mcp__thatch__memory_recall", {"query": query}, hits)


def delegate(prompt: str = "find where tokens are refreshed") -> ToolCall:
    return ToolCall("Task", {"prompt": prompt, "subagent_type": "explore"}, "done")


@attrs.define
class Stream:
    """Builds events of one session, ``step`` seconds apart (0: events without a time)."""

    session_id: str = SESSION
    step: float = 20.0
    at: float = START
    count: int = 0

    def event(self, *calls: ToolCall, **fields: Any) -> Event:
        self.count += 1
        received_at = self.at if self.step else 0.0
        self.at += self.step
        return Event(
            kind="tool_use",
            harness="claude",
            session_id=self.session_id,
            hook_event="PostToolUse",
            tool_calls=calls,
            event_id=f"{self.session_id}-{self.count}",
            received_at=received_at,
            **fields,
        )

    def events(self, calls: Iterable[ToolCall]) -> Iterator[Event]:
        """One event per call."""
        for call in calls:
            yield self.event(call)


def trial_and_error(cycles: int) -> list[ToolCall]:
    """edit → run (fail) → edit → run (fail) ..."""
    calls: list[ToolCall] = []
    for i in range(cycles):
        calls += [edit(), run(error=f"E   AssertionError: token expired ({i})")]
    return calls


def implementation(cycles: int) -> list[ToolCall]:
    """read → edit → run (pass) ..."""
    calls: list[ToolCall] = []
    for i in range(cycles):
        path = f"src/feature/part{i % 3}.py"
        calls += [read(path), edit(path), run("pytest tests/test_feature.py")]
    return calls
