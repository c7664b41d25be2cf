"""Blocks of text between marker lines in Markdown files (CLAUDE.md, AGENTS.md).

A block looks like::

    <!-- thatch:begin NAME -->
    ...text...
    <!-- thatch:end NAME -->

A new block goes at the end of the file after a blank line; an existing one
is replaced in place. Removing a block also removes the separator that was
added before it, so the file reads as it did before.
"""

from __future__ import annotations

from thatch.errors import InvalidInputError


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
    start: int | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if start is None and stripped == begin:
            start = pos
        elif start is not None and stripped == end:
            return start, pos + len(line)
        pos += len(line)
    if start is not None:
        raise InvalidInputError(
            f"{source} has the line '{begin}' but no '{end}' after it; add the end line "
            "where thatch's text stops (or delete the begin line), then run thatch setup again"
        )
    return None


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
