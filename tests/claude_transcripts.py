"""Claude Code transcripts for tests, in the shape of ``tests/data/claude/transcripts``.

A transcript is a list of messages: ``assistant(text)`` for the agent's own
text, ``notification(text)`` for a background sub-agent's result handed back
as a ``<task-notification>`` user line; :func:`write_transcript` writes them
as Claude Code does, one JSON object a line, each line naming the session.
:func:`messages_of` turns the prediction-log scenarios' ``(source, text)``
pairs (``tests/predlog_scenarios.py``) into such messages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The session the lines name unless told otherwise.
SESSION = "3f1c2a9e-7b4d-4c1e-9a55-0d2f6e8b1c47"


def assistant(text: str) -> dict[str, Any]:
    """An assistant message of one text block."""
    return {"type": "assistant", "message": {"role": "assistant", "content": [_text(text)]}}


def notification(result: str) -> dict[str, Any]:
    """A sub-agent's result as Claude Code hands it back: a ``<task-notification>`` user line."""
    return user_text(
        "<task-notification>\n<task-id>b7e2</task-id>\n<status>completed</status>\n"
        f"<summary>Agent completed</summary>\n<result>{result}</result>\n</task-notification>"
    )


def user_text(text: str) -> dict[str, Any]:
    """A user line of one text block (how a task-notification arrives)."""
    return {"type": "user", "message": {"role": "user", "content": [_text(text)]}}


def messages_of(candidates: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """``(source, text)`` pairs as transcript messages: a task-notification's text is whole."""
    return [
        assistant(text) if source == "assistant" else user_text(text) for source, text in candidates
    ]


def prompt(text: str) -> dict[str, Any]:
    """What the user typed."""
    return {"type": "user", "message": {"role": "user", "content": text}}


def transcript_lines(messages: Sequence[dict[str, Any]], session: str = SESSION) -> str:
    """``messages`` as transcript text, numbered as Claude Code does (``uuid``, ``sessionId``)."""
    lines = []
    for number, message in enumerate(messages, start=1):
        line = {"sessionId": session, "uuid": f"line-{number}", **message}
        if line["type"] == "assistant":
            line["message"] = {**line["message"], "id": f"msg_{number:04d}"}
        lines.append(json.dumps(line) + "\n")
    return "".join(lines)


def write_transcript(
    path: Path, messages: Sequence[dict[str, Any]], session: str = SESSION
) -> Path:
    """Write ``messages`` to ``path`` as a Claude Code transcript; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(transcript_lines(messages, session))
    return path


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}
