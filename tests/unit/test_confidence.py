from __future__ import annotations

import pytest
from thatch.decisions.confidence import EVIDENCE, confidence, population_prior


def _after(*signals: str, prior: float = 0.5) -> float:
    confirm = sum(EVIDENCE[s].confirm for s in signals)  # type: ignore[index]
    disconfirm = sum(EVIDENCE[s].disconfirm for s in signals)  # type: ignore[index]
    return round(confidence(confirm, disconfirm, prior), 4)


@pytest.mark.parametrize(
    ("signals", "expected"),
    [
        ((), 0.5),
        (("create",), 0.5),
        (("confirm",), 0.5833),
        (("disconfirm",), 0.4167),
        (("soft",), 0.4762),
        (("confirm", "confirm", "confirm", "soft"), 0.6667),
    ],
)
def test_exact_confidences(signals: tuple[str, ...], expected: float) -> None:
    assert _after(*signals) == expected


def test_population_prior_needs_twenty_units() -> None:
    assert population_prior(15.0, 4.75) == 0.5
    # (16 + 20·0.5) / (20 + 20): the store's 0.8 shrunk halfway toward 0.5.
    assert population_prior(16.0, 4.0) == pytest.approx(0.65)
    # A new prediction in that store starts at 0.65 and one confirm moves it to
    # (1 + 5·0.65) / (1 + 5).
    assert confidence(0, 0, 0.65) == pytest.approx(0.65)
    assert confidence(1, 0, 0.65) == pytest.approx(4.25 / 6)


@pytest.mark.parametrize(
    ("confirms", "disconfirms", "expected"),
    [
        (20.0, 0.0, 0.75),  # the tester's store: 1.0 before
        (0.0, 20.0, 0.25),  # 0.0 before
        (200.0, 0.0, 0.8),  # shrunk 0.9545, bounded
        (0.0, 200.0, 0.2),
        (30.0, 10.0, (30 + 10) / 60),
    ],
)
def test_population_prior_is_shrunk_and_bounded(
    confirms: float, disconfirms: float, expected: float
) -> None:
    prior = population_prior(confirms, disconfirms)
    assert prior == pytest.approx(expected)
    # Never certain: one disconfirm takes a new prediction below the 0.7 line.
    assert confidence(0, 1, prior) < 0.7
    assert confidence(0, 0, prior) < 1.0
