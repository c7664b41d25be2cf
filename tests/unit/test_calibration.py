from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from thatch.decisions.calibration import calibration_report, score_showings
from thatch.plugin.decisions import Fire, Provenance

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)


def _fire(n: int, session: str | None, prediction: int, conf: float, minute: int) -> Fire:
    return Fire(
        id=n,
        session=session,
        prediction_id=prediction,
        confidence=conf,
        score=conf,
        fired_at=T0 + timedelta(minutes=minute),
    )


def _signal(n: int, session: str | None, prediction: int, signal: str, minute: int) -> Provenance:
    return Provenance(
        id=n,
        prediction_id=prediction,
        signal=signal,
        detail="",  # type: ignore[arg-type]
        session=session,
        created_at=T0 + timedelta(minutes=minute),
    )


FIRES = [
    _fire(1, "s1", 1, 0.8, 0),  # confirmed at minute 5 -> outcome 1
    _fire(2, "s1", 2, 0.6, 1),  # softened at minute 2 -> outcome 0.75
    _fire(3, "s2", 1, 0.7, 0),  # disconfirmed in s2 -> outcome 0
    _fire(4, "s3", 1, 0.9, 0),  # no signal in s3 -> unscored
    _fire(5, None, 2, 0.5, 0),  # no session -> unscored
    _fire(6, "s1", 1, 0.55, 10),  # the confirm came before it -> unscored
]
SIGNALS = [
    _signal(1, "s1", 1, "create", 3),
    _signal(2, "s1", 1, "confirm", 5),
    _signal(3, "s1", 2, "soft", 2),
    _signal(4, "s2", 1, "disconfirm", 4),
    _signal(5, "s2", 1, "confirm", 6),  # later than the first outcome: ignored
]


def test_outcomes_follow_the_documented_rule() -> None:
    scored = {s.fire.id: s.outcome for s in score_showings(FIRES, SIGNALS)}
    assert scored == {1: 1.0, 2: 0.75, 3: 0.0}


def test_brier_matches_a_hand_computation() -> None:
    report = calibration_report(FIRES, SIGNALS)
    hand = ((0.8 - 1.0) ** 2 + (0.6 - 0.75) ** 2 + (0.7 - 0.0) ** 2) / 3
    assert report.showings == 6
    assert report.scored == 3
    assert report.brier == pytest.approx(hand)
    filled = {(b.low, b.count, b.mean_outcome) for b in report.bins if b.count}
    assert filled == {(0.6, 1, 0.75), (0.7, 1, 0.0), (0.8, 1, 1.0)}


def test_empty_log() -> None:
    report = calibration_report([], [])
    assert report.brier is None
    assert report.scored == 0
    assert len(report.bins) == 10
