"""The prediction log: every Prediction an agent shows, one row each, with a stable id.

Agents state what they predict the user will decide — a fenced YAML block
with an action (accept / correct), the text the user will move toward and a
confidence 0–100 — before they ask. Each Prediction shown becomes one
:class:`LoggedPrediction`, numbered in the order the transcript shows them
(``<session>:1``, ``<session>:2:1``...), so reading a transcript again gives
the same ids and adds nothing. Rows are scored later with what the user did.

The log is kept through ``thatch_prediction_storage``, apart from memories
and the decision model, so it may stay local while memories live on a team
server. :class:`thatch.testing.contracts.PredictionStorageContract` is the
suite every backend must pass. A harness reads its own transcripts into
:class:`Candidate` texts (``Harness.read_transcript``); core turns them into
rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, time
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

from thatch.plugin.errors import InvalidInputError

#: Where a Prediction was read: the agent's own text, or a sub-agent's result
#: handed back to it (a user line beginning ``<task-notification>``).
Source = Literal["assistant", "task-notification"]
SOURCES: tuple[Source, ...] = ("assistant", "task-notification")
#: What the user did about a Prediction, once known.
ACTUALS = ("accept", "correct")
#: The keys of a row's JSON form, in order.
ROW_KEYS = (
    "id",
    "session_id",
    "action",
    "toward",
    "confidence",
    "source",
    "recorded_at",
    "fields",
    "store",
    "actual",
    "scored_at",
)


def json_value(value: Any) -> Any:
    """``value`` as JSON holds it: YAML's dates and times as ISO 8601 text, keys as text.

    A Prediction's fields come from YAML, which also loads dates, sets and
    non-text keys; made plain once here, a row reads back equal to the one
    written, from a JSONL file and from any storage. Anything else JSON has
    no form for becomes its text.
    """
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((json_value(item) for item in value), key=repr)
    if isinstance(value, date | time):
        return value.isoformat()
    return str(value)


def _aware(instance: Any, attribute: attrs.Attribute[Any], value: datetime | None) -> None:
    # A time without its offset would be written as one no reader accepts.
    if value is not None and value.utcoffset() is None:
        raise ValueError(f"{attribute.name} must be timezone-aware, not {value!r}")


@attrs.frozen
class Candidate:
    """One text of a transcript that may state Predictions, in transcript order."""

    text: str
    source: Source
    #: The transcript line it came from (1 = the first), named in errors.
    line: int = 0


@attrs.frozen
class LoggedPrediction:
    """One Prediction as the agent showed it: one row of the log."""

    #: ``<session>:1`` for the first, ``<session>:<n>:1`` for the n-th; a letter
    #: instead of the last number for each lettered ruling of a legacy message.
    id: str
    session_id: str
    #: What the agent predicts the user will do: ``accept`` or ``correct`` (as stated).
    action: str
    #: The text the user will move toward.
    toward: str
    #: How sure the agent said it was, 0–100.
    confidence: int
    #: Where it was read (:data:`SOURCES`).
    source: str
    #: When it was first recorded (timezone-aware).
    recorded_at: datetime = attrs.field(validator=_aware)
    #: The Prediction's other fields (triggers, levers...), as stated, made JSON
    #: values (:func:`json_value`) so that every storage keeps them alike.
    fields: Mapping[str, Any] = attrs.field(factory=dict, converter=json_value)
    #: The project store it was shown in ("" when unknown).
    store: str = ""
    #: What the user did (:data:`ACTUALS`), once scored.
    actual: str | None = None
    scored_at: datetime | None = attrs.field(default=None, validator=_aware)

    def to_json(self) -> dict[str, Any]:
        """The row as one JSONL line holds it (datetimes ISO 8601 with their offset)."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "action": self.action,
            "toward": self.toward,
            "confidence": self.confidence,
            "source": self.source,
            "recorded_at": self.recorded_at.isoformat(),
            "fields": dict(self.fields),
            "store": self.store,
            "actual": self.actual,
            "scored_at": self.scored_at.isoformat() if self.scored_at else None,
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> LoggedPrediction:
        """A row from its JSON form; ``where`` (``FILE:LINE``) is named in every error.

        :raises InvalidInputError: ``data`` is not a row: not an object, a key
            missing or unknown, or a value of the wrong kind.
        """
        if not isinstance(data, Mapping):
            raise InvalidInputError(f"{where}: not a prediction-log row (a JSON object)")
        missing = [key for key in ROW_KEYS if key not in data]
        unknown = sorted(set(data) - set(ROW_KEYS))
        if missing or unknown:
            problem = f"missing {missing[0]!r}" if missing else f"unknown key {unknown[0]!r}"
            raise InvalidInputError(
                f"{where}: not a prediction-log row ({problem}); rows have the keys "
                f"{', '.join(ROW_KEYS)}"
            )
        row = cls(
            id=_text(data, "id", where),
            session_id=_text(data, "session_id", where),
            action=_text(data, "action", where),
            toward=_text(data, "toward", where, empty=True),
            confidence=_confidence(data["confidence"], where),
            source=_choice(data, "source", SOURCES, where),
            recorded_at=_moment(data["recorded_at"], "recorded_at", where),
            fields=_fields(data["fields"], where),
            store=_text(data, "store", where, empty=True),
            actual=None if data["actual"] is None else _choice(data, "actual", ACTUALS, where),
            scored_at=(
                None
                if data["scored_at"] is None
                else _moment(data["scored_at"], "scored_at", where)
            ),
        )
        if (row.actual is None) != (row.scored_at is None):
            raise InvalidInputError(
                f"{where}: 'actual' and 'scored_at' are set together (both null until scored), "
                f"not {data['actual']!r} and {data['scored_at']!r}"
            )
        return row


def _text(data: Mapping[str, Any], key: str, where: str, *, empty: bool = False) -> str:
    value = data[key]
    if not isinstance(value, str) or (not empty and not value):
        kind = "a string" if empty else "a non-empty string"
        raise InvalidInputError(f"{where}: {key!r} must be {kind}, not {value!r}")
    return value


def _choice(data: Mapping[str, Any], key: str, allowed: Sequence[str], where: str) -> str:
    value = data[key]
    if value not in allowed:
        raise InvalidInputError(
            f"{where}: {key!r} must be one of {', '.join(allowed)}, not {value!r}"
        )
    return str(value)


def _confidence(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        raise InvalidInputError(
            f"{where}: 'confidence' must be a whole number 0–100, not {value!r}"
        )
    return value


def _moment(value: Any, key: str, where: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise InvalidInputError(
            f"{where}: {key!r} must be an ISO 8601 time with its offset, not {value!r}"
        )
    return moment


def _fields(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{where}: 'fields' must be a JSON object, not {value!r}")
    return dict(value)


def check_score(actual: str, when: datetime) -> None:
    """Refuse a score no storage may keep; every backend's ``score_prediction`` calls it.

    :raises InvalidInputError: ``actual`` is not one of :data:`ACTUALS`, or
        ``when`` has no offset.
    """
    if actual not in ACTUALS:
        raise InvalidInputError(
            f"a score is one of {', '.join(ACTUALS)} (what the user did), not {actual!r}"
        )
    if when.utcoffset() is None:
        raise InvalidInputError(f"a score's time must be timezone-aware, not {when!r}")


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

    def record_predictions(self, entries: Sequence[LoggedPrediction]) -> list[bool]:
        """Keep every entry whose (id, session) is not logged yet, in one transaction.

        Returns, for each entry, whether it was new. An entry already logged
        stays as stored (first fields, time and score kept). Two writers
        recording the same rows at once leave each row once.
        """

    def get_prediction_entry(
        self, entry_id: str, session_id: str | None = None
    ) -> LoggedPrediction | None:
        """The entry with ``entry_id`` (of ``session_id`` when given), or None.

        Without ``session_id``, the first recorded of the entries with that id
        (ids name their session, so there is normally one).
        """

    def list_prediction_entries(self, session_id: str | None = None) -> list[LoggedPrediction]:
        """Entries, oldest first (ties in the order recorded); of one session when given."""

    def score_prediction(
        self, entry_id: str, actual: str, when: datetime, session_id: str | None = None
    ) -> bool:
        """Record what the user did (``accept`` or ``correct``); False when no such entry.

        The entry is the one :meth:`get_prediction_entry` finds. A new score
        replaces the old one (``actual`` and ``scored_at``); nothing else of
        the entry changes.

        :raises InvalidInputError: a score :func:`check_score` refuses; nothing
            is written.
        """
