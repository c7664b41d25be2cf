"""The prediction log's storage: every Prediction block an agent shows, once.

Provided through ``thatch_prediction_storage``, apart from memories and the
decision model, so the log may stay local while memories live on a team
server. An entry's id is stable: the same block (same session, same text)
recorded twice keeps its first id. Entries are scored later.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs


@attrs.frozen
class LoggedPrediction:
    """One Prediction block as the agent showed it."""

    #: Stable id: the same block recorded again gets the same one.
    id: str
    session_id: str
    #: The block's text, redacted.
    text: str
    recorded_at: datetime
    #: The project store it was shown in.
    store: str = ""
    #: Set when scored: whether the prediction came true (None: not yet scored).
    outcome: bool | None = None
    scored_at: datetime | None = None


@runtime_checkable
class PredictionStorage(Protocol):
    """Keeps the prediction log."""

    def close(self) -> None:
        """Release connections; the object is not used again."""

    def record_prediction(self, entry: LoggedPrediction) -> tuple[LoggedPrediction, bool]:
        """Keep ``entry`` unless its id is logged: the stored entry, and whether it is new."""

    def get_prediction_entry(self, entry_id: str) -> LoggedPrediction | None:
        """The entry with ``entry_id``, or None."""

    def list_prediction_entries(self, session_id: str | None = None) -> Sequence[LoggedPrediction]:
        """Entries, oldest first (of one session when given)."""

    def score_prediction(self, entry_id: str, outcome: bool, when: datetime) -> bool:
        """Record whether the prediction came true; False when no such entry."""
