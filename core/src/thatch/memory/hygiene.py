"""The hygiene report: memories that are stale, orphaned or duplicated."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from thatch.plugin.errors import InvalidInputError
from thatch.plugin.records import DuplicatePair, HygieneReport, Memory

STALE_DAYS = 90
#: A century: longer spans say nothing more, and dates before year 1 do not exist.
MAX_STALE_DAYS = 36_500


def check_stale_days(days: object) -> int:
    """Return ``days`` if it is a usable staleness span; raise a clear error otherwise."""
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_STALE_DAYS:
        raise InvalidInputError(
            f"stale days {days!r} must be a whole number from 1 to {MAX_STALE_DAYS}; "
            f"e.g. {STALE_DAYS}"
        )
    return days


def is_stale(memory: Memory, now: datetime, days: int = STALE_DAYS) -> bool:
    """Neither updated nor recalled in the last ``days`` days."""
    last_touched = max(memory.updated_at, memory.last_recalled_at or memory.updated_at)
    return now - last_touched >= timedelta(days=days)


def hygiene_report(
    memories: Sequence[Memory],
    duplicates: Sequence[DuplicatePair],
    *,
    now: datetime,
    repo_store: str | None,
    branches: set[str] | None,
    stale_days: int = STALE_DAYS,
) -> HygieneReport:
    """Classify ``memories``.

    A memory is orphaned when it is tied to a branch of the current
    repository (``repo_store``) that ``branches`` no longer holds; branches of
    other repositories cannot be seen from here, so they are never reported.
    """
    check_stale_days(stale_days)
    orphaned = tuple(
        memory
        for memory in memories
        if memory.branch is not None
        and branches is not None
        and memory.store == repo_store
        and memory.branch not in branches
    )
    stale = tuple(memory for memory in memories if is_stale(memory, now, stale_days))
    return HygieneReport(
        stale=stale, orphaned=orphaned, duplicates=tuple(duplicates), stale_days=stale_days
    )
