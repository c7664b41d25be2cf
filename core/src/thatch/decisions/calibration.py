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
:func:`reliability` computes it and the reliability table for any scored
forecasts (the prediction log's too, ``thatch predlog report``).
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
    forecasts = [(s.fire.confidence, s.outcome) for s in scored]
    return reliability(forecasts, showings=len(fires), bins=bins)


def reliability(
    forecasts: Sequence[tuple[float, float]], showings: int, bins: int = BINS
) -> CalibrationReport:
    """The Brier score and reliability table of scored forecasts.

    :param forecasts: each scored forecast's (confidence 0–1, outcome 0–1).
    :param showings: how many forecasts were made, scored or not.
    :param bins: how many equal confidence bins the table has.
    """
    brier = (
        sum((confidence - outcome) ** 2 for confidence, outcome in forecasts) / len(forecasts)
        if forecasts
        else None
    )
    grouped: list[list[tuple[float, float]]] = [[] for _ in range(bins)]
    for forecast in forecasts:
        # round() first: 0.7 * 10 must land in bin 7, not 6.999… in bin 6.
        index = min(int(round(forecast[0] * bins, 9)), bins - 1)
        grouped[index].append(forecast)
    table = tuple(
        ReliabilityBin(
            low=round(i / bins, 4),
            high=round((i + 1) / bins, 4),
            count=len(group),
            mean_confidence=_mean([confidence for confidence, _ in group]),
            mean_outcome=_mean([outcome for _, outcome in group]),
        )
        for i, group in enumerate(grouped)
    )
    return CalibrationReport(showings=showings, scored=len(forecasts), brier=brier, bins=table)


def reliability_rows(report: CalibrationReport) -> list[tuple[str, str, str, str]]:
    """The reliability table as printed: range, count, mean confidence, mean outcome."""
    return [
        (
            f"{b.low:.1f}-{b.high:.1f}",
            str(b.count),
            "-" if b.mean_confidence is None else f"{b.mean_confidence:.3f}",
            "-" if b.mean_outcome is None else f"{b.mean_outcome:.3f}",
        )
        for b in report.bins
    ]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
