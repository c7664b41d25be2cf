"""The prediction log's storage: every Prediction block an agent shows, once.

Provided through ``thatch_prediction_storage``, apart from memories and the
decision model, so the log may stay local while memories live on a team
server. An entry's id is stable (:func:`entry_id`): the same block (same
session, same text) recorded twice keeps its first entry. Entries are scored
later, when it is known whether the prediction came true.
:class:`thatch.testing.contracts.PredictionStorageContract` is the suite every
backend must pass.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs


def entry_id(session_id: str, text: str) -> str:
    """The stable id of a block: the same session and text give the same id.

    Runs of whitespace count as one space, so a block wrapped differently
    when shown again is still the same entry.
    """
    key = f"{session_id}\0{' '.join(text.split())}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


@attrs.frozen
class LoggedPrediction:
    """One Prediction block as the agent showed it."""

    #: Stable id: the same block recorded again gets the same one (see :func:`entry_id`).
    id: str
    session_id: str
    #: The block's text, redacted.
    text: str
    #: When it was first shown (timezone-aware).
    recorded_at: datetime
    #: The project store it was shown in.
    store: str = ""
    #: Set when scored: whether the prediction came true (None: not yet scored).
    outcome: bool | None = None
    scored_at: datetime | None = None

    @classmethod
    def shown(
        cls, session_id: str, text: str, recorded_at: datetime, *, store: str = ""
    ) -> LoggedPrediction:
        """A new, unscored entry for a block shown in ``session_id``, with its stable id."""
        return cls(
            id=entry_id(session_id, text),
            session_id=session_id,
            text=text,
            recorded_at=recorded_at,
            store=store,
        )


@runtime_checkable
class PredictionStorage(Protocol):
    """Keeps the prediction log."""

    def close(self) -> None:
        """Release connections; the object is not used afterwards.

        Core closes each distinct storage object once: an object that keeps
        other parts too is closed once for all of them.
        """

    def integrity_problems(self) -> list[str]:
        """Check the stored data; an empty list means it is sound."""

    def record_prediction(self, entry: LoggedPrediction) -> tuple[LoggedPrediction, bool]:
        """Keep ``entry`` unless its id is logged: the stored entry, and whether it is new.

        An entry already logged is returned as stored (first text, time and
        score kept); ``entry`` changes nothing then.
        """

    def get_prediction_entry(self, entry_id: str) -> LoggedPrediction | None:
        """The entry with ``entry_id``, or None."""

    def list_prediction_entries(self, session_id: str | None = None) -> list[LoggedPrediction]:
        """Entries, oldest first (ties in the order recorded); of one session when given."""

    def score_prediction(self, entry_id: str, outcome: bool, when: datetime) -> bool:
        """Record whether the prediction came true; False when no such entry.

        A new score replaces the old one (outcome and ``scored_at``).
        """
