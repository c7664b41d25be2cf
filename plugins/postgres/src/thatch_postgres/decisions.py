"""The decision model on the server: matchers, predictions, edges, provenance, fires.

:class:`DecisionsMixin` gives :class:`~thatch_postgres.storage.PostgresStorage`
the methods of :class:`thatch.plugin.DecisionStorage`.

Feedback from two machines at once must all count. So evidence adds to the
counts in the database (``SET confirm_count = confirm_count + %s``) and the
confidence is computed from the counts that statement returns, while the
updated row stays locked until the transaction commits: a second machine's
evidence waits, then adds to the first one's counts, never to a stale copy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from psycopg import errors
from thatch.plugin import DecisionKind, Edge, Matcher, NotFoundError, Prediction, ScoredId, sql_rows

from thatch_postgres.pooled import Once, Pooled
from thatch_postgres.text import storable
from thatch_postgres.vectors import ModelVectors, Table, VectorCache, from_bytes, to_bytes

if TYPE_CHECKING:
    from typing import LiteralString

    from thatch.plugin import ConfidenceRule, Fire, Provenance, Signal, Vector

    from thatch_postgres.connect import Connection

# Column lists in the order thatch.plugin.sql_rows reads them.
_ADD_MATCHER = """
    INSERT INTO prediction_matchers (store, description, model, embedding, created_at, updated_at)
    VALUES (%s, %s, %s, %s, now(), now())
    RETURNING id, store, description, model, created_at, updated_at
"""
_ADD_PREDICTION = """
    INSERT INTO predictions (store, statement, rationale, model, embedding, prior, confidence,
        created_at, updated_at)
    VALUES (%(store)s, %(statement)s, %(rationale)s, %(model)s, %(embedding)s, %(prior)s,
        %(prior)s, now(), now())
    RETURNING id, store, statement, rationale, model, confirm_count, disconfirm_count, prior,
        confidence, created_at, updated_at
"""
_MATCHERS_BY_ID = """
    SELECT id, store, description, model, created_at, updated_at
    FROM prediction_matchers WHERE id = ANY(%s)
"""
_MATCHERS_OF_STORES = """
    SELECT id, store, description, model, created_at, updated_at
    FROM prediction_matchers WHERE %(all)s OR store = ANY(%(stores)s) ORDER BY id
"""
_PREDICTIONS_BY_ID = """
    SELECT id, store, statement, rationale, model, confirm_count, disconfirm_count, prior,
        confidence, created_at, updated_at
    FROM predictions WHERE id = ANY(%s)
"""
_PREDICTIONS_OF_STORES = """
    SELECT id, store, statement, rationale, model, confirm_count, disconfirm_count, prior,
        confidence, created_at, updated_at
    FROM predictions WHERE %(all)s OR store = ANY(%(stores)s) ORDER BY id
"""
# The counts grow in the database; the row stays locked until commit.
_ADD_COUNTS = """
    UPDATE predictions
    SET confirm_count = confirm_count + %(confirm)s,
        disconfirm_count = disconfirm_count + %(disconfirm)s, updated_at = %(when)s
    WHERE id = %(id)s
    RETURNING confirm_count, disconfirm_count, prior
"""
_SET_CONFIDENCE = """
    UPDATE predictions SET confidence = %(confidence)s WHERE id = %(id)s
    RETURNING id, store, statement, rationale, model, confirm_count, disconfirm_count, prior,
        confidence, created_at, updated_at
"""
_SIGNALS_OF_STORES = """
    SELECT v.id, v.prediction_id, v.signal, v.detail, v.session, v.created_at
    FROM prediction_provenance AS v JOIN predictions AS p ON p.id = v.prediction_id
    WHERE %(all)s OR p.store = ANY(%(stores)s)
    ORDER BY v.created_at, v.id
"""
_FIRES_OF_STORES = """
    SELECT f.id, f.session, f.prediction_id, f.confidence, f.score, f.fired_at
    FROM prediction_fires AS f JOIN predictions AS p ON p.id = f.prediction_id
    WHERE %(all)s OR p.store = ANY(%(stores)s)
    ORDER BY f.fired_at, f.id
"""
# A fire of a prediction deleted since it was shown is dropped, not an error.
# FOR KEY SHARE holds the prediction until commit, so a delete on another
# machine cannot slip between the check and the insert.
_INSERT_FIRE = """
    INSERT INTO prediction_fires (session, prediction_id, confidence, score, fired_at)
    SELECT %(session)s, %(id)s, %(confidence)s, %(score)s, %(when)s
    WHERE EXISTS (SELECT 1 FROM predictions WHERE id = %(id)s FOR KEY SHARE)
"""
_LINK = """
    INSERT INTO prediction_edges (matcher_id, prediction_id, weight, created_at)
    VALUES (%s, %s, %s, now())
    ON CONFLICT (matcher_id, prediction_id) DO NOTHING
"""
# Rows as another storage kept them (thatch migrate): every field given.
_RESTORE_MATCHER = """
    INSERT INTO prediction_matchers (store, description, model, embedding, created_at, updated_at)
    VALUES (%s, %s, %s, %s, %s, %s)
    RETURNING id, store, description, model, created_at, updated_at
"""
_RESTORE_PREDICTION = """
    INSERT INTO predictions (store, statement, rationale, model, embedding, confirm_count,
        disconfirm_count, prior, confidence, created_at, updated_at)
    VALUES (%(store)s, %(statement)s, %(rationale)s, %(model)s, %(embedding)s,
        %(confirm_count)s, %(disconfirm_count)s, %(prior)s, %(confidence)s, %(created_at)s,
        %(updated_at)s)
    RETURNING id, store, statement, rationale, model, confirm_count, disconfirm_count, prior,
        confidence, created_at, updated_at
"""
_RESTORE_PROVENANCE = """
    INSERT INTO prediction_provenance (prediction_id, signal, detail, session, created_at)
    VALUES (%s, %s, %s, %s, %s)
"""
_EMBEDDINGS: dict[DecisionKind, LiteralString] = {
    "matcher": "SELECT id, embedding FROM prediction_matchers WHERE model = %s AND id = ANY(%s)",
    "prediction": "SELECT id, embedding FROM predictions WHERE model = %s AND id = ANY(%s)",
}
_SET_EMBEDDING: dict[DecisionKind, LiteralString] = {
    "matcher": "UPDATE prediction_matchers SET model = %s, embedding = %s,"
    " rev = nextval('decision_rev') WHERE id = %s",
    "prediction": "UPDATE predictions SET model = %s, embedding = %s,"
    " rev = nextval('decision_rev') WHERE id = %s",
}


class DecisionsMixin(Pooled):
    """:class:`thatch.plugin.DecisionStorage` on PostgresStorage's pool."""

    if TYPE_CHECKING:
        _cache_lock: threading.Lock
        _decision_caches: dict[DecisionKind, VectorCache]
        _vectors: Callable[[VectorCache, str, str], ModelVectors]

    # -- writes ------------------------------------------------------------
    def add_matcher(self, store: str, description: str, model: str, embedding: Vector) -> Matcher:
        params = (store, storable(description, "a situation"), model, to_bytes(embedding))

        def add(conn: Connection) -> Matcher:
            row = conn.execute(_ADD_MATCHER, params).fetchone()
            assert row is not None
            return sql_rows.matcher(row)

        # Adds a row: a retry after a lost commit answers with the one saved.
        return self._write("add a matcher", add, vectors="matchers", once=_MATCHER_ONCE)

    def add_prediction(
        self,
        store: str,
        statement: str,
        rationale: str,
        model: str,
        embedding: Vector,
        prior: float,
    ) -> Prediction:
        params = {
            "store": store,
            "statement": storable(statement, "a prediction"),
            "rationale": storable(rationale, "a prediction's rationale"),
            "model": model,
            "embedding": to_bytes(embedding),
            "prior": float(prior),
        }

        def add(conn: Connection) -> Prediction:
            row = conn.execute(_ADD_PREDICTION, params).fetchone()
            assert row is not None
            return sql_rows.prediction(row)

        return self._write("add a prediction", add, vectors="predictions", once=_PREDICTION_ONCE)

    def link(self, matcher_id: int, prediction_id: int, weight: float = 1.0) -> bool:
        def link(conn: Connection) -> bool:
            found = conn.execute(
                "SELECT 1 FROM prediction_matchers WHERE id = %s", (int(matcher_id),)
            ).fetchone()
            if found is None:
                raise sql_rows.not_found("matcher", matcher_id)
            found = conn.execute(
                "SELECT 1 FROM predictions WHERE id = %s", (int(prediction_id),)
            ).fetchone()
            if found is None:
                raise sql_rows.not_found("prediction", prediction_id)
            cursor = conn.execute(_LINK, (int(matcher_id), int(prediction_id), float(weight)))
            return cursor.rowcount > 0

        try:
            # ON CONFLICT: run again, it adds nothing (and answers False).
            return self._write("link a matcher", link)
        except errors.ForeignKeyViolation as exc:
            # Deleted on another machine between the check and the insert.
            raise NotFoundError(
                f"matcher {matcher_id} or prediction {prediction_id} was just deleted"
            ) from exc

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
        counts = {
            "id": int(prediction_id),
            "confirm": float(confirm),
            "disconfirm": float(disconfirm),
            "when": when,
        }
        trail = (int(prediction_id), signal, storable(detail, "feedback"), session, when)

        # A failing rule raises inside the transaction: nothing is written.
        def add(conn: Connection) -> Prediction:
            added = conn.execute(_ADD_COUNTS, counts).fetchone()
            if added is None:
                raise sql_rows.not_found("prediction", prediction_id)
            confidence = float(rule(*added))
            conn.execute(
                "INSERT INTO prediction_provenance"
                " (prediction_id, signal, detail, session, created_at)"
                " VALUES (%s, %s, %s, %s, %s)",
                trail,
            )
            row = conn.execute(
                _SET_CONFIDENCE, {"confidence": confidence, "id": int(prediction_id)}
            ).fetchone()
            assert row is not None
            return sql_rows.prediction(row)

        # The counts add: a retry after a lost commit must not add them twice.
        again = Once(lambda conn, _row: _prediction(conn, int(prediction_id)))
        return self._write("record feedback", add, once=again)

    def set_decision_embeddings(
        self, kind: DecisionKind, model: str, vectors: Sequence[tuple[int, Vector]]
    ) -> None:
        rows = [(model, to_bytes(vector), int(row_id)) for row_id, vector in vectors]
        if not rows:
            return
        table: Table = "matchers" if kind == "matcher" else "predictions"

        def replace(conn: Connection) -> None:
            with conn.cursor() as cursor:
                cursor.executemany(_SET_EMBEDDING[kind], rows)

        self._write("replace vectors", replace, vectors=table)

    def restore_matchers(self, items: Sequence[tuple[Matcher, Vector]]) -> list[Matcher]:
        rows = [
            (
                m.store,
                storable(m.description, "a situation"),
                m.model,
                to_bytes(vector),
                m.created_at,
                m.updated_at,
            )
            for m, vector in items
        ]
        if not rows:
            return []
        # Tried once: a retry after a lost commit would add the rows twice;
        # thatch migrate run again finds what was saved by its keys.
        with self._transaction("restore matchers", "matchers") as conn:
            restored = [conn.execute(_RESTORE_MATCHER, row).fetchone() for row in rows]
        return [sql_rows.matcher(row) for row in restored if row is not None]

    def restore_predictions(
        self, items: Sequence[tuple[Prediction, Vector, Sequence[Provenance]]]
    ) -> list[Prediction]:
        prepared = [
            (_restored_prediction(p, vector), [_restored_entry(e) for e in trail])
            for p, vector, trail in items
        ]
        if not prepared:
            return []
        restored: list[Prediction] = []
        # Tried once, as restore_matchers.
        with self._transaction("restore predictions", "predictions") as conn:
            for params, trail in prepared:
                row = conn.execute(_RESTORE_PREDICTION, params).fetchone()
                assert row is not None
                restored.append(sql_rows.prediction(row))
                if trail:
                    with conn.cursor() as cursor:
                        cursor.executemany(
                            _RESTORE_PROVENANCE, [(row[0], *entry) for entry in trail]
                        )
        return restored

    def delete_prediction(self, prediction_id: int) -> bool:
        # Edges, provenance and fires go with it through ON DELETE CASCADE.
        return self._write(
            "delete a prediction",
            lambda conn: _deleted(conn, "DELETE FROM predictions WHERE id = %s", prediction_id),
            vectors="predictions",
        )

    def delete_matcher(self, matcher_id: int) -> bool:
        # Its edges go with it; the predictions stay.
        return self._write(
            "delete a matcher",
            lambda conn: _deleted(
                conn, "DELETE FROM prediction_matchers WHERE id = %s", matcher_id
            ),
            vectors="matchers",
        )

    def record_fires(
        self, session: str | None, fires: Sequence[tuple[int, float, float]], when: datetime
    ) -> None:
        rows = sql_rows.fire_params(session, fires, when)
        if not rows:
            return

        def log(conn: Connection) -> None:
            with conn.cursor() as cursor:
                cursor.executemany(_INSERT_FIRE, rows)

        # Each fire is a row: a retry after a lost commit must not log them twice.
        self._write("log shown predictions", log, once=Once(lambda _conn, _row: None))

    # -- reads -------------------------------------------------------------
    def decision_embeddings(
        self, kind: DecisionKind, ids: Iterable[int], model: str
    ) -> dict[int, Vector]:
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        rows = self._rows(_EMBEDDINGS[kind], (model, wanted))
        return {row_id: from_bytes(blob) for row_id, blob in rows}

    def has_matchers(self, stores: Sequence[str]) -> bool:
        rows = self._rows(
            "SELECT EXISTS (SELECT 1 FROM prediction_matchers WHERE store = ANY(%s))",
            (list(stores),),
        )
        return bool(rows[0][0])

    def nearest_matchers(
        self, query: Vector, model: str, stores: Sequence[str], limit: int
    ) -> list[ScoredId]:
        return self._nearest("matcher", query, model, stores, limit)

    def nearest_predictions(
        self, query: Vector, model: str, stores: Sequence[str], limit: int
    ) -> list[ScoredId]:
        return self._nearest("prediction", query, model, stores, limit)

    def edges_from(self, matcher_ids: Iterable[int]) -> list[Edge]:
        wanted = [int(i) for i in matcher_ids]
        if not wanted:
            return []
        rows = self._rows(
            "SELECT matcher_id, prediction_id, weight FROM prediction_edges"
            " WHERE matcher_id = ANY(%s) ORDER BY matcher_id, prediction_id",
            (wanted,),
        )
        return [Edge(*row) for row in rows]

    def edges_to(self, prediction_id: int) -> list[Edge]:
        rows = self._rows(
            "SELECT matcher_id, prediction_id, weight FROM prediction_edges"
            " WHERE prediction_id = %s ORDER BY matcher_id",
            (int(prediction_id),),
        )
        return [Edge(*row) for row in rows]

    def get_matchers(self, ids: Iterable[int]) -> dict[int, Matcher]:
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        return {row[0]: sql_rows.matcher(row) for row in self._rows(_MATCHERS_BY_ID, (wanted,))}

    def get_predictions(self, ids: Iterable[int]) -> dict[int, Prediction]:
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        rows = self._rows(_PREDICTIONS_BY_ID, (wanted,))
        return {row[0]: sql_rows.prediction(row) for row in rows}

    def list_predictions(self, stores: Sequence[str] | None = None) -> list[Prediction]:
        return [sql_rows.prediction(row) for row in self._rows(_PREDICTIONS_OF_STORES, _of(stores))]

    def list_matchers(self, stores: Sequence[str] | None = None) -> list[Matcher]:
        return [sql_rows.matcher(row) for row in self._rows(_MATCHERS_OF_STORES, _of(stores))]

    def provenance(self, prediction_id: int) -> list[Provenance]:
        rows = self._rows(
            "SELECT id, prediction_id, signal, detail, session, created_at"
            " FROM prediction_provenance WHERE prediction_id = %s ORDER BY created_at, id",
            (int(prediction_id),),
        )
        return [sql_rows.provenance(row) for row in rows]

    def signals(self, stores: Sequence[str] | None = None) -> list[Provenance]:
        return [sql_rows.provenance(row) for row in self._rows(_SIGNALS_OF_STORES, _of(stores))]

    def evidence_totals(self, store: str) -> tuple[float, float]:
        [(confirm, disconfirm)] = self._rows(
            "SELECT coalesce(sum(confirm_count), 0), coalesce(sum(disconfirm_count), 0)"
            " FROM predictions WHERE store = %s",
            (store,),
        )
        return float(confirm), float(disconfirm)

    def fires(self, stores: Sequence[str] | None = None) -> list[Fire]:
        return [sql_rows.fire(row) for row in self._rows(_FIRES_OF_STORES, _of(stores))]

    # -- internals ---------------------------------------------------------
    def _nearest(
        self, kind: DecisionKind, query: Vector, model: str, stores: Sequence[str], limit: int
    ) -> list[ScoredId]:
        if not stores or limit <= 0:
            return []
        vector = np.ascontiguousarray(query, dtype=np.float32)
        cache = self._decision_caches[kind]
        hits = self._vectors(cache, model, "search the decision model").search(
            vector, stores, None, limit
        )
        return [ScoredId(row_id, score) for row_id, score in hits]


def _restored_prediction(p: Prediction, vector: Vector) -> dict[str, Any]:
    return {
        "store": p.store,
        "statement": storable(p.statement, "a prediction"),
        "rationale": storable(p.rationale, "a prediction's rationale"),
        "model": p.model,
        "embedding": to_bytes(vector),
        "confirm_count": float(p.confirm_count),
        "disconfirm_count": float(p.disconfirm_count),
        "prior": float(p.prior),
        "confidence": float(p.confidence),
        "created_at": p.created_at,
        "updated_at": p.updated_at,
    }


def _restored_entry(entry: Provenance) -> tuple[Any, ...]:
    sql_rows.check_signal(entry.signal)
    return (entry.signal, storable(entry.detail, "feedback"), entry.session, entry.created_at)


def _prediction(conn: Connection, prediction_id: int) -> Prediction:
    row = conn.execute(_PREDICTIONS_BY_ID, ([prediction_id],)).fetchone()
    if row is None:
        # Deleted on another machine since this write was saved.
        raise sql_rows.not_found("prediction", prediction_id)
    return sql_rows.prediction(row)


def _matcher(conn: Connection, matcher_id: int) -> Matcher:
    row = conn.execute(_MATCHERS_BY_ID, ([matcher_id],)).fetchone()
    if row is None:
        raise sql_rows.not_found("matcher", matcher_id)
    return sql_rows.matcher(row)


def _saved_row(row_id: int | None) -> int:
    assert row_id is not None, "an added row is named with its request"
    return row_id


# How add_matcher and add_prediction answer a retry that finds their row saved.
_MATCHER_ONCE: Once[Matcher] = Once(
    lambda conn, row: _matcher(conn, _saved_row(row)), row=lambda matcher: matcher.id
)
_PREDICTION_ONCE: Once[Prediction] = Once(
    lambda conn, row: _prediction(conn, _saved_row(row)), row=lambda prediction: prediction.id
)


def _deleted(conn: Connection, statement: LiteralString, row_id: int) -> bool:
    """Whether ``statement`` deleted the row; run again after a lost commit it answers False."""
    return conn.execute(statement, (int(row_id),)).rowcount > 0


def _of(stores: Sequence[str] | None) -> dict[str, Any]:
    """Parameters of the ``*_OF_STORES`` queries: these stores, or all when None."""
    return {"all": stores is None, "stores": list(stores or ())}
