"""Claude Code's JSONL transcripts read into the texts that may state Predictions.

A transcript (``~/.claude/projects/<folder>/<session>.jsonl``) holds one JSON
object a line: ``type`` (``user``, ``assistant``, ``system``...),
``sessionId``, ``message: {role, content}``; content is a string or a list of
blocks (``text``, ``thinking``, ``tool_use``, ``tool_result``). Two kinds of
line become :class:`~thatch.plugin.Candidate` texts, in transcript order:

- an assistant message: its text blocks joined in order (thinking and tool
  calls are not shown to the user). Claude Code writes a message's blocks on
  consecutive lines sharing ``message.id``; they are one message, numbered by
  its first line.
- a background sub-agent's result: a user line whose text begins
  ``<task-notification>``; the text inside its ``<result>`` tags when it has
  them, else the whole notification.

Lines a sub-agent wrote into the session's file (``isSidechain``) are left
out: what the session was shown of them is the task-notification. The format
is internal to Claude Code and changes between versions, so other lines and
unknown shapes are skipped; only a line that is not a JSON object is an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
from thatch.plugin import Candidate, InvalidInputError
from thatch.plugin.prediction_log import Source

#: How a background result reaches the session: a user text beginning with it.
NOTIFICATION_MARK = "<task-notification>"
_RESULT = re.compile(r"<result>(.*?)</result>", re.S)


def read_transcript(path: Path) -> list[Candidate]:
    """The assistant texts and task-notification results of the transcript at ``path``.

    Read whole before anything is returned, so a bad line fails the file.

    :raises InvalidInputError: the file is missing or unreadable, or a line is
        not a JSON object (the message names the path and the line).
    """
    messages: list[_Message] = []
    for number, entry in _entries(path):
        message = entry.get("message")
        if entry.get("isSidechain") is True or not isinstance(message, Mapping):
            continue
        if entry.get("type") == "assistant":
            texts = _texts(message.get("content"))
            key = message.get("id")
            last = messages[-1] if messages else None
            if last and last.source == "assistant" and key is not None and last.key == key:
                last.texts.extend(texts)  # another block of the message just read
            else:
                messages.append(_Message("assistant", number, texts, key))
        elif entry.get("type") == "user":
            result = notification_result(message.get("content"))
            if result is not None:
                messages.append(_Message("task-notification", number, [result]))
    return [
        Candidate("\n\n".join(message.texts), message.source, message.line)
        for message in messages
        if message.texts
    ]


def transcript_session(path: Path) -> str | None:
    """The session id the transcript's lines carry (``sessionId``), or None.

    :raises InvalidInputError: as :func:`read_transcript`.
    """
    for _number, entry in _entries(path):
        session = entry.get("sessionId")
        if isinstance(session, str) and session:
            return session
    return None


def notification_result(content: Any) -> str | None:
    """A sub-agent's result when ``content`` is a task-notification, else None.

    The text inside ``<result>`` when present (the sub-agent's own words),
    else the whole notification.
    """
    text = "\n".join(_texts(content))
    if not text.lstrip().startswith(NOTIFICATION_MARK):
        return None
    found = _RESULT.search(text)
    return found.group(1).strip() if found else text


@attrs.define
class _Message:
    """One message of the transcript as it is read: its blocks' texts so far."""

    source: Source
    line: int
    texts: list[str]
    #: ``message.id``: the lines of one assistant message share it.
    key: object = None


def _entries(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """Each line's object with its number (1 = the first); blank lines skipped."""
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        raise InvalidInputError(
            f"{path}: missing file; name a Claude Code transcript "
            "(~/.claude/projects/<folder>/<session>.jsonl)"
        ) from None
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (UnicodeDecodeError, ValueError):
            raise InvalidInputError(
                f"{path}:{number}: not JSON; a Claude Code transcript has one JSON object a line"
            ) from None
        if not isinstance(entry, Mapping):
            raise InvalidInputError(
                f"{path}:{number}: not a JSON object; a Claude Code transcript has one "
                "JSON object a line"
            )
        yield number, entry


def _texts(content: Any) -> list[str]:
    """The text of ``content``: a string, or its ``text`` blocks in order (others skipped)."""
    if isinstance(content, str):
        return [content] if content.strip() else []
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and block["text"].strip()
    ]
