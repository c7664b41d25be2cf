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

from thatch_receptor.history import WindowTally

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


def pattern_of(actions: Sequence[Action]) -> str:
    """The pattern of a window's actions (one of :data:`LABELS`)."""
    if len(actions) <= 3:
        return "stagnation"
    tally = WindowTally()
    tally.add(actions, (), ())
    return pattern_of_tally(tally)


def pattern_of_tally(tally: WindowTally) -> str:
    """The pattern of a window from its counts (a ``SessionHistory`` keeps the short one's)."""
    total = tally.actions
    if total <= 3:
        return "stagnation"
    ran = tally.ran
    # max(1, ran), in a conditional: a max call parses its arguments, on every event.
    if tally.switches >= 3 and tally.failed_runs / (ran if ran > 1 else 1) > 0.4:
        return "trial_error"
    edited = tally.edited
    looking, edits = tally.looked / total, edited / total
    if looking >= 0.7 and not edits:
        return "wandering"
    if looking >= 0.6 and edits <= 0.1:
        return "exploring"
    if (edited + ran) / total >= 0.5:
        return "implementation"
    return "mixed"
