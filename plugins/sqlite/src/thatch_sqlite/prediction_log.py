"""The prediction log in SQLite: one row per Prediction block shown, scored later.

:class:`PredictionLogMixin` gives :class:`~thatch_sqlite.storage.SQLiteStorage`
the methods of :class:`thatch.plugin.PredictionStorage`, on the same
connection, lock and ``BEGIN IMMEDIATE`` transactions as the memories.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from thatch.plugin import LoggedPrediction

from thatch_sqlite.codec import to_time

# Columns in the order _entry() reads them; seq breaks ties of time.
_ENTRY = "SELECT id, session_id, store, text, recorded_at, outcome, scored_at FROM prediction_log"
_ENTRIES = """
    SELECT id, session_id, store, text, recorded_at, outcome, scored_at FROM prediction_log
    WHERE :all OR session_id = :session
    ORDER BY recorded_at, seq
"""


class PredictionLogMixin:
    """:class:`thatch.plugin.PredictionStorage` on SQLiteStorage's connection."""

    if TYPE_CHECKING:
        _lock: threading.RLock
        _write: Callable[..., AbstractContextManager[sqlite3.Connection]]
        _fetchone: Callable[[str, Sequence[Any]], Any]
        _fetchall: Callable[[str, Sequence[Any] | dict[str, Any]], list[Any]]

    def record_prediction(self, entry: LoggedPrediction) -> tuple[LoggedPrediction, bool]:
        # A showing is bookkeeping, like a fire: no fsync on the prompt path.
        with self._write(bookkeeping=True) as conn:
            cursor = conn.execute(
                "INSERT INTO prediction_log (id, session_id, store, text, recorded_at,"
                " outcome, scored_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (
                    entry.id,
                    entry.session_id,
                    entry.store,
                    entry.text,
                    entry.recorded_at.timestamp(),
                    None if entry.outcome is None else int(entry.outcome),
                    None if entry.scored_at is None else entry.scored_at.timestamp(),
                ),
            )
            created = cursor.rowcount > 0
            row = conn.execute(_ENTRY + " WHERE id = ?", (entry.id,)).fetchone()
        return _entry(row), created

    def get_prediction_entry(self, entry_id: str) -> LoggedPrediction | None:
        row = self._fetchone(_ENTRY + " WHERE id = ?", (entry_id,))
        return None if row is None else _entry(row)

    def list_prediction_entries(self, session_id: str | None = None) -> list[LoggedPrediction]:
        rows = self._fetchall(_ENTRIES, {"all": session_id is None, "session": session_id})
        return [_entry(row) for row in rows]

    def score_prediction(self, entry_id: str, outcome: bool, when: datetime) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE prediction_log SET outcome = ?, scored_at = ? WHERE id = ?",
                (int(outcome), when.timestamp(), entry_id),
            )
            return cursor.rowcount > 0


def _entry(row: Sequence[Any]) -> LoggedPrediction:
    return LoggedPrediction(
        id=row[0],
        session_id=row[1],
        store=row[2],
        text=row[3],
        recorded_at=to_time(row[4]),
        outcome=None if row[5] is None else bool(row[5]),
        scored_at=None if row[6] is None else to_time(row[6]),
    )
