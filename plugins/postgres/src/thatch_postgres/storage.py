"""PostgresStorage: thatch's stores on a PostgreSQL server that several machines share.

Correct under sharing: a batch of writes is one transaction, so a failure
leaves none of it; a write takes the row it changes with ``ON CONFLICT`` or
``FOR UPDATE``, so two machines writing one label at once never make two
rows; counts change with ``SET n = n + 1`` in the database, never by reading
a number into the client and writing it back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, LiteralString

import numpy as np
from psycopg import errors
from thatch.plugin import (
    Memory,
    NewMemory,
    Scope,
    ScoredId,
    StoreInfo,
    WriteResult,
    sql_rows,
)

from thatch_postgres import listen, text, wordcounts
from thatch_postgres.connect import CONNECT_TIMEOUT, open_pool
from thatch_postgres.decisions import DecisionsMixin
from thatch_postgres.migrations import LATEST, migrate, schema_version
from thatch_postgres.pooled import Once
from thatch_postgres.prediction_log import PredictionLogMixin
from thatch_postgres.retry import Retry
from thatch_postgres.server_search import ServerSearch
from thatch_postgres.settings import DEFAULT_FROM, DEFAULT_RETRY_SECONDS
from thatch_postgres.vectors import ModelVectors, VectorCache, from_bytes, to_bytes

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool
    from thatch.plugin import DecisionKind, Matrix, Vector, Verdict

    from thatch_postgres.connect import Connection
    from thatch_postgres.settings import Mode

# Every query is written out whole, SQL is never assembled at run time, not
# even from constants; the memory queries list the columns in the order
# thatch.plugin.sql_rows reads them. The stored words weigh the label more than the
# content (class A against D).
_INSERT = """
    INSERT INTO memories (store, label, content, branch, model, embedding, search,
        created_at, updated_at)
    VALUES (%(store)s, %(label)s, %(content)s, %(branch)s, %(model)s, %(embedding)s,
        setweight(to_tsvector('english', %(label_words)s), 'A')
            || setweight(to_tsvector('english', %(content_words)s), 'D'),
        COALESCE(%(created_at)s::timestamptz, now()),
        COALESCE(%(updated_at)s::timestamptz, now()))
    ON CONFLICT (store, label) DO NOTHING
    RETURNING id, store, label, content, branch, archived, model, created_at, updated_at,
        recall_count, last_recalled_at
"""
# A memory as another storage kept it (thatch migrate): every field given.
_RESTORE = """
    INSERT INTO memories (store, label, content, branch, archived, model, embedding, search,
        created_at, updated_at, recall_count, last_recalled_at)
    VALUES (%(store)s, %(label)s, %(content)s, %(branch)s, %(archived)s, %(model)s,
        %(embedding)s,
        setweight(to_tsvector('english', %(label_words)s), 'A')
            || setweight(to_tsvector('english', %(content_words)s), 'D'),
        %(created_at)s, %(updated_at)s, %(recall_count)s, %(last_recalled_at)s)
    ON CONFLICT (store, label) DO NOTHING
    RETURNING id
"""
_UPDATE = """
    UPDATE memories SET content = %(content)s, branch = %(branch)s, model = %(model)s,
        embedding = %(embedding)s,
        search = setweight(to_tsvector('english', %(label_words)s), 'A')
            || setweight(to_tsvector('english', %(content_words)s), 'D'),
        updated_at = COALESCE(%(updated_at)s::timestamptz, now()), rev = nextval('memory_rev')
    WHERE id = %(id)s
    RETURNING id, store, label, content, branch, archived, model, created_at, updated_at,
        recall_count, last_recalled_at
"""
_LOCK_LABEL = """
    SELECT id, store, label, content, branch, archived, model, created_at, updated_at,
        recall_count, last_recalled_at
    FROM memories WHERE store = %s AND label = %s FOR UPDATE
"""
# Archiving is not an edit: updated_at stays. A new rev tells every
# machine's vector cache that the row came or went.
_ARCHIVE = """
    UPDATE memories SET archived = %(archived)s,
        rev = CASE WHEN archived = %(archived)s THEN rev ELSE nextval('memory_rev') END
    WHERE store = %(store)s AND label = %(label)s
    RETURNING id, store, label, content, branch, archived, model, created_at, updated_at,
        recall_count, last_recalled_at
"""
_BY_LABEL = """
    SELECT id, store, label, content, branch, archived, model, created_at, updated_at,
        recall_count, last_recalled_at
    FROM memories WHERE store = %s AND label = %s
"""
_BY_ID = """
    SELECT id, store, label, content, branch, archived, model, created_at, updated_at,
        recall_count, last_recalled_at
    FROM memories WHERE id = ANY(%s)
"""
# COLLATE "C": the same byte order whatever locale the server was made with.
_OF_STORES = """
    SELECT id, store, label, content, branch, archived, model, created_at, updated_at,
        recall_count, last_recalled_at
    FROM memories
    WHERE (%(all)s OR store = ANY(%(stores)s)) AND (%(archived)s OR NOT archived)
    ORDER BY store COLLATE "C", label COLLATE "C"
"""
# Weights of classes {D, C, B, A}: a word in the label counts four times one
# in the content. The id breaks ties so that the order is stable. It reads
# memory_words, the narrow copy the triggers of migration 6 keep, whose
# pages stay in the server's buffers where the wide rows of memories do not.
_TEXT_SEARCH = """
    SELECT w.id, ts_rank('{0.25, 0.25, 0.25, 1.0}', w.search, q.query) AS score
    FROM memory_words AS w, (SELECT to_tsquery('english', %(query)s) AS query) AS q
    WHERE w.search @@ q.query
      AND (%(archived)s OR NOT w.archived)
      AND w.store = ANY(%(stores)s)
      AND (w.branch IS NULL OR w.branch = %(branch)s)
    ORDER BY score DESC, w.id
    LIMIT %(limit)s
"""
# What integrity_problems counts: rows found by each query, and what they are.
_INTEGRITY_COUNTS: tuple[tuple[LiteralString, str], ...] = (
    (
        "SELECT count(*) FROM memories WHERE length(embedding) = 0 OR length(embedding) % 4 <> 0",
        "memories have a vector that is not float32 values",
    ),
    (
        "SELECT count(*) FROM memories AS m LEFT JOIN memory_words AS w ON w.id = m.id"
        " WHERE w.id IS NULL OR (w.store, w.branch, w.archived, w.search)"
        " IS DISTINCT FROM (m.store, m.branch, m.archived, m.search)",
        "memories are out of step with their words (memory_words)",
    ),
    (
        "SELECT count(*) FROM dedup_reviews AS r"
        " JOIN memories AS a ON a.id = r.first_id JOIN memories AS b ON b.id = r.second_id"
        " WHERE a.store <> b.store",
        "reviewed duplicate pairs join two different stores",
    ),
)
_ARCHIVED_VECTORS = """
    SELECT id, embedding FROM memories
    WHERE archived AND model = %s AND store = ANY(%s) AND (branch IS NULL OR branch = %s)
"""


class PostgresStorage(DecisionsMixin, PredictionLogMixin):
    """Memories, the decision model and the prediction log on a PostgreSQL schema.

    One object is the :class:`thatch.plugin.MemoryStorage`, the
    :class:`thatch.plugin.DecisionStorage` (methods from
    :class:`DecisionsMixin`) and the :class:`thatch.plugin.PredictionStorage`
    (from :class:`PredictionLogMixin`): the plugin hands the same object to
    every part kept in postgres, and core closes it once.

    Safe to share between threads: each call borrows a pooled connection.
    A call whose connection is lost is tried again for up to
    ``retry_seconds`` (see :mod:`thatch_postgres.pooled`).
    """

    backend = "postgres"

    def __init__(
        self,
        dsn: str,
        schema: str,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
        server_search: Mode = "auto",
        server_search_from: int = DEFAULT_FROM,
    ) -> None:
        self.dsn = dsn
        self.schema = schema
        self._connect_timeout = connect_timeout
        self._retry = Retry(retry_seconds)
        self._pool: ConnectionPool[Connection] = open_pool(dsn, schema, connect_timeout)
        self._cache = VectorCache("memories")
        self._server = ServerSearch(schema, server_search, server_search_from)
        self._word_counts = wordcounts.WordCounts()
        self._decision_caches: dict[DecisionKind, VectorCache] = {
            "matcher": VectorCache("matchers"),
            "prediction": VectorCache("predictions"),
        }
        self._cache_lock = threading.Lock()
        # Started by the first search: a process that only writes never listens.
        self._listener: listen.ChangeListener | None = None
        self._closed = False
        try:
            # One transaction under a lock, and a no-op once done: safe to run again.
            self._read("upgrade the schema", lambda conn: migrate(conn, schema))
            self._read("look for pgvector", self._server.open)
        except BaseException:
            self._pool.close()
            raise

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    @property
    def server_search(self) -> str:
        """Whether the server searches large stores: "in use", "available", "absent" or "off"."""
        return self._server.state

    def __repr__(self) -> str:
        return f"PostgresStorage(schema={self.schema!r})"

    def close(self) -> None:
        with self._cache_lock:
            self._cache.clear()
            for cache in self._decision_caches.values():
                cache.clear()
            listener, self._listener = self._listener, None
        if listener is not None:
            listen.release(listener)
        self._pool.close()
        self._closed = True

    def integrity_problems(self) -> list[str]:
        return self._read("check the data", self._problems)

    def _problems(self, conn: Connection) -> list[str]:
        problems: list[str] = []
        version = schema_version(conn)
        if version != LATEST:
            problems.append(
                f"schema {self.schema!r} is at version {version}, this code expects {LATEST}"
            )
        for count_sql, problem in _INTEGRITY_COUNTS:
            row = conn.execute(count_sql).fetchone()
            if row and row[0]:
                problems.append(f"{row[0]} {problem}")
        problems.extend(self._server.problems(conn))
        return problems

    # -- writes ------------------------------------------------------------
    def write_memories(self, items: Sequence[NewMemory]) -> list[WriteResult]:
        if not items:
            return []
        # Checked before the transaction: a refused item writes nothing.
        prepared = [_params(item) for item in items]

        # Run again as it is after a lost commit: a memory saved by the
        # first try is then found "unchanged", which leaves the same rows.
        def save(conn: Connection) -> list[WriteResult]:
            results: list[WriteResult] = []
            for item, params in zip(items, prepared, strict=True):
                row = conn.execute(_INSERT, params).fetchone()
                if row is not None:
                    results.append(WriteResult(sql_rows.memory(row), "created"))
                    continue
                # The label exists (perhaps written a moment ago by another
                # machine): lock it, then decide. A save without overwrite
                # that lost the race for a new label is refused here.
                row = conn.execute(_LOCK_LABEL, (item.store, item.label)).fetchone()
                assert row is not None, "a conflicting row is there until the transaction ends"
                old = sql_rows.memory(row)
                if not sql_rows.changes_stored(old, item):
                    results.append(WriteResult(old, "unchanged"))
                    continue
                new_row = conn.execute(_UPDATE, params | {"id": old.id}).fetchone()
                assert new_row is not None
                if item.content != old.content:
                    # The review judged the old text; the new text deserves a fresh look.
                    conn.execute(
                        "DELETE FROM dedup_reviews WHERE first_id = %s OR second_id = %s",
                        (old.id, old.id),
                    )
                results.append(WriteResult(sql_rows.memory(new_row), "updated"))
            self._server.put(
                conn,
                [
                    (result.memory.id, params["embedding"])
                    for result, params in zip(results, prepared, strict=True)
                    if result.action != "unchanged"
                ],
            )
            return results

        return self._write("save memories", save, vectors="memories")

    def delete_memory(self, store: str, label: str) -> bool:
        def delete(conn: Connection) -> bool:
            # Reviews go with it through ON DELETE CASCADE.
            cursor = conn.execute(
                "DELETE FROM memories WHERE store = %s AND label = %s", (store, label)
            )
            return cursor.rowcount > 0

        return self._write("delete a memory", delete, vectors="memories")

    def set_archived(self, store: str, label: str, archived: bool) -> Memory | None:
        params = {"archived": archived, "store": store, "label": label}
        row = self._write(
            "archive a memory",
            lambda conn: conn.execute(_ARCHIVE, params).fetchone(),
            vectors="memories",
        )
        return None if row is None else sql_rows.memory(row)

    def record_recall(self, ids: Sequence[int], when: datetime) -> None:
        if not ids:
            return
        wanted = [int(i) for i in ids]

        def count(conn: Connection) -> None:
            # One statement adds in the database: recalls counted on two
            # machines at once are both kept.
            conn.execute(
                "UPDATE memories SET recall_count = recall_count + 1, last_recalled_at = %s"
                " WHERE id = ANY(%s)",
                (when, wanted),
            )

        # Adds: a retry after a lost commit must not count twice.
        self._write("count recalls", count, once=Once(lambda _conn, _row: None))

    def set_embeddings(self, model: str, vectors: Sequence[tuple[int, Vector]]) -> None:
        rows = [(model, to_bytes(vector), int(memory_id)) for memory_id, vector in vectors]
        if not rows:
            return

        def replace(conn: Connection) -> None:
            # updated_at stays: re-embedding is upkeep, not an edit. Unknown
            # ids match no row and are skipped.
            with conn.cursor() as cursor:
                cursor.executemany(
                    "UPDATE memories SET model = %s, embedding = %s, rev = nextval('memory_rev')"
                    " WHERE id = %s",
                    rows,
                )
            self._server.put(conn, [(memory_id, blob) for _, blob, memory_id in rows])

        self._write("replace vectors", replace, vectors="memories")

    def mark_reviewed(self, first_id: int, second_id: int, verdict: Verdict = "different") -> None:
        low, high = sorted((int(first_id), int(second_id)))
        if low == high:
            raise ValueError(f"a memory cannot be its own duplicate (id {low})")

        def review(conn: Connection) -> None:
            # A memory deleted meanwhile is skipped: its pair no longer
            # needs a review. The latest verdict replaces the old one.
            conn.execute(
                "INSERT INTO dedup_reviews (first_id, second_id, verdict, reviewed_at)"
                " SELECT %(low)s, %(high)s, %(verdict)s, now()"
                " WHERE (SELECT count(*) FROM memories WHERE id IN (%(low)s, %(high)s)) = 2"
                " ON CONFLICT (first_id, second_id) DO UPDATE"
                " SET verdict = excluded.verdict, reviewed_at = excluded.reviewed_at",
                {"low": low, "high": high, "verdict": verdict},
            )

        try:
            self._write("record a review", review)
        except errors.ForeignKeyViolation:
            # Deleted on another machine between the check and the insert.
            return

    def restore_memories(self, items: Sequence[tuple[Memory, Vector]]) -> list[bool]:
        if not items:
            return []
        # Checked before the transaction: a refused item writes nothing.
        rows = [_restored(memory, vector) for memory, vector in items]

        # ON CONFLICT: a label already there (from this batch, another
        # machine or a try whose commit was cut off) stays as it is, so the
        # write may run again.
        def restore(conn: Connection) -> list[bool]:
            made = [(conn.execute(_RESTORE, row).fetchone(), row["embedding"]) for row in rows]
            self._server.put(conn, [(int(new[0]), blob) for new, blob in made if new is not None])
            return [new is not None for new, _ in made]

        return self._write("restore memories", restore, vectors="memories")

    # -- reads -------------------------------------------------------------
    def get_memory(self, store: str, label: str) -> Memory | None:
        rows = self._rows(_BY_LABEL, (store, label))
        return sql_rows.memory(rows[0]) if rows else None

    def get_memories(self, ids: Iterable[int]) -> dict[int, Memory]:
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        rows = self._rows(_BY_ID, (wanted,))
        return {memory.id: memory for memory in map(sql_rows.memory, rows)}

    def list_memories(
        self, stores: Sequence[str] | None = None, *, include_archived: bool = False
    ) -> list[Memory]:
        rows = self._rows(
            _OF_STORES,
            {"all": stores is None, "stores": list(stores or ()), "archived": include_archived},
        )
        return [sql_rows.memory(row) for row in rows]

    def list_stores(self) -> list[StoreInfo]:
        rows = self._rows(
            "SELECT store, count(*) FILTER (WHERE NOT archived), count(*) FILTER (WHERE archived)"
            ' FROM memories GROUP BY store ORDER BY store COLLATE "C"',
            (),
        )
        return [StoreInfo(name, int(live), int(archived)) for name, live, archived in rows]

    def vector_search(
        self, query: Vector, model: str, scope: Scope, limit: int, *, include_archived: bool = False
    ) -> list[ScoredId]:
        if not scope.stores or limit <= 0:
            return []
        vector = np.ascontiguousarray(query, dtype=np.float32)
        hits = None
        if self._server.may_search(model, len(vector), scope.stores):
            hits = self._read(
                "search by meaning",
                lambda conn: self._server.search(
                    conn, vector, model, scope.stores, scope.branch, limit
                ),
            )
        if hits is None:
            hits = self._vectors(self._cache, model, "search by meaning").search(
                vector, scope.stores, scope.branch, limit
            )
        archived = None
        if include_archived:
            params = (model, list(scope.stores), scope.branch)
            archived = self._rows(_ARCHIVED_VECTORS, params)
        return sql_rows.with_archived(hits, archived, vector, from_bytes, limit)

    def text_search(
        self, query: str, scope: Scope, limit: int, *, include_archived: bool = False
    ) -> list[ScoredId]:
        if not text.words(query) or not scope.stores or limit <= 0:
            return []

        def search(conn: Connection) -> list[Any]:
            # The query's rarer words only (thatch_postgres.wordcounts), so
            # that a common word does not make the server rank a third of the table.
            expression = wordcounts.tsquery(conn, self._word_counts, query)
            if expression is None:
                return []
            params = {
                "query": expression,
                "archived": include_archived,
                "stores": list(scope.stores),
                "branch": scope.branch,
                "limit": limit,
            }
            # Never prepared: psycopg prepares a statement from its fifth run
            # on, and the server's generic plan for it then stems the query
            # again (to_tsquery of a parameter) for every row it ranks: 2.5
            # times slower at 100k memories (bench/postgres_recall.py
            # --layouts). Planned for its own words, the query is stemmed
            # once and its rows estimated from them.
            return conn.execute(_TEXT_SEARCH, params, prepare=False).fetchall()

        rows = self._read("search by words", search)
        return [ScoredId(memory_id, float(score)) for memory_id, score in rows]

    def embeddings(self, ids: Iterable[int], model: str) -> dict[int, Vector]:
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        rows = self._rows(
            "SELECT id, embedding FROM memories WHERE model = %s AND id = ANY(%s)",
            (model, wanted),
        )
        return {memory_id: from_bytes(blob) for memory_id, blob in rows}

    def store_matrix(self, store: str, model: str) -> tuple[list[int], Matrix]:
        return self._vectors(self._cache, model, "read vectors").store_matrix(store)

    def reviewed_pairs(self, store: str) -> set[tuple[int, int]]:
        return set(self.review_verdicts(store))

    def review_verdicts(self, store: str) -> dict[tuple[int, int], Verdict]:
        rows = self._rows(
            "SELECT r.first_id, r.second_id, r.verdict FROM dedup_reviews AS r"
            " JOIN memories AS m ON m.id = r.first_id WHERE m.store = %s",
            (store,),
        )
        return {(first, second): verdict for first, second, verdict in rows}

    def models_in_use(self) -> dict[str, int]:
        rows = self._rows("SELECT model, count(*) FROM memories GROUP BY model", ())
        return {model: int(count) for model, count in rows}

    # -- internals ---------------------------------------------------------
    def _vectors(self, cache: VectorCache, model: str, action: str) -> ModelVectors:
        """``model``'s vectors of ``cache``'s table, without a round trip when nothing was heard.

        A copy is searched as it is until a change of its table is heard;
        while the listener is not listening, each search checks the server.
        """
        with self._cache_lock:
            if self._listener is None and not self._closed:
                self._listener = listen.acquire(self.dsn, self.schema)
            # Read before any query (see VectorCache.vectors).
            epoch = self._listener.epoch(cache.table) if self._listener else None
            held = cache.current(model, epoch)
        if held is not None:
            return held

        def read(conn: Connection) -> ModelVectors:
            # The copy changes only once all its rows are read: a try cut
            # short leaves it as it was.
            with self._cache_lock:
                return cache.vectors(conn, model, epoch)

        return self._read(action, read)


def _params(item: NewMemory) -> dict[str, Any]:
    return {
        "store": item.store,
        "label": item.label,
        "content": text.storable(item.content, f"the content of memory {item.label!r}"),
        "branch": item.branch,
        "model": item.model,
        "embedding": to_bytes(item.embedding),
        "label_words": text.stored_words(item.label),
        "content_words": text.stored_words(item.content),
        "created_at": item.created_at,
        "updated_at": item.updated_at,
    }


def _restored(memory: Memory, vector: Vector) -> dict[str, Any]:
    new = NewMemory(memory.store, memory.label, memory.content, memory.branch, memory.model, vector)
    return _params(new) | {
        "archived": bool(memory.archived),
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "recall_count": int(memory.recall_count),
        "last_recalled_at": memory.last_recalled_at,
    }
