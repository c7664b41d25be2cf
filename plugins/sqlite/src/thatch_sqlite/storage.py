"""SQLiteStorage: thatch's memories, decision model and prediction log in one SQLite file.

Every write runs in ``BEGIN IMMEDIATE``: it takes the write lock up front, so
concurrent writers (hooks, the CLI, a daemon) queue on the busy timeout
instead of failing with a lock-upgrade deadlock. Lists of stores or ids are
passed as one JSON parameter and expanded with ``json_each``: no SQL is ever
built from input, and no list is too long for the parameter limit.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
from thatch.plugin import (
    Memory,
    NewMemory,
    Scope,
    ScoredId,
    StorageError,
    StoreInfo,
    WriteResult,
    sql_rows,
)

from thatch_sqlite import fts
from thatch_sqlite.cache import SearchCache
from thatch_sqlite.codec import as_vector, from_blob, json_ids, to_blob, to_time
from thatch_sqlite.connect import DEFAULT_MMAP_BYTES, open_database
from thatch_sqlite.decisions import DecisionCache, DecisionsMixin
from thatch_sqlite.prediction_log import PredictionLogMixin
from thatch_sqlite.scrub import scrub_index

if TYPE_CHECKING:
    from thatch.plugin import Matrix, Vector, Verdict

# The memory queries list the columns in the order thatch.plugin.sql_rows reads them.
# Those with a sub-select are written out whole: SQL is never assembled at
# run time, not even from constants.
_MEMORY = (
    "SELECT id, store, label, content, branch, archived, model, created_at, updated_at,"
    " recall_count, last_recalled_at FROM memories"
)
_MEMORIES_BY_ID = """
    SELECT id, store, label, content, branch, archived, model, created_at, updated_at,
        recall_count, last_recalled_at
    FROM memories WHERE id IN (SELECT value FROM json_each(?))
"""
_MEMORIES_OF_STORES = """
    SELECT id, store, label, content, branch, archived, model, created_at, updated_at,
        recall_count, last_recalled_at
    FROM memories
    WHERE (:all OR store IN (SELECT value FROM json_each(:stores))) AND (:archived OR archived = 0)
    ORDER BY store, label
"""
# bm25 weights (label 4, content 1): a word in the label says more. The id
# breaks ties so that the order is stable.
_TEXT_SEARCH = """
    SELECT m.id, bm25(memories_fts, 4.0, 1.0) AS score
    FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid
    WHERE memories_fts MATCH ?
      AND (? OR m.archived = 0)
      AND m.store IN (SELECT value FROM json_each(?))
      AND (m.branch IS NULL OR m.branch = ?)
    ORDER BY score, m.id
    LIMIT ?
"""
_RESTORE = """
    INSERT INTO memories (store, label, content, branch, archived, model, embedding,
        created_at, updated_at, recall_count, last_recalled_at)
    VALUES (:store, :label, :content, :branch, :archived, :model, :embedding,
        :created_at, :updated_at, :recall_count, :last_recalled_at)
    ON CONFLICT (store, label) DO NOTHING
"""
# The best of every match first, each marked in scope or not: when most
# matches are in scope this skips reading the memory row of every match (about
# half of what the joined search costs), and it is exact whenever enough of the
# best are in scope or there are no more matches (see text_search).
_TEXT_SEARCH_BEST = """
    SELECT f.id, f.score, m.id IS NOT NULL
    FROM (
        SELECT rowid AS id, bm25(memories_fts, 4.0, 1.0) AS score
        FROM memories_fts WHERE memories_fts MATCH ?
        ORDER BY score, id
        LIMIT ?
    ) AS f
    LEFT JOIN memories AS m ON m.id = f.id
      AND (? OR m.archived = 0)
      AND m.store IN (SELECT value FROM json_each(?))
      AND (m.branch IS NULL OR m.branch = ?)
    ORDER BY f.score, f.id
"""
#: How many times the results asked for :data:`_TEXT_SEARCH_BEST` reads.
_BEST_FACTOR = 2
# The vector index holds unarchived memories only; the few archived ones a
# search asks for are compared one by one.
_ARCHIVED_VECTORS = """
    SELECT id, embedding FROM memories
    WHERE archived = 1 AND model = ?
      AND store IN (SELECT value FROM json_each(?))
      AND (branch IS NULL OR branch = ?)
"""


class SQLiteStorage(DecisionsMixin, PredictionLogMixin):
    """thatch's default storage, one SQLite file that keeps every part.

    One object is at once the :class:`thatch.plugin.MemoryStorage`, the
    :class:`thatch.plugin.DecisionStorage` (methods from
    :class:`DecisionsMixin`) and the :class:`thatch.plugin.PredictionStorage`
    (from :class:`PredictionLogMixin`): the plugin hands the same object to
    every part kept in sqlite, and core closes it once.

    Safe to share between threads: one connection, guarded by a lock.
    """

    backend = "sqlite"

    def __init__(
        self, path: str | os.PathLike[str], *, mmap_bytes: int = DEFAULT_MMAP_BYTES
    ) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn = open_database(self.path, mmap_bytes)
        self._cache = SearchCache(self._conn)
        self._decision_cache = DecisionCache(self._conn)
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> SQLiteStorage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStorage({str(self.path)!r})"

    def close(self) -> None:
        with self._lock:
            self._cache.clear()
            self._decision_cache.clear()
            self._conn.close()
            self._closed = True

    def integrity_problems(self) -> list[str]:
        problems: list[str] = []
        with self._lock:
            try:
                rows = self._conn.execute("PRAGMA integrity_check").fetchall()
                problems += [str(row[0]) for row in rows if row[0] != "ok"]
                problems += [
                    f"a row of {table} refers to a missing row of {parent}"
                    for table, _rowid, parent, _key in self._conn.execute(
                        "PRAGMA foreign_key_check"
                    ).fetchall()
                ]
            except sqlite3.DatabaseError as exc:
                problems.append(f"database check failed: {exc}")
            try:
                # rank 1: also compare the index with the memories table.
                self._conn.execute(
                    "INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)"
                )
            except sqlite3.DatabaseError as exc:
                problems.append(
                    f"full-text index does not match the memories ({exc}); rebuild it with: "
                    f"sqlite3 {shlex.quote(str(self.path))} "
                    "\"INSERT INTO memories_fts(memories_fts) VALUES('rebuild')\""
                )
        return problems

    # -- writes ------------------------------------------------------------
    def write_memories(self, items: Sequence[NewMemory]) -> list[WriteResult]:
        if not items:
            return []
        vectors = [as_vector(item.embedding) for item in items]
        results: list[WriteResult] = []
        with self._write() as conn:
            now = time.time()
            for item, vector in zip(items, vectors, strict=True):
                row = conn.execute(
                    _MEMORY + " WHERE store = ? AND label = ?", (item.store, item.label)
                ).fetchone()
                if row is None:
                    results.append(WriteResult(_create(conn, item, vector, now), "created"))
                    continue
                # BEGIN IMMEDIATE holds the write lock from the first read, so
                # no other writer can take the label between this read and
                # the write: a save without overwrite that finds it taken
                # meanwhile is refused here, and the batch rolled back.
                old = _memory(row)
                if sql_rows.changes_stored(old, item):
                    results.append(WriteResult(_update(conn, old, item, vector, now), "updated"))
                else:
                    results.append(WriteResult(old, "unchanged"))
        return results

    def delete_memory(self, store: str, label: str) -> bool:
        with self._write() as conn:
            # Reviews go with it through ON DELETE CASCADE.
            cursor = conn.execute(
                "DELETE FROM memories WHERE store = ? AND label = ?", (store, label)
            )
            if cursor.rowcount > 0:
                scrub_index(conn)
            return cursor.rowcount > 0

    def set_archived(self, store: str, label: str, archived: bool) -> Memory | None:
        with self._write() as conn:
            # Archiving is not an edit: updated_at stays, as does everything else.
            conn.execute(
                "UPDATE memories SET archived = ? WHERE store = ? AND label = ?",
                (int(archived), store, label),
            )
            row = conn.execute(
                _MEMORY + " WHERE store = ? AND label = ?", (store, label)
            ).fetchone()
        return None if row is None else _memory(row)

    def record_recall(self, ids: Sequence[int], when: datetime) -> None:
        if not ids:
            return
        with self._write(bookkeeping=True) as conn:
            conn.execute(
                "UPDATE memories SET recall_count = recall_count + 1, last_recalled_at = ?"
                " WHERE id IN (SELECT value FROM json_each(?))",
                (when.timestamp(), json_ids(ids)),
            )

    def set_embeddings(self, model: str, vectors: Sequence[tuple[int, Vector]]) -> None:
        rows = [(model, to_blob(as_vector(v)), int(memory_id)) for memory_id, v in vectors]
        if not rows:
            return
        with self._write() as conn:
            # updated_at is left alone: re-embedding is upkeep, not an edit,
            # and must not make a stale memory look fresh. Unknown ids match
            # no row and are skipped.
            conn.executemany("UPDATE memories SET model = ?, embedding = ? WHERE id = ?", rows)

    def mark_reviewed(self, first_id: int, second_id: int, verdict: Verdict = "different") -> None:
        low, high = sorted((int(first_id), int(second_id)))
        if low == high:
            raise ValueError(f"a memory cannot be its own duplicate (id {low})")
        with self._write() as conn:
            # A memory deleted meanwhile is skipped rather than failing the
            # foreign key: its pair no longer needs a review. A new verdict
            # replaces the old one: the latest review counts.
            conn.execute(
                "INSERT INTO dedup_reviews (first_id, second_id, reviewed_at, verdict)"
                " SELECT ?, ?, ?, ? WHERE (SELECT count(*) FROM memories WHERE id IN (?, ?)) = 2"
                " ON CONFLICT (first_id, second_id) DO UPDATE SET verdict = excluded.verdict,"
                " reviewed_at = excluded.reviewed_at",
                (low, high, time.time(), verdict, low, high),
            )

    def restore_memories(self, items: Sequence[tuple[Memory, Vector]]) -> list[bool]:
        rows = [_restored(memory, as_vector(vector)) for memory, vector in items]
        if not rows:
            return []
        with self._write() as conn:
            # The UNIQUE (store, label) key makes a memory already there an
            # insert that changes nothing.
            return [conn.execute(_RESTORE, row).rowcount > 0 for row in rows]

    # -- reads -------------------------------------------------------------
    def get_memory(self, store: str, label: str) -> Memory | None:
        row = self._fetchone(_MEMORY + " WHERE store = ? AND label = ?", (store, label))
        return None if row is None else _memory(row)

    def get_memories(self, ids: Iterable[int]) -> dict[int, Memory]:
        rows = self._fetchall(_MEMORIES_BY_ID, (json_ids(ids),))
        return {memory.id: memory for memory in map(_memory, rows)}

    def list_memories(
        self, stores: Sequence[str] | None = None, *, include_archived: bool = False
    ) -> list[Memory]:
        rows = self._fetchall(
            _MEMORIES_OF_STORES,
            {
                "all": stores is None,
                "stores": json.dumps(list(stores or ())),
                "archived": include_archived,
            },
        )
        return [_memory(row) for row in rows]

    def list_stores(self) -> list[StoreInfo]:
        rows = self._fetchall(
            "SELECT store, total(archived = 0), total(archived) FROM memories"
            " GROUP BY store ORDER BY store",
            (),
        )
        return [StoreInfo(name, int(live), int(archived)) for name, live, archived in rows]

    def vector_search(
        self, query: Vector, model: str, scope: Scope, limit: int, *, include_archived: bool = False
    ) -> list[ScoredId]:
        if not scope.stores or limit <= 0:
            return []
        vector = np.ascontiguousarray(query, dtype=np.float32)
        with self._lock:
            index = self._cache.vectors(model)
            hits = index.search(vector, model, scope.stores, scope.branch, limit)
        archived = None
        if include_archived:
            params = (model, json.dumps(scope.stores), scope.branch)
            archived = self._fetchall(_ARCHIVED_VECTORS, params)
        return sql_rows.with_archived(hits, archived, vector, from_blob, limit)

    #: Scopes (stores, branch, archived) whose words searches go straight to the
    #: joined query: once too few of the best matches were in scope, their
    #: memories are a small share of the file, where the joined query costs less.
    _scattered_scopes: frozenset[tuple[tuple[str, ...], str | None, bool]] = frozenset()

    def text_search(
        self, query: str, scope: Scope, limit: int, *, include_archived: bool = False
    ) -> list[ScoredId]:
        words = fts.words(query)
        if not words or not scope.stores or limit <= 0:
            return []
        in_scope = (include_archived, json.dumps(scope.stores), scope.branch)
        key = (tuple(scope.stores), scope.branch, include_archived)
        with self._lock:
            expression = fts.match_expression(fts.affordable(self._cache.doc_counts(words)))
            if expression is None:
                return []
            rows = None
            if key not in self._scattered_scopes:
                rows = self._best_in_scope(expression, in_scope, limit)
                if rows is None:
                    self._scattered_scopes |= {key}
            if rows is None:
                rows = self._conn.execute(_TEXT_SEARCH, (expression, *in_scope, limit)).fetchall()
        # bm25 is lower-is-better; negated, scores grow with quality.
        return [ScoredId(memory_id, -score) for memory_id, score in rows]

    def _best_in_scope(
        self, expression: str, in_scope: tuple[bool, str, str | None], limit: int
    ) -> list[tuple[int, float]] | None:
        """The joined query's rows, from the best matches alone; None when they cannot tell.

        An in-scope match that ranks above the last of the best is among
        them, so their first ``limit`` in scope are the answer; and when
        fewer matches than asked came back, every match was read.
        """
        wanted = _BEST_FACTOR * limit
        rows = self._conn.execute(_TEXT_SEARCH_BEST, (expression, wanted, *in_scope)).fetchall()
        kept = [(memory_id, score) for memory_id, score, inside in rows if inside]
        if len(kept) >= limit or len(rows) < wanted:
            return kept[:limit]
        return None

    def embeddings(self, ids: Iterable[int], model: str) -> dict[int, Vector]:
        rows = self._fetchall(
            # The unary + keeps SQLite off the model index: looking each id up by
            # primary key reads a few rows, the index would read the whole model.
            "SELECT id, embedding FROM memories"
            " WHERE +model = ? AND id IN (SELECT value FROM json_each(?))",
            (model, json_ids(ids)),
        )
        return {memory_id: from_blob(blob) for memory_id, blob in rows}

    def store_matrix(self, store: str, model: str) -> tuple[list[int], Matrix]:
        with self._lock:
            return self._cache.vectors(model).store_matrix(store, model)

    def reviewed_pairs(self, store: str) -> set[tuple[int, int]]:
        rows = self._fetchall(
            "SELECT r.first_id, r.second_id FROM dedup_reviews AS r"
            " JOIN memories AS m ON m.id = r.first_id WHERE m.store = ?",
            (store,),
        )
        return {(first, second) for first, second in rows}

    def review_verdicts(self, store: str) -> dict[tuple[int, int], Verdict]:
        rows = self._fetchall(
            "SELECT r.first_id, r.second_id, r.verdict FROM dedup_reviews AS r"
            " JOIN memories AS m ON m.id = r.first_id WHERE m.store = ?",
            (store,),
        )
        return {(first, second): verdict for first, second, verdict in rows}

    def models_in_use(self) -> dict[str, int]:
        return dict(self._fetchall("SELECT model, count(*) FROM memories GROUP BY model", ()))

    # -- internals ---------------------------------------------------------
    def _fetchone(self, sql: str, params: Sequence[Any]) -> Any:
        with self._lock:
            return self._conn.execute(sql, params).fetchone()

    def _fetchall(self, sql: str, params: Sequence[Any] | dict[str, Any]) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    @contextmanager
    def _write(self, *, bookkeeping: bool = False) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction, committed when the block ends normally.

        ``bookkeeping`` writes (recall counts, the fire log) commit without
        an fsync: a crash or kill still keeps them (WAL), only a power cut
        could drop the last few, and the next durable commit syncs them too.
        They happen on every search, where an fsync would double its time.
        """
        with self._lock:
            conn = self._conn
            if bookkeeping:
                conn.execute("PRAGMA synchronous = NORMAL")
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    # SQLite rolls back by itself after some errors (disk full, I/O).
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                raise StorageError(
                    f"could not write to {self.path}: {exc}; check that the disk has space, "
                    "the file is writable, and no other program holds the database locked"
                ) from exc
            finally:
                if bookkeeping:
                    conn.execute("PRAGMA synchronous = FULL")
                # Own commits do not move data_version; tell the cache.
                self._cache.wrote()
                self._decision_cache.wrote()


def _create(conn: sqlite3.Connection, item: NewMemory, vector: Vector, now: float) -> Memory:
    created, updated = _epoch(item.created_at, now), _epoch(item.updated_at, now)
    cursor = conn.execute(
        "INSERT INTO memories (store, label, content, branch, archived, model, embedding,"
        " created_at, updated_at) VALUES (:store, :label, :content, :branch, 0, :model,"
        " :embedding, :created, :updated)",
        {
            "store": item.store,
            "label": item.label,
            "content": item.content,
            "branch": item.branch,
            "model": item.model,
            "embedding": to_blob(vector),
            "created": created,
            "updated": updated,
        },
    )
    assert cursor.lastrowid is not None
    return Memory(
        id=cursor.lastrowid,
        store=item.store,
        label=item.label,
        content=item.content,
        branch=item.branch,
        archived=False,
        model=item.model,
        created_at=to_time(created),
        updated_at=to_time(updated),
    )


def _epoch(moment: datetime | None, now: float) -> float:
    """A time given with a write as stored (epoch seconds); None is ``now``."""
    return now if moment is None else moment.timestamp()


def _restored(memory: Memory, vector: Vector) -> dict[str, Any]:
    last = memory.last_recalled_at
    return {
        "store": memory.store,
        "label": memory.label,
        "content": memory.content,
        "branch": memory.branch,
        "archived": int(memory.archived),
        "model": memory.model,
        "embedding": to_blob(vector),
        "created_at": memory.created_at.timestamp(),
        "updated_at": memory.updated_at.timestamp(),
        "recall_count": int(memory.recall_count),
        "last_recalled_at": None if last is None else last.timestamp(),
    }


def _update(
    conn: sqlite3.Connection, old: Memory, item: NewMemory, vector: Vector, now: float
) -> Memory:
    updated = _epoch(item.updated_at, now)
    conn.execute(
        "UPDATE memories SET content = ?, branch = ?, model = ?, embedding = ?, updated_at = ?"
        " WHERE id = ?",
        (item.content, item.branch, item.model, to_blob(vector), updated, old.id),
    )
    if item.content != old.content:
        # The review judged the old text; the new text deserves a fresh look.
        conn.execute(
            "DELETE FROM dedup_reviews WHERE first_id = ? OR second_id = ?", (old.id, old.id)
        )
    return attrs.evolve(
        old,
        content=item.content,
        branch=item.branch,
        archived=False,
        model=item.model,
        updated_at=to_time(updated),
    )


def _memory(row: Sequence[Any]) -> Memory:
    # Times are stored as epoch seconds.
    return sql_rows.memory(row, to_time)
