"""Built-in ``decision-nudge``: what the user tends to decide in situations like the prompt's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs

from thatch.decisions.nudge import decision_nudge_from_hits
from thatch.plugin.nudge import Nudge
from thatch.plugin.specs import hookimpl

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.plugin.events import Event
    from thatch.runtime import Runtime

#: Predictions considered per prompt.
DECISION_LIMIT = 5


#: Logs fires: (prediction id, confidence shown, score) each, at a time.
FireLog = Callable[[Sequence[tuple[int, float, float]], datetime], None]


def decision_nudge(
    th: Thatch,
    prompt: str | None,
    session_id: str | None,
    budget: int,
    fire_log: FireLog | None = None,
) -> Nudge | None:
    """The decision-model nudge for ``prompt`` in ``th``'s project, within ``budget`` characters.

    Used on every prompt and alone by ``thatch flush-predictions``. The
    predictions the nudge shows are logged as fired under ``session_id``, for
    calibration, once the nudge is delivered: by ``fire_log``, else straight
    to ``th``'s decision storage. An empty model answers without embedding
    the prompt.
    """
    if not prompt or not prompt.strip():
        return None
    stores = th.stores_for(None)
    # Checked before th.decisions is built: an empty model costs no embedding, no setup.
    if not th.decision_storage.has_matchers(stores):
        return None
    # Only the predictions the text shows are logged as fired, not every hit.
    # Stripped as the recall nudge strips it: the two then share one embedding.
    hits = th.decisions.query(prompt.strip(), limit=DECISION_LIMIT)
    built = decision_nudge_from_hits(hits, max_chars=budget)
    if built is None:
        return None
    fires = [(hit.prediction.id, hit.prediction.confidence, hit.score) for hit in built.shown]

    def log_fires() -> None:
        if fire_log is not None:
            fire_log(fires, datetime.now(UTC))
        else:
            th.decision_storage.record_fires(session_id, fires, datetime.now(UTC))

    return attrs.evolve(built.nudge, on_delivered=log_fires)


@hookimpl
def thatch_nudges(event: Event, app: Runtime) -> list[Nudge]:
    """The decision-model nudge for the prompt (tier 2, priority 60)."""
    from thatch import deferred

    def fire_log(fires: Sequence[tuple[int, float, float]], at: datetime) -> None:
        # Delivered after the answer; kept and tried again while the storage fails.
        deferred.make(app, deferred.fire_log(event.cwd, event.session_id, fires, at))

    nudge = decision_nudge(
        app.project(event.cwd), event.prompt, event.session_id, app.settings.budget, fire_log
    )
    return [nudge] if nudge else []
