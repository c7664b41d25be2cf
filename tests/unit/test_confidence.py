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
    assert population_prior(16.0, 4.0) == pytest.approx(0.8)
    # A new prediction in that store starts at 0.8 and one confirm moves it to
    # (1 + 5·0.8) / (1 + 5) = 5 / 6.
    assert confidence(0, 0, 0.8) == pytest.approx(0.8)
    assert confidence(1, 0, 0.8) == pytest.approx(5 / 6)
