"""Printing results: JSON for scripts, short aligned text for people.

Stored text may hold terminal escape sequences, so everything printed goes
through :func:`thatch.safetext.visible`: for people a control character
shows as ``\\x1b``; in JSON, which leaves C1 controls raw, as the JSON
escape ``\\u009b``, so the data read back is exact.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from thatch.memory.recall import is_relevant
from thatch.plugin.records import Memory, RecallHit, RememberResult
from thatch.safetext import visible
from thatch.serialize import to_json_data


def print_json(data: Any) -> None:
    """Any thatch record or plain data as indented JSON on stdout."""
    print(visible(json.dumps(to_json_data(data), indent=2, ensure_ascii=False)))


def print_json_line(data: Any) -> None:
    """One compact JSON line, flushed so a reader sees it at once."""
    print(visible(json.dumps(to_json_data(data), ensure_ascii=False)), flush=True)


def emit(json_wanted: bool, value: Any, show: Callable[[Any], None]) -> int:
    """``value`` as JSON when asked, else through ``show``; returns exit status 0."""
    if json_wanted:
        print_json(value)
    else:
        show(value)
    return 0


def note(message: str) -> None:
    """A message for the person at the terminal, on stderr so stdout stays data."""
    print(visible(message), file=sys.stderr)


def say(text: str) -> None:
    """A line of text for people on stdout, its control characters made visible."""
    print(visible(text))


def shorten(text: str, width: int = 80) -> str:
    """One line of at most ``width`` characters, control characters made visible."""
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def print_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> None:
    """Columns aligned on the widest cell."""
    if not rows:
        return
    # Made visible before measuring, so the columns line up as printed.
    table = [[visible(str(cell)) for cell in row] for row in [headers, *rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for row in table:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        print("  ".join(cells).rstrip())


def print_hits(hits: Sequence[RecallHit], recall_threshold: float) -> None:
    """Recall hits for a person: rank, score, store/label, then the content.

    Hits under the calibrated recall threshold are marked as weak matches.
    """
    if not hits:
        note("no memories found")
        return
    for rank, hit in enumerate(hits, 1):
        memory = hit.memory
        weak = "" if is_relevant(hit, recall_threshold) else ", weak match"
        say(
            f"{rank}. {memory.store} / {memory.label}  "
            f"(score {hit.score:.2f}, cosine {hit.cosine:.2f}{weak})"
        )
        say(f"   {shorten(memory.content, 100)}")


def print_memories(memories: Iterable[Memory]) -> None:
    """A table of memories: store, label, branch, the start of the content."""
    rows = [
        (
            m.store,
            m.label + (" (archived)" if m.archived else ""),
            m.branch or "",
            shorten(m.content, 60),
        )
        for m in memories
    ]
    if not rows:
        note("no memories")
    print_table(rows, ("STORE", "LABEL", "BRANCH", "CONTENT"))


def print_memory(memory: Memory) -> None:
    """Every field of one memory."""
    say(f"{memory.store} / {memory.label}" + ("  (archived)" if memory.archived else ""))
    if memory.branch:
        say(f"branch:   {memory.branch}")
    say(f"model:    {memory.model}")
    say(f"created:  {memory.created_at:%Y-%m-%d %H:%M} UTC")
    say(f"updated:  {memory.updated_at:%Y-%m-%d %H:%M} UTC")
    recalled = f"{memory.last_recalled_at:%Y-%m-%d %H:%M} UTC" if memory.last_recalled_at else "-"
    say(f"recalled: {memory.recall_count} times, last {recalled}")
    say("")
    say(memory.content)


def describe_remember(result: RememberResult) -> None:
    """What remember did on stdout, its warnings on stderr (the content is never echoed)."""
    memory = result.memory
    say(f"{result.action} memory '{memory.label}' in {memory.store} ({memory.model})")
    if result.redactions:
        plural = "s" if result.redactions != 1 else ""
        note(f"redacted {result.redactions} secret{plural} before saving")
    for similar in result.similar:
        note(
            f"note: similar to '{similar.label}' in {similar.store} (cosine {similar.cosine:.2f});"
            " review with 'thatch duplicates'"
        )
