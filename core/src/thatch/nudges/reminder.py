"""Reminders: the session-start briefing and the one-line save reminder."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Final, Literal

from thatch.instructions.reminders import (
    EXTRACTION_LINE,
    RECALL_LINE,
    SAVE_LINE,
    SAVE_REMINDER,
    SESSION_TITLE,
    named,
)
from thatch.plugin.nudge import Nudge
from thatch.plugin.records import GLOBAL_STORE, HygieneReport

if TYPE_CHECKING:
    from thatch.api import Thatch

SOURCE = "reminder"


def save_reminder(tool_prefix: str = "") -> Nudge:
    """The tier-3 fallback nudge: a one-line reminder to save new knowledge.

    ``tool_prefix``: what the harness's agents know thatch's tools by,
    before the bare name (``Harness.tool_prefix``; "" for the bare names).
    """
    return Nudge(source=SOURCE, text=named(SAVE_REMINDER, tool_prefix), tier=3)


#: ``session_reminder(hygiene=COMPUTE)``: build the hygiene report now.
COMPUTE: Final = "compute"


def session_reminder(
    th: Thatch,
    *,
    now: datetime | None = None,
    hygiene: HygieneReport | Literal["compute"] | None = COMPUTE,
    tool_prefix: str = "",
) -> str:
    """What ``thatch reminder`` prints at session start (under 1,200 characters).

    The project's store, how to recall and what to save, the extraction
    flow, and — only when something needs attention — the hygiene heartbeat.
    ``now`` decides which memories are stale (default: the current time).
    ``hygiene`` is a report made earlier (the daemon keeps one per project,
    since a duplicate scan of a large store takes longer than a hook may),
    None to leave the heartbeat out, or :data:`COMPUTE`. ``tool_prefix``:
    what the harness puts before thatch's tool names (``Harness.tool_prefix``).
    """
    report = th.hygiene(now=now) if hygiene == COMPUTE else hygiene
    return "\n".join(
        [
            SESSION_TITLE,
            _store_line(th.repo_store),
            named(RECALL_LINE, tool_prefix),
            named(SAVE_LINE, tool_prefix),
            named(EXTRACTION_LINE, tool_prefix),
            *(_hygiene_lines(report) if isinstance(report, HygieneReport) else []),
        ]
    )


def _store_line(repo_store: str | None) -> str:
    if repo_store is None:
        return (
            "- Store: no repository store here (no git origin remote), so new memories "
            f"go to the {GLOBAL_STORE} store."
        )
    return (
        f"- Store: {repo_store} (this repository) takes new memories; those in "
        f"{GLOBAL_STORE} apply everywhere."
    )


def _hygiene_lines(report: HygieneReport) -> list[str]:
    stale, orphaned, pairs = len(report.stale), len(report.orphaned), len(report.duplicates)
    parts = [
        f"{stale} {_plural(stale, 'memory', 'memories')} untouched for {report.stale_days} days"
        if stale
        else "",
        f"{orphaned} tied to {_plural(orphaned, 'a deleted branch', 'deleted branches')}"
        if orphaned
        else "",
        f"{pairs} near-duplicate {_plural(pairs, 'pair', 'pairs')} to review" if pairs else "",
    ]
    found = [part for part in parts if part]
    if not found:
        return []
    return [
        f"- Hygiene: {'; '.join(found)}. Run hygiene_report (or `thatch hygiene`), "
        "then archive, forget or merge what is no longer right."
    ]


def _plural(count: int, one: str, many: str) -> str:
    return one if count == 1 else many
