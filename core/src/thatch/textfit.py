"""Cutting nudge text to a character budget: one-line entries under a header."""

from __future__ import annotations

from collections.abc import Sequence

ELLIPSIS = "…"


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) as one space."""
    return " ".join(text.split())


def cut(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and an ellipsis."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    return text[: limit - len(ELLIPSIS)].rstrip() + ELLIPSIS


def fit_entries(
    header: str,
    entries: Sequence[tuple[str, str]],
    max_chars: int,
    *,
    min_body: int = 12,
    body_cap: int | None = None,
) -> tuple[str, int]:
    """Join ``header`` and one line per ``(prefix, body)`` entry within ``max_chars``.

    Each body is cut (with an ellipsis) to its fair share of what is left, so
    short entries leave room for long ones. Entries come best first: when
    they cannot all show ``min_body`` characters of their body, the last ones
    are left out. ``body_cap`` bounds every body (for short forms). Returns
    the text and how many entries it shows, the first ones; ``("", 0)`` when
    not even one fits.
    """
    # Fewer entries each get a larger share: find the most that all show.
    for count in range(len(entries), 0, -1):
        lines = _place(header, entries[:count], max_chars, min_body, body_cap)
        if lines is not None:
            return "\n".join([header, *lines]), count
    return "", 0


def _place(
    header: str,
    entries: Sequence[tuple[str, str]],
    max_chars: int,
    min_body: int,
    body_cap: int | None,
) -> list[str] | None:
    remaining = max_chars - len(header)
    lines: list[str] = []
    for index, (prefix, body) in enumerate(entries):
        # This entry's fair share of what is left; every line also needs a newline.
        share = remaining // (len(entries) - index) - 1
        room = share - len(prefix)
        if body_cap is not None:
            room = min(room, body_cap)
        if room < min(min_body, len(body)):
            return None
        line = prefix + cut(body, room)
        lines.append(line)
        remaining -= len(line) + 1
    return lines


def take_lines(header: str, lines: Sequence[str], max_chars: int) -> tuple[str, int]:
    """``header`` and the first ``lines`` that fit ``max_chars`` whole, one per line.

    Returns the text and how many lines it holds; ``("", 0)`` when not even
    the first line fits.
    """
    used = len(header)
    count = 0
    for line in lines:
        if used + 1 + len(line) > max_chars:
            break
        used += 1 + len(line)
        count += 1
    if not count:
        return "", 0
    return "\n".join([header, *lines[:count]]), count
