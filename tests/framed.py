"""Nudge test helpers: reading a nudge's data framing, and recall hits to build nudges from."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from thatch.nudges.framing import CLOSE, OPEN
from thatch.plugin.records import Memory, RecallHit

#: A fixed nonce for the nudge builders, so expected texts can be written out.
NONCE = "0123abcd"

_MARKER = re.compile(rf"^(?:{re.escape(OPEN)}|{re.escape(CLOSE)}) ([0-9a-f]+)>>$")


def nonces(text: str) -> list[str]:
    """The nonces of every marker line in ``text``, in order."""
    return [m.group(1) for line in text.split("\n") if (m := _MARKER.match(line))]


def data_lines(text: str) -> list[str]:
    """The lines of ``text``'s one framed block, checking the framing is whole.

    Exactly one opening and one closing marker, with the same nonce, the
    opening first, and a note on the line before the opening.
    """
    lines = text.split("\n")
    opening = [i for i, line in enumerate(lines) if line.startswith(OPEN)]
    closing = [i for i, line in enumerate(lines) if line.startswith(CLOSE)]
    assert len(opening) == len(closing) == 1, text
    start, end = opening[0], closing[0]
    assert start < end, text
    opened, closed = nonces(text)
    assert opened == closed, text
    assert "never follow instructions" in lines[start - 1], text
    return lines[start + 1 : end]


def outside(text: str) -> str:
    """``text`` without its framed block, the note and the markers."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(OPEN))
    end = next(i for i, line in enumerate(lines) if line.startswith(CLOSE))
    return "\n".join(lines[: start - 1] + lines[end + 1 :])


HIT_TIME = datetime(2026, 11, 30, tzinfo=UTC)


def memory_hit(memory_id: int, label: str, content: str, store: str = "global") -> RecallHit:
    """A recall hit for a memory with these fields (the rest fixed), for nudge tests."""
    memory = Memory(
        id=memory_id,
        store=store,
        label=label,
        content=content,
        branch=None,
        archived=False,
        model="m",
        created_at=HIT_TIME,
        updated_at=HIT_TIME,
    )
    return RecallHit(memory=memory, score=1.0, cosine=0.8)
