"""The prediction log on the server: one row per Prediction shown, scored later.

:class:`PredictionLogMixin` gives :class:`~thatch_postgres.storage.PostgresStorage`
the methods of :class:`thatch.plugin.PredictionStorage`. A row is unique by
(id, session_id): two machines, or two hooks of one session, recording the
same transcript at once leave each row once, because the unique key decides
in the database (``ON CONFLICT DO NOTHING``), not a read before the write.
``fields`` is kept as ``json`` rather than ``jsonb``, which refuses some
strings (``\\u0000``) a Prediction's YAML may hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Json
from thatch.plugin import LoggedPrediction, sql_rows
from thatch.plugin.prediction_log import check_score

from thatch_postgres.pooled import Pooled
from thatch_postgres.text import storable

if TYPE_CHECKING:
    from thatch_postgres.connect import Connection

# Columns in the order _row() writes and thatch.plugin.sql_rows reads them.
_INSERT = """
    INSERT INTO prediction_log (id, session_id, action, toward, confidence, source,
        recorded_at, fields, store, actual, scored_at)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
    ON CONFLICT (id, session_id) DO NOTHING
"""
# The entry an id names: of the session when given, else the first recorded.
_FOUND = """
    SELECT id, session_id, action, toward, confidence, source, recorded_at, fields, store,
        actual, scored_at
    FROM prediction_log
    WHERE id = %(id)s AND (%(any)s OR session_id = %(session)s)
    ORDER BY seq LIMIT 1
"""
_SCORE = """
    UPDATE prediction_log SET actual = %(actual)s, scored_at = %(when)s
    WHERE seq = (
        SELECT seq FROM prediction_log
        WHERE id = %(id)s AND (%(any)s OR session_id = %(session)s)
        ORDER BY seq LIMIT 1
    )
"""
# seq breaks ties of time: the order recorded.
_ENTRIES = """
    SELECT id, session_id, action, toward, confidence, source, recorded_at, fields, store,
        actual, scored_at
    FROM prediction_log
    WHERE %(all)s OR session_id = %(session)s
    ORDER BY recorded_at, seq
"""


class PredictionLogMixin(Pooled):
    """:class:`thatch.plugin.PredictionStorage` on PostgresStorage's pool.

    Both writes may run again after a lost commit: a row is unique by its
    key and a score is set, not added.
    """

    def record_predictions(self, entries: Sequence[LoggedPrediction]) -> list[bool]:
        if not entries:
            return []
        rows = [_row(entry) for entry in entries]

        def record(conn: Connection) -> list[bool]:
            return [conn.execute(_INSERT, row).rowcount > 0 for row in rows]

        return self._write("record predictions", record)

    def get_prediction_entry(
        self, entry_id: str, session_id: str | None = None
    ) -> LoggedPrediction | None:
        rows = self._rows(_FOUND, _key(entry_id, session_id))
        return sql_rows.logged_prediction(rows[0]) if rows else None

    def list_prediction_entries(self, session_id: str | None = None) -> list[LoggedPrediction]:
        rows = self._rows(_ENTRIES, {"all": session_id is None, "session": session_id})
        return [sql_rows.logged_prediction(row) for row in rows]

    def score_prediction(
        self, entry_id: str, actual: str, when: datetime, session_id: str | None = None
    ) -> bool:
        check_score(actual, when)
        params = _key(entry_id, session_id) | {"actual": actual, "when": when}
        return self._write(
            "score a prediction", lambda conn: conn.execute(_SCORE, params).rowcount > 0
        )


def _key(entry_id: str, session_id: str | None) -> dict[str, Any]:
    return {"id": entry_id, "any": session_id is None, "session": session_id}


def _row(entry: LoggedPrediction) -> tuple[Any, ...]:
    return (
        entry.id,
        entry.session_id,
        entry.action,
        storable(entry.toward, f"prediction {entry.id!r}"),
        entry.confidence,
        entry.source,
        entry.recorded_at,
        Json(dict(entry.fields)),
        entry.store,
        entry.actual,
        entry.scored_at,
    )
