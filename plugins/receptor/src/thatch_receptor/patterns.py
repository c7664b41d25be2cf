"""The shape of the recent work: a pattern label from the short window's actions.

Checked in order, the first that matches wins:

- ``stagnation``: at most 3 actions in the last 5 minutes;
- ``trial_error``: at least 3 switches between edits and runs, and more than
  40 % of the runs failing;
- ``wandering``: reads and searches are at least 70 % of the actions, and
  nothing was edited;
- ``exploring``: reads and searches at least 60 %, edits at most 10 %;
- ``implementation``: edits and runs at least 50 %;
- ``mixed``: none of these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thatch_receptor.actions import Action

#: The labels :func:`pattern_of` gives.
LABELS: tuple[str, ...] = (
    "stagnation",
    "trial_error",
    "wandering",
    "exploring",
    "implementation",
    "mixed",
)

#: The kinds of action that look rather than change.
_LOOKING = frozenset({"read", "search", "memory_read"})


def pattern_of(actions: Sequence[Action]) -> str:
    """The pattern of a window's actions (one of :data:`LABELS`)."""
    total = len(actions)
    if total <= 3:
        return "stagnation"
    # One pass for every count (edit_run_cycle's switches and failures among them):
    # this runs on every event.
    looked = edited = ran = failed = switches = 0
    last: str | None = None
    for action in actions:
        kind = action.kind
        if kind in _LOOKING:
            looked += 1
            continue
        if kind == "edit":
            edited += 1
        elif kind == "run":
            ran += 1
            failed += action.failed
        else:
            continue
        if last is not None and kind != last:
            switches += 1
        last = kind
    if switches >= 3 and failed / max(1, ran) > 0.4:
        return "trial_error"
    looking, edits = looked / total, edited / total
    if looking >= 0.7 and not edits:
        return "wandering"
    if looking >= 0.6 and edits <= 0.1:
        return "exploring"
    if (edited + ran) / total >= 0.5:
        return "implementation"
    return "mixed"
