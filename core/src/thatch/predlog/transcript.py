"""A transcript's rows: its Predictions in the order shown, copies left out, with stable ids.

A harness reads its transcript into :class:`thatch.plugin.Candidate` texts
(``Harness.read_transcript``); :func:`rows_of` applies the reading rules of
docs/prediction-log.md ("Reading a transcript"):

- each candidate gives its Predictions in the order shown
  (:func:`thatch.predlog.blocks.predictions_in`);
- an assistant message that repeats the Predictions of the nearest earlier
  message that gave rows, when that was a task-notification result (the same
  confidences in the same order), is a copy: no rows, no number;
- a Prediction block that does not load is skipped in a task-notification
  result (a sub-agent's mistake must not stop the session's log) and raises
  in an assistant message;
- the n-th Prediction is ``<session>:1`` for n = 1, else ``<session>:<n>:1``;
  a lettered legacy message is one Prediction whose rows put the ruling's
  letter in place of the last ``1``.

Reading is left to right and never looks ahead, so a transcript that grows
keeps the ids it had: a second run gives the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from os import PathLike

import attrs

from thatch.plugin.errors import InvalidInputError
from thatch.plugin.prediction_log import Candidate, LoggedPrediction, Source
from thatch.predlog.blocks import (
    MalformedPrediction,
    StatedPrediction,
    predictions_in,
    readable_predictions,
)


class NoPredictions(InvalidInputError):
    """A transcript gave no rows: nothing to append. The command exits 1."""

    exit_code = 1


def require_rows(
    rows: Sequence[LoggedPrediction], path: str | PathLike[str]
) -> Sequence[LoggedPrediction]:
    """``rows`` when there is one at least, else :class:`NoPredictions` naming ``path``."""
    if not rows:
        raise NoPredictions(f"no Prediction with a Confidence line in {path}")
    return rows


def prediction_id(session_id: str, number: int, tail: str = "1") -> str:
    """The id of a transcript's ``number``-th Prediction (``tail``: ``1`` or a ruling's letter)."""
    return f"{session_id}:{tail}" if number == 1 else f"{session_id}:{number}:{tail}"


def rows_of(
    candidates: Iterable[Candidate], session_id: str, recorded_at: datetime
) -> list[LoggedPrediction]:
    """The rows of a transcript's candidates, in transcript order.

    :raises MalformedPrediction: an assistant message's Prediction cannot be
        read; the error names the candidate's transcript line.
    :raises InvalidInputError: ``session_id`` is empty or ``recorded_at`` has no
        timezone.
    """
    if not session_id:
        raise InvalidInputError("a prediction-log session id must not be empty")
    if recorded_at.tzinfo is None:
        raise InvalidInputError("recorded_at must be timezone-aware (a row keeps its offset)")
    numbering = _Numbering(session_id, recorded_at)
    for candidate in candidates:
        numbering.read(candidate.source, stated_in(candidate))
    return numbering.rows


def stated_in(candidate: Candidate) -> list[StatedPrediction]:
    """The Predictions of one candidate, as its source allows.

    An assistant message raises on a Prediction it cannot read; a
    task-notification result gives the Predictions of its readable blocks.
    """
    if candidate.source == "assistant":
        try:
            return predictions_in(candidate.text)
        except MalformedPrediction as exc:
            raise exc.at_line(candidate.line) from None
    return readable_predictions(candidate.text)


@attrs.define
class _Numbering:
    """Numbers the Predictions of the candidates read so far, and keeps their rows."""

    session_id: str
    recorded_at: datetime
    rows: list[LoggedPrediction] = attrs.field(factory=list)
    #: The Predictions read so far, the next one's number less one.
    count: int = 0
    #: The source and confidences of the nearest earlier message that gave rows.
    last_giver: tuple[Source, tuple[int, ...]] | None = None

    def read(self, source: Source, stated: Sequence[StatedPrediction]) -> None:
        """Number one candidate's Predictions (none when it is a copy) and keep their rows."""
        if not stated:
            return
        confidences = tuple(prediction.confidence for prediction in stated)
        if source == "assistant" and self.last_giver == ("task-notification", confidences):
            return
        self.last_giver = (source, confidences)
        in_lettered_group = False
        for prediction in stated:
            if prediction.letter is None or not in_lettered_group:
                self.count += 1
            in_lettered_group = prediction.letter is not None
            tail = prediction.letter or "1"
            self.rows.append(
                self._row(prediction, source, prediction_id(self.session_id, self.count, tail))
            )

    def _row(self, prediction: StatedPrediction, source: Source, row_id: str) -> LoggedPrediction:
        return LoggedPrediction(
            id=row_id,
            session_id=self.session_id,
            action=prediction.action,
            toward=prediction.toward,
            confidence=prediction.confidence,
            source=source,
            recorded_at=self.recorded_at,
            fields=dict(prediction.fields),
        )
