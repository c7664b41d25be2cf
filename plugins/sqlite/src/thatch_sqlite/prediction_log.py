"""The prediction log in SQLite: one row per Prediction shown, scored later.

:class:`PredictionLogMixin` gives :class:`~thatch_sqlite.storage.SQLiteStorage`
the methods of :class:`thatch.plugin.PredictionStorage`, on the same
connection, lock and ``BEGIN IMMEDIATE`` transactions as the memories. A row
is unique by (id, session_id) (schema v5); ``fields`` is stored as its JSON
object, times as REAL epoch seconds (read back in UTC: the same moment).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from thatch.plugin import LoggedPrediction, sql_rows
from thatch.plugin.prediction_log import check_score

from thatch_sqlite.codec import to_time

# Columns in the order _row() writes and thatch.plugin.sql_rows reads them.
_SELECT = """
    SELECT id, session_id, action, toward, confidence, source, recorded_at, fields, store,
        actual, scored_at
    FROM prediction_log
"""
_INSERT = """
    INSERT INTO prediction_log (id, session_id, action, toward, confidence, source,
        recorded_at, fields, store, actual, scored_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id, session_id) DO NOTHING
"""
# The entry an id names: of the session when given, else the first recorded.
_FOUND = """
    WHERE seq = (
        SELECT seq FROM prediction_log
        WHERE id = :id AND (:any OR session_id = :session)
        ORDER BY seq LIMIT 1
    )
"""
_SCORE = """
    UPDATE prediction_log SET actual = :actual, scored_at = :when
    WHERE seq = (
        SELECT seq FROM prediction_log
        WHERE id = :id AND (:any OR session_id = :session)
        ORDER BY seq LIMIT 1
    )
"""
# seq breaks ties of time: the order recorded.
_ENTRIES = _SELECT + "WHERE :all OR session_id = :session ORDER BY recorded_at, seq"


class PredictionLogMixin:
    """:class:`thatch.plugin.PredictionStorage` on SQLiteStorage's connection."""

    if TYPE_CHECKING:
        _lock: threading.RLock
        _write: Callable[..., AbstractContextManager[sqlite3.Connection]]
        _fetchall: Callable[[str, Sequence[Any] | dict[str, Any]], list[Any]]

    def record_predictions(self, entries: Sequence[LoggedPrediction]) -> list[bool]:
        if not entries:
            return []
        rows = [_row(entry) for entry in entries]
        # Recording is bookkeeping, like a fire: no fsync on the hook's path.
        # One transaction: the UNIQUE key makes a row already there (from
        # this batch or another writer's) an insert that changes nothing.
        with self._write(bookkeeping=True) as conn:
            return [conn.execute(_INSERT, row).rowcount > 0 for row in rows]

    def get_prediction_entry(
        self, entry_id: str, session_id: str | None = None
    ) -> LoggedPrediction | None:
        rows = self._fetchall(_SELECT + _FOUND, _key(entry_id, session_id))
        return _entry(rows[0]) if rows else None

    def list_prediction_entries(self, session_id: str | None = None) -> list[LoggedPrediction]:
        rows = self._fetchall(_ENTRIES, {"all": session_id is None, "session": session_id})
        return [_entry(row) for row in rows]

    def score_prediction(
        self, entry_id: str, actual: str, when: datetime, session_id: str | None = None
    ) -> bool:
        check_score(actual, when)
        params = _key(entry_id, session_id) | {"actual": actual, "when": when.timestamp()}
        with self._write() as conn:
            return conn.execute(_SCORE, params).rowcount > 0


def _key(entry_id: str, session_id: str | None) -> dict[str, Any]:
    return {"id": entry_id, "any": session_id is None, "session": session_id}


def _row(entry: LoggedPrediction) -> tuple[Any, ...]:
    return (
        entry.id,
        entry.session_id,
        entry.action,
        entry.toward,
        entry.confidence,
        entry.source,
        entry.recorded_at.timestamp(),
        json.dumps(entry.fields, ensure_ascii=False),
        entry.store,
        entry.actual,
        None if entry.scored_at is None else entry.scored_at.timestamp(),
    )


def _entry(row: Sequence[Any]) -> LoggedPrediction:
    return sql_rows.logged_prediction(row, to_time, json.loads)
