"""Built-in plugin ``extraction-nudge``: ask the agent to save what its tools taught.

On each prompt, when the session's queue holds interactions the agent has
not acknowledged, it offers the tier-1 extraction nudge and raises the
session's nudge level, so an ignored nudge comes back louder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.nudges.extraction import MIN_ITEM_CHARS, build_extraction_nudge
from thatch.plugin.specs import hookimpl

if TYPE_CHECKING:
    from thatch.plugin.events import Event
    from thatch.plugin.nudge import Nudge
    from thatch.runtime import Runtime

#: The extraction nudge's share of the prompt's budget: the rest is left for
#: the recall and decision-model nudges.
BUDGET_SHARE = 0.6


@hookimpl
def thatch_nudges(event: Event, app: Runtime) -> list[Nudge] | None:
    """The extraction nudge for the prompt's session, or None when its queue is empty.

    The drain boundary noted is the last interaction the nudge lists:
    interactions that did not fit stay queued for a later nudge instead of
    being drained unseen by ``extraction_done``. The text names the
    workflow and tool names of the event's harness (as its plugin declares them).
    """
    sessions = app.sessions
    state = sessions.state(event.session_id)
    # While the harness compacts, nothing is shown, so nothing must escalate.
    if state is None or state.pending == 0 or state.compacting:
        return None
    budget = int(app.settings.budget * BUDGET_SHARE)
    if budget <= 0:
        return None
    queued = sessions.pending(event.session_id, limit=max(1, budget // MIN_ITEM_CHARS))
    if not queued:
        return None
    built = build_extraction_nudge(
        event.session_id,
        queued,
        state.nudge_level,
        budget,
        total=state.pending,
        harness=app.plugins.harness(event.harness),
    )
    sessions.note_extraction_nudge(event.session_id, built.through_seq)
    return [built.nudge]
