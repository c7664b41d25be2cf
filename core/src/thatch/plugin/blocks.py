"""Blocks of text between marker lines in Markdown files (CLAUDE.md, AGENTS.md).

A block looks like::

    <!-- thatch:begin NAME -->
    ...text...
    <!-- thatch:end NAME -->

A new block goes at the end of the file after a blank line; an existing one
is replaced in place. Removing a block also removes the separator that was
added before it, so the file reads as it did before.

:func:`close` mends a begin line whose end line was deleted: only the lines
after it that are thatch's own text are taken as the block.

Older thatch setups marked their block differently; :func:`legacy_blocks`
finds those: an HTML comment line naming thatch without a block name
(``<!-- thatch -->``, ``<!-- thatch:start -->``, ``<!-- begin thatch -->``)
up to the next closing comment (``<!-- /thatch -->``, ``<!-- thatch:end -->``,
``<!-- end thatch -->``). An opening comment with no closing one is left
alone: thatch cannot tell where its text stopped.
"""

from __future__ import annotations

import re

from thatch.plugin.errors import InvalidInputError

_LEGACY_BEGIN = re.compile(
    r"<!--\s*(?:begin\s+thatch|thatch(?:\s*[:-]\s*(?:start|begin))?)\s*-->", re.I
)
_LEGACY_END = re.compile(r"<!--\s*(?:/\s*thatch|thatch\s*[:-]\s*end|end\s+thatch)\s*-->", re.I)


def begin_marker(name: str) -> str:
    """The line that opens block ``name``."""
    return f"<!-- thatch:begin {name} -->"


def end_marker(name: str) -> str:
    """The line that closes block ``name``."""
    return f"<!-- thatch:end {name} -->"


def render(name: str, text: str, newline: str = "\n") -> str:
    """The whole block with its markers, ending with a line break."""
    body = text.strip("\r\n").replace("\r\n", "\n").split("\n")
    lines = [begin_marker(name), *body, end_marker(name)]
    return newline.join(lines) + newline


def find(text: str, name: str, source: str) -> tuple[int, int] | None:
    """The span of block ``name`` (from its begin line to after its end line), or None."""
    begin, end = begin_marker(name), end_marker(name)
    start, stop = _span(text, begin, end)
    if start is not None and stop is None:
        raise InvalidInputError(
            f"{source} has the line '{begin}' but no '{end}' after it; add the end line "
            "where thatch's text stops (or delete the begin line), then run thatch setup again"
        )
    return None if start is None or stop is None else (start, stop)


def _span(text: str, begin: str, end: str) -> tuple[int | None, int | None]:
    """Where the first line ``begin`` starts and the next line ``end`` ends (None: absent)."""
    start: int | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if start is None and stripped == begin:
            start = pos
        elif start is not None and stripped == end:
            return start, pos + len(line)
        pos += len(line)
    return start, None


def put(text: str | None, name: str, body: str, source: str) -> tuple[str, str]:
    """``text`` with block ``name`` holding ``body``; also the separator added before it.

    The separator is empty when the block replaced an existing one or starts
    the file; otherwise it is what makes a blank line before the block.
    """
    text = text or ""
    newline = "\r\n" if "\r\n" in text else "\n"
    block = render(name, body, newline)
    span = find(text, name, source)
    if span is not None:
        return text[: span[0]] + block + text[span[1] :], ""
    if not text.strip() or text.endswith(("\n\n", "\n\r\n")):
        separator = ""  # the file is empty or already ends with a blank line
    elif text.endswith("\n"):
        separator = newline
    else:
        separator = newline + newline
    return text + separator + block, separator


def remove(text: str, name: str, separator: str, source: str) -> str:
    """``text`` without block ``name``, and without ``separator`` when the block ended the file."""
    span = find(text, name, source)
    if span is None:
        return text
    start, end = span
    if not text[end:].strip() and separator and text[:start].endswith(separator):
        start -= len(separator)
    return text[:start] + text[end:]


def unclosed(text: str, name: str) -> bool:
    """Whether ``text`` has block ``name``'s begin line and no end line after it."""
    begin, end = begin_marker(name), end_marker(name)
    opened = False
    for line in text.splitlines():
        if not opened and line.strip() == begin:
            opened = True
        elif opened and line.strip() == end:
            return False
    return opened


def close(text: str, name: str, body: str, source: str) -> tuple[str, str]:
    """``text`` with an unclosed block ``name`` made whole again; also what was done.

    The block is the begin line and the lines after it that match ``body``
    line by line from its start; the first line that differs, and all after
    it, are kept as the user's, since nothing marks them as thatch's.
    """
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == begin_marker(name))
    wanted = body.strip("\r\n").replace("\r\n", "\n").split("\n")
    taken = 0
    for line, expected in zip(lines[start + 1 :], wanted, strict=False):
        if line.rstrip("\r\n").rstrip() != expected.rstrip():
            break
        taken += 1
    newline = "\r\n" if "\r\n" in text else "\n"
    after = lines[start + 1 + taken :]
    block = render(name, body, newline)
    if after and after[0].strip():
        block += newline  # a blank line between thatch's block and the user's text
    fixed = "".join(lines[:start]) + block + "".join(after)
    kept = sum(1 for line in after if line.strip())
    what = f"{source}: the thatch block had lost its end line '{end_marker(name)}'; rewrote it"
    if kept:
        what += (
            f" (its begin line and the {taken} lines after it that are thatch's text) and kept the "
            f"{kept} lines after those as they are: nothing marks them as thatch's"
        )
    return fixed, what


def legacy_blocks(text: str) -> list[tuple[str, str]]:
    """The begin and end lines (stripped) of every block an older thatch setup marked."""
    found: list[tuple[str, str]] = []
    begin: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if begin is None and _LEGACY_BEGIN.fullmatch(stripped):
            begin = stripped
        elif begin is not None and _LEGACY_END.fullmatch(stripped):
            found.append((begin, stripped))
            begin = None
    return found


def cut(text: str, begin: str, end: str) -> tuple[str, int | None]:
    """``text`` without the first lines ``begin`` … ``end``, and where they were (None: absent)."""
    start, stop = _span(text, begin, end)
    if start is None or stop is None:
        return text, None
    return text[:start] + text[stop:], start
