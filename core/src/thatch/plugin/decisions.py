"""Records of the decision model. Frozen attrs classes; times are aware UTC."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import attrs

#: What the user's feedback says about a prediction.
#: ``create`` links or adds without moving confidence; ``soft`` is a weak
#: disconfirmation (the user hesitated or partly disagreed).
Signal = Literal["create", "confirm", "disconfirm", "soft"]
SIGNALS: tuple[Signal, ...] = ("create", "confirm", "disconfirm", "soft")


@attrs.frozen
class Matcher:
    """The "when": a situation description, embedded passage-side."""

    id: int
    store: str
    description: str
    model: str
    created_at: datetime
    updated_at: datetime


@attrs.frozen
class Prediction:
    """The "what": what the user tends to decide, with its evidence."""

    id: int
    store: str
    statement: str
    rationale: str
    model: str
    #: Evidence counts are REAL: a soft signal adds 0.25.
    confirm_count: float
    disconfirm_count: float
    #: The prior p0 this prediction started from (0.5, or the store's
    #: population rate when the prior is on and the store has evidence).
    prior: float
    confidence: float
    created_at: datetime
    updated_at: datetime

    @property
    def evidence(self) -> float:
        """Units of evidence received (confirm + disconfirm counts)."""
        return self.confirm_count + self.disconfirm_count


@attrs.frozen
class Edge:
    """A weighted link from a matcher to a prediction."""

    matcher_id: int
    prediction_id: int
    weight: float = 1.0


@attrs.frozen
class Provenance:
    """One entry of a prediction's audit trail."""

    id: int
    prediction_id: int
    signal: Signal
    #: What the user said or did.
    detail: str
    #: The agent session the signal came from, when known (for calibration).
    session: str | None
    created_at: datetime


@attrs.frozen
class Fire:
    """One showing of a prediction to the agent, for calibration."""

    id: int
    session: str | None
    prediction_id: int
    #: The confidence the agent was shown.
    confidence: float
    score: float
    fired_at: datetime
