"""Bayesian confidence of a prediction, and the evidence each signal adds.

``confidence = (confirm + k·p0) / (confirm + disconfirm + k)``: a Beta prior
worth ``k`` observations centred on ``p0``, updated by the user's feedback.
Nothing else moves it — no wall-clock decay: a preference that is never
tested keeps its confidence.

Worked examples with k = 5, p0 = 0.5 (the prior is worth 2.5 confirms and
2.5 disconfirms):

- created, no evidence: 2.5 / 5 = 0.5000
- one confirm: 3.5 / 6 = 0.5833
- one disconfirm: 2.5 / 6 = 0.4167
- one soft (0.25 disconfirm): 2.5 / 5.25 = 0.4762
- three confirms and one soft: 5.5 / 8.25 = 0.6667
"""

from __future__ import annotations

import attrs

from thatch.plugin.decisions import Signal

#: Prior strength, in observations.
K = 5.0
#: Prior centre when nothing is known about the store.
DEFAULT_PRIOR = 0.5
#: Units of evidence a store needs before its own rate becomes the prior.
POPULATION_MINIMUM = 20.0
#: Pseudo-count of the population prior: the store's rate is shrunk toward
#: 0.5 as if it also held this many units of evidence split evenly, so at
#: the minimum of evidence the prior is halfway between 0.5 and the rate.
POPULATION_SHRINK = 20.0
#: The population prior stays within [1 - bound, bound]: a new, untested
#: prediction is never near-certain, and one disconfirm takes it below 0.7,
#: the line under which the agent asks (docs/decision-model.md).
POPULATION_BOUND = 0.8


@attrs.frozen
class Evidence:
    """What one signal adds to a prediction's counts."""

    confirm: float
    disconfirm: float


#: ``soft`` is a hesitation, not a rejection: a quarter of a disconfirm.
EVIDENCE: dict[Signal, Evidence] = {
    "create": Evidence(0.0, 0.0),
    "confirm": Evidence(1.0, 0.0),
    "disconfirm": Evidence(0.0, 1.0),
    "soft": Evidence(0.0, 0.25),
}


def confidence(confirm: float, disconfirm: float, prior: float, k: float = K) -> float:
    """The posterior mean of the prediction being right."""
    return (confirm + k * prior) / (confirm + disconfirm + k)


def population_prior(
    total_confirm: float, total_disconfirm: float, *, minimum: float = POPULATION_MINIMUM
) -> float:
    """The store's confirm rate, shrunk toward 0.5 and bounded, once it has ``minimum`` units.

    ``(confirm + s·0.5) / (confirm + disconfirm + s)`` with s =
    POPULATION_SHRINK, clamped to [1 − POPULATION_BOUND, POPULATION_BOUND];
    0.5 below ``minimum`` units of evidence. A store whose user confirms
    16 of 20 predictions starts new ones at (16 + 10) / 40 = 0.65 instead of
    pretending to know nothing; 20 confirms and no disconfirm give 0.75, not
    1.0, and however many confirms a store holds a new prediction starts at
    0.8 at most.
    """
    total = total_confirm + total_disconfirm
    if total < minimum:
        return DEFAULT_PRIOR
    shrunk = (total_confirm + POPULATION_SHRINK * DEFAULT_PRIOR) / (total + POPULATION_SHRINK)
    return min(max(shrunk, 1.0 - POPULATION_BOUND), POPULATION_BOUND)
