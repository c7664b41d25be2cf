"""The contract's records from a storage backend's rows, and the checks of writing them.

Each backend writes its own SQL, but every query that reads a record selects
its columns in the order of the record's fields, so the record of a row is
made the same way whatever the database. Only the types a driver hands back
differ: ``moment`` turns a stored time into an aware datetime (the default
keeps a value that already is one, as psycopg returns ``timestamptz``), and a
log row's ``fields`` may come as stored text. :func:`with_archived` makes the
hits of a vector search that asks for archived memories too.

The errors and checks here are the ones a backend raises for a row, worded
once so that every backend tells the user the same thing.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from thatch.plugin.decisions import SIGNALS, Fire, Matcher, Prediction, Provenance
from thatch.plugin.errors import ArchivedMemoryError, LabelTakenError, NotFoundError
from thatch.plugin.prediction_log import ROW_KEYS, LoggedPrediction
from thatch.plugin.records import Memory, NewMemory, ScoredId

if TYPE_CHECKING:
    from thatch.plugin.decision_storage import DecisionKind
    from thatch.plugin.storage import Vector

#: A stored time as an aware datetime.
Moment = Callable[[Any], datetime]


def _as_read(value: Any) -> Any:
    return value


def memory(row: Sequence[Any], moment: Moment = _as_read) -> Memory:
    """A memory from its columns in field order."""
    memory_id, store, label, content, branch, archived, model, *times, recalls, last = row
    created, updated = map(moment, times)
    last_recalled = None if last is None else moment(last)
    # SQLite keeps the flag and the count as INTEGER (archived 0 or 1).
    facts = (bool(archived), model, created, updated, int(recalls), last_recalled)
    return Memory(memory_id, store, label, content, branch, *facts)


# The records below end with their times: the columns before them are taken
# as read, the times through ``moment``.
def matcher(row: Sequence[Any], moment: Moment = _as_read) -> Matcher:
    """id, store, description, model, created_at, updated_at."""
    return Matcher(*row[:4], *map(moment, row[4:]))


def prediction(row: Sequence[Any], moment: Moment = _as_read) -> Prediction:
    """id, store, statement, rationale, model, confirm_count, disconfirm_count, prior,
    confidence, created_at, updated_at."""
    return Prediction(*row[:9], *map(moment, row[9:]))


def provenance(row: Sequence[Any], moment: Moment = _as_read) -> Provenance:
    """id, prediction_id, signal, detail, session, created_at."""
    return Provenance(*row[:5], *map(moment, row[5:]))


def fire(row: Sequence[Any], moment: Moment = _as_read) -> Fire:
    """id, session, prediction_id, confidence, score, fired_at."""
    return Fire(*row[:5], *map(moment, row[5:]))


def logged_prediction(
    row: Sequence[Any],
    moment: Moment = _as_read,
    fields: Callable[[Any], Mapping[str, Any]] = _as_read,
) -> LoggedPrediction:
    """A log entry from its columns in the order of its JSON form (``ROW_KEYS``);
    ``fields`` reads the stored object (text, for a backend keeping JSON)."""
    values = dict(zip(ROW_KEYS, row, strict=True))
    scored = values["scored_at"]
    values["recorded_at"] = moment(values["recorded_at"])
    values["fields"] = fields(values["fields"])
    values["scored_at"] = None if scored is None else moment(scored)
    return LoggedPrediction(**values)


def with_archived(
    hits: Iterable[tuple[int, float]],
    archived: Iterable[tuple[int, bytes]] | None,
    query: Vector,
    decode: Callable[[bytes], Vector],
    limit: int,
) -> list[ScoredId]:
    """A vector search's ``hits`` (id, cosine) with the ``archived`` rows (id, stored
    vector), when asked for, scored against ``query``: best first, ties by id.

    The vector indexes hold unarchived memories only, and the archived ones
    asked for are few, so they are scored one by one; a stored vector of
    another length (another model's) is passed over.
    """
    found = [ScoredId(row_id, score) for row_id, score in hits]
    if archived is not None:
        width = 4 * len(query)
        found.extend(
            ScoredId(row_id, float(decode(blob) @ query))
            for row_id, blob in archived
            if len(blob) == width
        )
        found.sort(key=lambda hit: (-hit.score, hit.id))
    return found[:limit]


def fire_params(
    session: str | None, fires: Sequence[tuple[int, float, float]], when: Any
) -> list[dict[str, Any]]:
    """The bound parameters of each fire of ``record_fires`` (session, id, confidence,
    score, when); ``when`` is the time as the backend stores it."""
    return [
        {
            "session": session,
            "id": int(prediction_id),
            "confidence": float(confidence),
            "score": float(score),
            "when": when,
        }
        for prediction_id, confidence, score in fires
    ]


def check_signal(signal: str) -> None:
    """Refuse a provenance signal the contract does not know, before anything is written."""
    if signal not in SIGNALS:
        raise ValueError(f"unknown signal {signal!r}; expected one of {', '.join(SIGNALS)}")


def not_found(kind: DecisionKind, row_id: int) -> NotFoundError:
    """The error for a matcher or prediction id that names no row."""
    if kind == "matcher":
        return NotFoundError(f"no matcher with id {row_id}")
    return NotFoundError(f"no prediction with id {row_id}; see ids with 'thatch predictions list'")


def archived_memory(store: str, label: str) -> ArchivedMemoryError:
    """The error for an update of an archived memory: it says how to unarchive it."""
    return ArchivedMemoryError(
        f"memory '{label}' in store '{store}' is archived; unarchive it first: "
        f"thatch unarchive {shlex.quote(label)} {shlex.quote(store)}"
    )


def replaces(stored: Memory, content: str, branch: str | None) -> bool:
    """Whether saving ``content`` on ``branch`` over ``stored`` replaces what it says.

    Only a save with overwrite may. The same text under another model is
    re-embedded, not replaced.
    """
    return (stored.content, stored.branch) != (content, branch)


def changes_stored(stored: Memory, item: NewMemory) -> bool:
    """Whether writing ``item`` over the row ``stored`` of its label changes it.

    Called inside the write's transaction, with the row locked: refuses a
    save without overwrite that :func:`replaces` the row, then an update of an
    archived memory. Raising rolls back the whole batch.
    """
    if not item.overwrite and replaces(stored, item.content, item.branch):
        raise LabelTakenError(stored)
    if stored.archived:
        raise archived_memory(stored.store, stored.label)
    return (stored.content, stored.branch, stored.model) != (item.content, item.branch, item.model)
