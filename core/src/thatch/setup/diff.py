"""Unified diffs of planned edits, for ``thatch setup --dry-run``."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from thatch.setup.planner import FileEdit

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_NO_NEWLINE = "\\ No newline at end of file\n"


def diff(edits: Iterable[FileEdit]) -> str:
    """A unified diff of every edit that changes something ("" when none does).

    A new file is shown against ``/dev/null``, a removed one the other way
    round, and a permission change as an ``old mode`` / ``new mode`` pair.
    """
    parts: list[str] = []
    for edit in edits:
        if not edit.changed:
            continue
        name = str(edit.path)
        if edit.new is not None and edit.old is not None and edit.mode not in (None, edit.old_mode):
            parts.append(f"mode {name}\nold mode {edit.old_mode:o}\nnew mode {edit.mode:o}\n")
        if edit.new == edit.old:
            continue
        lines = difflib.unified_diff(
            _lines(edit.old),
            _lines(edit.new),
            fromfile="/dev/null" if edit.old is None else name,
            tofile="/dev/null" if edit.new is None else name,
        )
        parts.append("".join(_mark_last_lines(lines)))
    text = "".join(parts)
    # Bytes that are not UTF-8 were kept as surrogates; show them as replacement characters.
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _lines(text: str | None) -> list[str]:
    """Lines split on LF only, so CR and other separators show as they are."""
    return _LINE.findall(text) if text else []


def _mark_last_lines(lines: Iterable[str]) -> Iterable[str]:
    """Diff lines, with a marker after any line that has no line break."""
    for line in lines:
        if line.endswith("\n"):
            yield line
        else:
            yield line + "\n" + _NO_NEWLINE
