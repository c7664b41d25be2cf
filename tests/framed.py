"""Reading the data framing of a nudge in tests: the lines between its markers."""

from __future__ import annotations

import re

from thatch.nudges.framing import CLOSE, OPEN

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
