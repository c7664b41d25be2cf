"""How well predicted confidences match what the user then decided.

Each showing of a prediction (a fire) is scored by the first signal for the
same prediction that arrives later in the same session:

- ``confirm`` → outcome 1 (the prediction was right);
- ``disconfirm`` → outcome 0;
- ``soft`` → outcome 0.75 (a hesitation moves the outcome 0.25 from 1
  toward 0);
- ``create`` is not an outcome; a showing with no later signal in its
  session, or with no session, is unscored.

The Brier score is the mean of (confidence shown − outcome)² over scored
showings: 0 is perfect, 0.25 is what always saying 0.5 earns.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import attrs

from thatch.plugin.decisions import Fire, Provenance

OUTCOME = {"confirm": 1.0, "disconfirm": 0.0, "soft": 0.75}
BINS = 10


@attrs.frozen
class ScoredShowing:
    """A fire with the outcome that followed it."""

    fire: Fire
    outcome: float


@attrs.frozen
class ReliabilityBin:
    """Showings whose confidence fell in [low, high)."""

    low: float
    high: float
    count: int
    mean_confidence: float | None
    mean_outcome: float | None


@attrs.frozen
class CalibrationReport:
    """Scored showings, their Brier score and the reliability table."""

    showings: int
    scored: int
    brier: float | None
    bins: tuple[ReliabilityBin, ...]


def score_showings(fires: Sequence[Fire], signals: Sequence[Provenance]) -> list[ScoredShowing]:
    """Pair each fire with the first outcome signal after it in its session."""
    outcomes: dict[tuple[str, int], list[Provenance]] = defaultdict(list)
    for entry in signals:
        if entry.session is not None and entry.signal in OUTCOME:
            outcomes[(entry.session, entry.prediction_id)].append(entry)
    scored = []
    for fire in fires:
        if fire.session is None:
            continue
        later = [
            entry
            for entry in outcomes.get((fire.session, fire.prediction_id), [])
            if entry.created_at >= fire.fired_at
        ]
        if later:
            first = min(later, key=lambda entry: (entry.created_at, entry.id))
            scored.append(ScoredShowing(fire, OUTCOME[first.signal]))
    return scored


def calibration_report(
    fires: Sequence[Fire], signals: Sequence[Provenance], bins: int = BINS
) -> CalibrationReport:
    """The Brier score and a reliability table of ``bins`` equal confidence bins."""
    scored = score_showings(fires, signals)
    brier = (
        sum((s.fire.confidence - s.outcome) ** 2 for s in scored) / len(scored) if scored else None
    )
    grouped: list[list[ScoredShowing]] = [[] for _ in range(bins)]
    for showing in scored:
        # round() first: 0.7 * 10 must land in bin 7, not 6.999… in bin 6.
        index = min(int(round(showing.fire.confidence * bins, 9)), bins - 1)
        grouped[index].append(showing)
    table = tuple(
        ReliabilityBin(
            low=round(i / bins, 4),
            high=round((i + 1) / bins, 4),
            count=len(group),
            mean_confidence=_mean([s.fire.confidence for s in group]),
            mean_outcome=_mean([s.outcome for s in group]),
        )
        for i, group in enumerate(grouped)
    )
    return CalibrationReport(showings=len(fires), scored=len(scored), brier=brier, bins=table)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
