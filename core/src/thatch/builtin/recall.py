"""Built-in ``recall-nudge``: memories relevant to each prompt, not shown again soon."""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.nudges.recall import recall_nudge
from thatch.plugin.nudge import Nudge
from thatch.plugin.specs import hookimpl

if TYPE_CHECKING:
    from thatch.plugin.events import Event
    from thatch.runtime import Runtime

#: Memories considered per prompt, before those shown recently are dropped.
RECALL_LIMIT = 5


@hookimpl
def thatch_nudges(event: Event, app: Runtime) -> list[Nudge]:
    """The recall nudge for ``event.prompt``: memories over the recall threshold.

    Prompts shorter than ``min_prompt_chars`` get none, and memories shown in
    this session within the last ``repeat_window`` prompts are left out. Core
    marks the memories as shown, and counts them as recalled, once the nudge
    is actually delivered.
    """
    prompt = (event.prompt or "").strip()
    if not prompt or len(prompt) < app.settings.min_prompt_chars:
        return []
    th = app.project(event.cwd)
    # Vector mode: with a cosine floor, a memory found only by words cannot
    # pass anyway, and the words search would cost as much as the embedding
    # (bench/recall_quality.py: R@5 vector 0.966, hybrid 0.944).
    hits = th.recall(
        prompt,
        limit=RECALL_LIMIT,
        min_cosine=th.thresholds().recall,
        mode="vector",
        record=False,
    )
    if not hits:
        return []
    recent = app.sessions.shown_recently(
        event.session_id, [hit.memory.id for hit in hits], app.settings.repeat_window
    )
    fresh = [hit for hit in hits if hit.memory.id not in recent]
    nudge = recall_nudge(fresh, max_chars=app.settings.budget)
    return [nudge] if nudge else []
