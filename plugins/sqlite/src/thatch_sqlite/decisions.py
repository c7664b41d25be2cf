"""The decision model in SQLite: matchers, predictions, edges, provenance, fires.

:class:`DecisionsMixin` gives :class:`~thatch_sqlite.storage.SQLiteStorage`
the methods of :class:`thatch.plugin.decision_storage.DecisionStorage`, on the same
connection, lock and ``BEGIN IMMEDIATE`` transactions as the memories.
:class:`DecisionCache` keeps the matcher and prediction vectors in memory, one
:class:`~thatch_sqlite.vectors.VectorIndex` each, current with every commit
through the ``decision_changes`` log (see :mod:`thatch_sqlite.cache`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from thatch.plugin import (
    DecisionKind,
    Edge,
    Fire,
    Matcher,
    Prediction,
    Provenance,
    ScoredId,
    sql_rows,
)

from thatch_sqlite.cache import Follower
from thatch_sqlite.codec import as_vector, from_blob, json_ids, to_blob, to_time
from thatch_sqlite.vectors import VectorIndex

if TYPE_CHECKING:
    from thatch.plugin import ConfidenceRule, Signal, Vector


# Column lists in the order thatch.plugin.sql_rows reads them.
_MATCHERS_BY_ID = """
    SELECT id, store, description, model, created_at, updated_at
    FROM prediction_matchers WHERE id IN (SELECT value FROM json_each(?))
"""
_MATCHERS_OF_STORES = """
    SELECT id, store, description, model, created_at, updated_at
    FROM prediction_matchers
    WHERE :all OR store IN (SELECT value FROM json_each(:stores))
    ORDER BY id
"""
_PREDICTION_BY_ID = """
    SELECT id, store, statement, rationale, model, confirm_count, disconfirm_count, prior,
        confidence, created_at, updated_at
    FROM predictions WHERE id = ?
"""
_PREDICTIONS_BY_ID = """
    SELECT id, store, statement, rationale, model, confirm_count, disconfirm_count, prior,
        confidence, created_at, updated_at
    FROM predictions WHERE id IN (SELECT value FROM json_each(?))
"""
_PREDICTIONS_OF_STORES = """
    SELECT id, store, statement, rationale, model, confirm_count, disconfirm_count, prior,
        confidence, created_at, updated_at
    FROM predictions
    WHERE :all OR store IN (SELECT value FROM json_each(:stores))
    ORDER BY id
"""
_SIGNALS_OF_STORES = """
    SELECT v.id, v.prediction_id, v.signal, v.detail, v.session, v.created_at
    FROM prediction_provenance AS v JOIN predictions AS p ON p.id = v.prediction_id
    WHERE :all OR p.store IN (SELECT value FROM json_each(:stores))
    ORDER BY v.created_at, v.id
"""
_FIRES_OF_STORES = """
    SELECT f.id, f.session, f.prediction_id, f.confidence, f.score, f.fired_at
    FROM prediction_fires AS f JOIN predictions AS p ON p.id = f.prediction_id
    WHERE :all OR p.store IN (SELECT value FROM json_each(:stores))
    ORDER BY f.fired_at, f.id
"""
# A fire of a prediction deleted since it was shown is dropped, not an error:
# the showing no longer calibrates anything.
_INSERT_FIRE = """
    INSERT INTO prediction_fires (session, prediction_id, confidence, score, fired_at)
    SELECT :session, :id, :confidence, :score, :when
    WHERE EXISTS (SELECT 1 FROM predictions WHERE id = :id)
"""

# Rows written as another storage kept them (thatch migrate).
_RESTORE_MATCHER = """
    INSERT INTO prediction_matchers (store, description, model, embedding, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?)
"""
_RESTORE_PREDICTION = """
    INSERT INTO predictions (store, statement, rationale, model, embedding, confirm_count,
        disconfirm_count, prior, confidence, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_RESTORE_PROVENANCE = """
    INSERT INTO prediction_provenance (prediction_id, signal, detail, session, created_at)
    VALUES (?, ?, ?, ?, ?)
"""
_EMBEDDINGS: dict[DecisionKind, str] = {
    "matcher": "SELECT id, embedding FROM prediction_matchers"
    " WHERE model = ? AND id IN (SELECT value FROM json_each(?))",
    "prediction": "SELECT id, embedding FROM predictions"
    " WHERE model = ? AND id IN (SELECT value FROM json_each(?))",
}

# What the vector cache loads and re-reads, per kind of row.
_SET_EMBEDDING: dict[DecisionKind, str] = {
    "matcher": "UPDATE prediction_matchers SET model = ?, embedding = ? WHERE id = ?",
    "prediction": "UPDATE predictions SET model = ?, embedding = ? WHERE id = ?",
}
_LOAD: dict[DecisionKind, str] = {
    "matcher": "SELECT id, store, embedding FROM prediction_matchers WHERE model = ?",
    "prediction": "SELECT id, store, embedding FROM predictions WHERE model = ?",
}
_REREAD: dict[DecisionKind, str] = {
    "matcher": "SELECT id, store, model, embedding FROM prediction_matchers"
    " WHERE id IN (SELECT value FROM json_each(?))",
    "prediction": "SELECT id, store, model, embedding FROM predictions"
    " WHERE id IN (SELECT value FROM json_each(?))",
}


class DecisionCache(Follower):
    """Matcher and prediction vectors of one connection. The caller holds its lock.

    Evidence, edges and fires change no vector and log nothing, so the
    commits that queries (fires) and feedback (evidence) make cost the next
    search one look at the log's bounds, never a re-read.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._indexes: dict[DecisionKind, VectorIndex] = {
            "matcher": VectorIndex(),
            "prediction": VectorIndex(),
        }
        # Last decision_changes entry applied.
        self._seq = 0

    def clear(self) -> None:
        super().clear()
        for index in self._indexes.values():
            index.clear()

    def index(self, kind: DecisionKind, model: str) -> VectorIndex:
        """The ``kind`` index, current and with ``model`` loaded."""
        self._sync()
        index = self._indexes[kind]
        if not index.loaded(model):
            # Read after _sync, as SearchCache.vectors does.
            rows = self._conn.execute(_LOAD[kind], (model,)).fetchall()
            ids, stores, blobs = zip(*rows, strict=True) if rows else ((),) * 3
            index.load(model, ids, stores, (None,) * len(ids), blobs)
        return index

    def _catch_up(self) -> None:
        oldest, latest = self._conn.execute(
            "SELECT coalesce(min(seq), 0), coalesce(max(seq), 0) FROM decision_changes"
        ).fetchone()
        if latest == self._seq:
            return
        if oldest > self._seq + 1:
            # The log was trimmed past what this handle saw: start over.
            for index in self._indexes.values():
                index.clear()
        else:
            changed: dict[DecisionKind, list[int]] = {"matcher": [], "prediction": []}
            for kind, row_id in self._conn.execute(
                "SELECT DISTINCT kind, row_id FROM decision_changes WHERE seq > ?", (self._seq,)
            ):
                changed[kind].append(row_id)
            for kind, row_ids in changed.items():
                if row_ids and self._indexes[kind].loaded():
                    self._apply(kind, row_ids)
        self._seq = latest

    def _apply(self, kind: DecisionKind, row_ids: list[int]) -> None:
        index = self._indexes[kind]
        gone = set(row_ids)
        for row_id, store, model, blob in self._conn.execute(_REREAD[kind], (json.dumps(row_ids),)):
            gone.discard(row_id)
            # put() moves a row whose store or model changed.
            index.put(row_id, store, model, None, from_blob(blob))
        for row_id in gone:  # deleted
            index.remove(row_id)


class DecisionsMixin:
    """:class:`thatch.plugin.decision_storage.DecisionStorage` on SQLiteStorage's connection."""

    if TYPE_CHECKING:
        _lock: threading.RLock
        _decision_cache: DecisionCache
        _fetchone: Callable[[str, Sequence[Any]], Any]
        _fetchall: Callable[[str, Sequence[Any] | dict[str, Any]], list[Any]]

        def _write(
            self, *, bookkeeping: bool = False
        ) -> AbstractContextManager[sqlite3.Connection]: ...

    # -- writes ------------------------------------------------------------
    def add_matcher(self, store: str, description: str, model: str, embedding: Vector) -> Matcher:
        row_id, when = self._insert(
            "INSERT INTO prediction_matchers"
            " (store, description, model, embedding, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (store, description, model, to_blob(as_vector(embedding))),
        )
        return Matcher(row_id, store, description, model, when, when)

    def add_prediction(
        self,
        store: str,
        statement: str,
        rationale: str,
        model: str,
        embedding: Vector,
        prior: float,
    ) -> Prediction:
        prior = float(prior)
        row_id, when = self._insert(
            "INSERT INTO predictions (store, statement, rationale, model, embedding,"
            " prior, confidence, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (store, statement, rationale, model, to_blob(as_vector(embedding)), prior, prior),
        )
        return Prediction(
            id=row_id,
            store=store,
            statement=statement,
            rationale=rationale,
            model=model,
            confirm_count=0.0,
            disconfirm_count=0.0,
            prior=prior,
            confidence=prior,
            created_at=when,
            updated_at=when,
        )

    def link(self, matcher_id: int, prediction_id: int, weight: float = 1.0) -> bool:
        with self._write() as conn:
            found = conn.execute("SELECT 1 FROM prediction_matchers WHERE id = ?", (matcher_id,))
            if found.fetchone() is None:
                raise sql_rows.not_found("matcher", matcher_id)
            _require_prediction(conn, prediction_id)
            cursor = conn.execute(
                "INSERT OR IGNORE INTO prediction_edges"
                " (matcher_id, prediction_id, weight, created_at) VALUES (?, ?, ?, ?)",
                (int(matcher_id), int(prediction_id), float(weight), time.time()),
            )
            return cursor.rowcount > 0

    def add_evidence(
        self,
        prediction_id: int,
        *,
        signal: Signal,
        confirm: float,
        disconfirm: float,
        detail: str,
        session: str | None,
        when: datetime,
        rule: ConfidenceRule,
    ) -> Prediction:
        sql_rows.check_signal(signal)
        stamp = when.timestamp()
        with self._write() as conn:
            counts = _require_prediction(conn, prediction_id)
            confirm_count = counts[0] + float(confirm)
            disconfirm_count = counts[1] + float(disconfirm)
            confidence = float(rule(confirm_count, disconfirm_count, counts[2]))
            conn.execute(
                "UPDATE predictions SET confirm_count = ?, disconfirm_count = ?, confidence = ?,"
                " updated_at = ? WHERE id = ?",
                (confirm_count, disconfirm_count, confidence, stamp, prediction_id),
            )
            conn.execute(
                "INSERT INTO prediction_provenance"
                " (prediction_id, signal, detail, session, created_at) VALUES (?, ?, ?, ?, ?)",
                (prediction_id, signal, detail, session, stamp),
            )
            row = conn.execute(_PREDICTION_BY_ID, (prediction_id,)).fetchone()
        return _prediction(row)

    def set_decision_embeddings(
        self, kind: DecisionKind, model: str, vectors: Sequence[tuple[int, Vector]]
    ) -> None:
        rows = [(model, to_blob(as_vector(v)), int(row_id)) for row_id, v in vectors]
        if not rows:
            return
        with self._write() as conn:
            # The change triggers log each row, so every handle's cache follows.
            conn.executemany(_SET_EMBEDDING[kind], rows)

    def restore_matchers(self, items: Sequence[tuple[Matcher, Vector]]) -> list[Matcher]:
        rows = [
            (
                m.store,
                m.description,
                m.model,
                to_blob(as_vector(vector)),
                m.created_at.timestamp(),
                m.updated_at.timestamp(),
            )
            for m, vector in items
        ]
        if not rows:
            return []
        with self._write() as conn:
            ids = [_inserted(conn.execute(_RESTORE_MATCHER, row)) for row in rows]
            found = conn.execute(_MATCHERS_BY_ID, (json_ids(ids),)).fetchall()
        by_id = {row[0]: _matcher(row) for row in found}
        return [by_id[row_id] for row_id in ids]

    def restore_predictions(
        self, items: Sequence[tuple[Prediction, Vector, Sequence[Provenance]]]
    ) -> list[Prediction]:
        prepared = [
            (_restored_prediction(p, as_vector(vector)), [_restored_entry(e) for e in trail])
            for p, vector, trail in items
        ]
        if not prepared:
            return []
        ids: list[int] = []
        with self._write() as conn:
            for row, trail in prepared:
                row_id = _inserted(conn.execute(_RESTORE_PREDICTION, row))
                conn.executemany(_RESTORE_PROVENANCE, [(row_id, *entry) for entry in trail])
                ids.append(row_id)
            found = conn.execute(_PREDICTIONS_BY_ID, (json_ids(ids),)).fetchall()
        by_id = {row[0]: _prediction(row) for row in found}
        return [by_id[row_id] for row_id in ids]

    def delete_prediction(self, prediction_id: int) -> bool:
        with self._write() as conn:
            # Edges, provenance and fires go with it through ON DELETE CASCADE.
            cursor = conn.execute("DELETE FROM predictions WHERE id = ?", (prediction_id,))
        return cursor.rowcount > 0

    def delete_matcher(self, matcher_id: int) -> bool:
        with self._write() as conn:
            # Its edges go with it; the predictions stay.
            cursor = conn.execute("DELETE FROM prediction_matchers WHERE id = ?", (matcher_id,))
        return cursor.rowcount > 0

    def record_fires(
        self, session: str | None, fires: Sequence[tuple[int, float, float]], when: datetime
    ) -> None:
        rows = sql_rows.fire_params(session, fires, when.timestamp())
        if not rows:
            return
        with self._write(bookkeeping=True) as conn:
            conn.executemany(_INSERT_FIRE, rows)

    # -- reads -------------------------------------------------------------
    def decision_embeddings(
        self, kind: DecisionKind, ids: Iterable[int], model: str
    ) -> dict[int, Vector]:
        rows = self._fetchall(_EMBEDDINGS[kind], (model, json_ids(ids)))
        return {row_id: from_blob(blob) for row_id, blob in rows}

    def has_matchers(self, stores: Sequence[str]) -> bool:
        # One probe of the store index, whatever the number of matchers.
        row = self._fetchone(
            "SELECT EXISTS (SELECT 1 FROM prediction_matchers"
            " WHERE store IN (SELECT value FROM json_each(?)))",
            (json.dumps(list(stores)),),
        )
        return bool(row[0])

    def nearest_matchers(
        self, query: Vector, model: str, stores: Sequence[str], limit: int
    ) -> list[ScoredId]:
        return self._nearest("matcher", query, model, stores, limit)

    def nearest_predictions(
        self, query: Vector, model: str, stores: Sequence[str], limit: int
    ) -> list[ScoredId]:
        return self._nearest("prediction", query, model, stores, limit)

    def edges_from(self, matcher_ids: Iterable[int]) -> list[Edge]:
        rows = self._fetchall(
            "SELECT matcher_id, prediction_id, weight FROM prediction_edges"
            " WHERE matcher_id IN (SELECT value FROM json_each(?))"
            " ORDER BY matcher_id, prediction_id",
            (json_ids(matcher_ids),),
        )
        return [Edge(*row) for row in rows]

    def edges_to(self, prediction_id: int) -> list[Edge]:
        rows = self._fetchall(
            "SELECT matcher_id, prediction_id, weight FROM prediction_edges"
            " WHERE prediction_id = ? ORDER BY matcher_id",
            (prediction_id,),
        )
        return [Edge(*row) for row in rows]

    def get_matchers(self, ids: Iterable[int]) -> dict[int, Matcher]:
        rows = self._fetchall(_MATCHERS_BY_ID, (json_ids(ids),))
        return {matcher.id: matcher for matcher in map(_matcher, rows)}

    def get_predictions(self, ids: Iterable[int]) -> dict[int, Prediction]:
        rows = self._fetchall(_PREDICTIONS_BY_ID, (json_ids(ids),))
        return {prediction.id: prediction for prediction in map(_prediction, rows)}

    def list_predictions(self, stores: Sequence[str] | None = None) -> list[Prediction]:
        return [_prediction(row) for row in self._fetchall(_PREDICTIONS_OF_STORES, _of(stores))]

    def list_matchers(self, stores: Sequence[str] | None = None) -> list[Matcher]:
        return [_matcher(row) for row in self._fetchall(_MATCHERS_OF_STORES, _of(stores))]

    def provenance(self, prediction_id: int) -> list[Provenance]:
        rows = self._fetchall(
            "SELECT id, prediction_id, signal, detail, session, created_at"
            " FROM prediction_provenance WHERE prediction_id = ? ORDER BY created_at, id",
            (prediction_id,),
        )
        return [_provenance(row) for row in rows]

    def signals(self, stores: Sequence[str] | None = None) -> list[Provenance]:
        return [_provenance(row) for row in self._fetchall(_SIGNALS_OF_STORES, _of(stores))]

    def evidence_totals(self, store: str) -> tuple[float, float]:
        confirm, disconfirm = self._fetchone(
            "SELECT total(confirm_count), total(disconfirm_count) FROM predictions WHERE store = ?",
            (store,),
        )
        return float(confirm), float(disconfirm)

    def fires(self, stores: Sequence[str] | None = None) -> list[Fire]:
        rows = self._fetchall(_FIRES_OF_STORES, _of(stores))
        return [_fire(row) for row in rows]

    # -- internals ---------------------------------------------------------
    def _insert(self, sql: str, values: tuple[Any, ...]) -> tuple[int, datetime]:
        """Insert one row, ``values`` then now as created_at and updated_at; its id and now."""
        with self._write() as conn:
            now = time.time()
            cursor = conn.execute(sql, (*values, now, now))
        assert cursor.lastrowid is not None
        return cursor.lastrowid, to_time(now)

    def _nearest(
        self, kind: DecisionKind, query: Vector, model: str, stores: Sequence[str], limit: int
    ) -> list[ScoredId]:
        if not stores or limit <= 0:
            return []
        vector = np.ascontiguousarray(query, dtype=np.float32)
        with self._lock:
            index = self._decision_cache.index(kind, model)
            hits = index.search(vector, model, stores, None, limit)
        return [ScoredId(row_id, score) for row_id, score in hits]


def _require_prediction(conn: sqlite3.Connection, prediction_id: int) -> tuple[float, float, float]:
    """The prediction's (confirm_count, disconfirm_count, prior); NotFoundError when missing."""
    row: tuple[float, float, float] | None = conn.execute(
        "SELECT confirm_count, disconfirm_count, prior FROM predictions WHERE id = ?",
        (prediction_id,),
    ).fetchone()
    if row is None:
        raise sql_rows.not_found("prediction", prediction_id)
    return row


def _inserted(cursor: sqlite3.Cursor) -> int:
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _restored_prediction(p: Prediction, vector: Vector) -> tuple[Any, ...]:
    return (
        p.store,
        p.statement,
        p.rationale,
        p.model,
        to_blob(vector),
        float(p.confirm_count),
        float(p.disconfirm_count),
        float(p.prior),
        float(p.confidence),
        p.created_at.timestamp(),
        p.updated_at.timestamp(),
    )


def _restored_entry(entry: Provenance) -> tuple[Any, ...]:
    sql_rows.check_signal(entry.signal)
    return (entry.signal, entry.detail, entry.session, entry.created_at.timestamp())


def _of(stores: Sequence[str] | None) -> dict[str, Any]:
    """Parameters of the ``*_OF_STORES`` queries: these stores, or all when None."""
    return {"all": stores is None, "stores": json.dumps(list(stores or ()))}


# Times are stored as epoch seconds.
def _matcher(row: Sequence[Any]) -> Matcher:
    return sql_rows.matcher(row, to_time)


def _prediction(row: Sequence[Any]) -> Prediction:
    return sql_rows.prediction(row, to_time)


def _provenance(row: Sequence[Any]) -> Provenance:
    return sql_rows.provenance(row, to_time)


def _fire(row: Sequence[Any]) -> Fire:
    return sql_rows.fire(row, to_time)
