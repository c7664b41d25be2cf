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
    """The store's own confirm rate once it has ``minimum`` units of evidence, else 0.5.

    A store whose user confirms 80 % of predictions starts new ones at 0.8
    instead of pretending to know nothing.
    """
    total = total_confirm + total_disconfirm
    if total < minimum:
        return DEFAULT_PRIOR
    return total_confirm / total
