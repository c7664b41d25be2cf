"""Recall latency on the PostgreSQL backend beside SQLite, warm and cold, at 10k and 100k memories.

One process, one throw-away PostgreSQL server (tests/postgres/pg_cluster.py:
``initdb`` in a temporary folder, a Unix socket only, durability off) and two
throw-away homes: one on the default SQLite backend, one whose config keeps
memories in a schema of that server. Both get the SAME synthetic memories,
written in the same order through the storage contract
(``th.memory_storage.write_memories``, as bench/recall_latency.py writes
them): random unit vectors of the real model's id and dimension, and
Zipf-distributed sentences so that full-text search has real work. Ids come
out the same on both sides (1 .. N). The contract's write path is used
rather than ``COPY`` so that the stored words (``tsvector``) are exactly the
ones the backend makes; 100k take 45 s to 2.5 min on PostgreSQL on a busy
two-core machine (one INSERT per memory, 5,000 to a transaction), fast
enough that COPY, which would have to repeat the backend's SQL, is not worth
it. After filling, the schema gets a ``VACUUM ANALYZE``, as autovacuum would
give a store that size: it flushes the GIN index's pending list and gives
the planner its statistics.

Warm: both homes are queried through ``Thatch.recall`` (the call the CLI,
MCP server and daemon make) with the same real queries (bench/data,
cycled), the same two stores, limit 5, ``min_cosine=-1``, ``record=False``,
in each mode (hybrid, words, vector), SQLite and PostgreSQL back to back and
in alternating order. Both share one embedder that keeps each query's vector
after its first embedding (bench/cached_embedder.py), so the figures are the
backends' alone; the embedding's own time (the same on both sides) is
printed beside them. A warm PostgreSQL handle searches its in-memory copy of
the vectors without a round trip while its listener hears no change.

The parts (per query, interleaved): the storage's vector search for the 20
best, its words search for the 20 best, the fetch of the stored vectors of
the words hits that the vector hits lack, and reading the 5 memories shown.

Cold: a fresh storage handle of each backend (``SQLiteStorage(path)`` and
``PostgresStorage(dsn, schema)``) is opened, then makes its first vector
search, which reads every vector of the model (SQLite: from its file into the
index; PostgreSQL: from the server into the in-memory copy, in binary, built
by a few numpy calls). ``--rounds`` rounds, alternating which backend goes
first. For PostgreSQL two bare reads of the same rows are timed too:
psycopg's default text transfer (``bytea`` as hex) and its binary transfer
(what the backend uses).

After a write: ten times, one memory is written through each warm handle
(into a store of its own, out of the searched scope) and its next vector
search timed, which catches up with the change (SQLite: into its index;
PostgreSQL: every row's (id, rev) read, the new row fetched, the copy
rebuilt by numpy); the memories are deleted afterwards.

``--explain`` prints the PostgreSQL plan (EXPLAIN ANALYZE) of one words
search per size, with all its words and with the words the backend affords.

``--variants`` adds, per size, the searches the backend makes beside the
ones it made before and the alternatives, timed on every query
(interleaved), each with R@20 (the share of a reference search's 20 best it
also returns):

- words: the backend's ``text_search`` (the query's words rarest first while
  their memories add up to ``thatch_postgres.wordcounts.MAX_POSTINGS``,
  5,000, as the SQLite backend does), the same at a budget of 2,000, and the
  search by all the words (the backend's SQL on a connection of its own, as
  it was before the budget), the reference;
- vector: the backend's ``vector_search`` (one scan over the whole copy,
  rows out of scope at -inf, ``argpartition``; int8 codes from
  ``thatch_postgres.vectors.QUANTIZE_AT`` rows, the 40 best re-scored from
  float32), the same scan over the float32 matrix (the reference), and the
  search as it was before (the rows in scope copied out, all their scores
  sorted).

    uv run python bench/postgres_recall.py
    uv run python bench/postgres_recall.py --sizes 10000 --queries 100 --rounds 3
``--layouts`` times, per size, the backend's words search SQL with the
affordable words on each table it could read: ``memories`` with a GIN index
of its own (the wide rows, as before migration 6), a copy of ``memories``
without the vector (the vector in a table of its own), and
``memory_words`` (what the backend reads), each prepared (psycopg's
default: the server's generic plan from the fifth run on) and not (what
the backend does); and prints the sizes of a copy
of ``memories`` whose table asks PostgreSQL to move the vector out
(``toast_tuple_target``, storage EXTERNAL, rewritten). See
:func:`measure_layouts`.

``--server-search`` runs it all on the PostgreSQL with pgvector of the
``pgserver`` wheel instead of the system's, the PostgreSQL home set to
``server_search = "off"`` (its figures stay the cache's), and adds per size
the server's search by meaning (pgvector's HNSW index) beside the cache's
and SQLite's: latency, R@20 against exact search, ``hnsw.ef_search`` by
hand, the copy into the table of vectors and the index's build, and a
fresh handle's first search with and without the cache's load (see
bench/pg_server_search.py).

    uv run python bench/postgres_recall.py
    uv run python bench/postgres_recall.py --sizes 10000 --queries 100 --rounds 3
    uv run python bench/postgres_recall.py --sizes 100000 --variants
    uv run python bench/postgres_recall.py --sizes 100000 --layouts
    uv run python bench/postgres_recall.py --server-search --queries 100 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pg_server_search
import psycopg
from cached_embedder import CachedEmbedder
from data_sets import DATA, read_queries
from measure import percentile, timed
from pg_home import load_pg_cluster, open_home, postgres_config
from pg_server_search import ServerRow
from synthetic import sentences, unit_vectors, vocabulary, write_memories
from thatch.api import Thatch
from thatch.memory.recall import RecallMode
from thatch.plugin.records import GLOBAL_STORE, NewMemory, Scope
from thatch_postgres import storage as pg_storage
from thatch_postgres import text, wordcounts
from thatch_postgres.migrations import MIGRATIONS, migrate
from thatch_postgres.storage import PostgresStorage
from thatch_postgres.vectors import ModelVectors
from thatch_sqlite.storage import SQLiteStorage

STORE = "bench/repo"
SCHEMA = "bench_recall"
LIMIT = 5
DEPTH = 20  # what recall fetches from each list for limit 5
WARMUP = 20
GOAL_RATIO = 1.2
MODES: tuple[RecallMode, ...] = ("hybrid", "words", "vector")
BACKENDS = ("sqlite", "postgres")
#: What a PostgreSQL handle's first vector search reads (thatch_postgres.vectors).
ALL_ROWS = (
    "SELECT id, store, branch, rev, embedding FROM memories WHERE model = %s AND NOT archived"
)
#: The backend's words query (thatch_postgres.storage), on a connection of its own.
_WORDS_SEARCH = """
    SELECT m.id, ts_rank('{0.25, 0.25, 0.25, 1.0}', m.search, q.query) AS score
    FROM memory_words AS m, (SELECT to_tsquery('english', %(query)s) AS query) AS q
    WHERE m.search @@ q.query AND NOT m.archived AND m.store = ANY(%(stores)s)
      AND (m.branch IS NULL OR m.branch = %(branch)s)
    ORDER BY score DESC, m.id LIMIT %(limit)s
"""
#: Where the words search may read its rows (--layouts): table, and the SQL that makes it.
LAYOUTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "memories (wide rows, as before)",
        "memories",
        ("CREATE INDEX layout_wide_search ON memories USING gin (search)",),
    ),
    (
        "memories without the vector (b)",
        "layout_no_vector",
        (
            "CREATE TABLE layout_no_vector AS SELECT id, store, label, content, branch,"
            " archived, model, search, created_at, updated_at, recall_count,"
            " last_recalled_at, rev FROM memories",
            "CREATE INDEX ON layout_no_vector USING gin (search)",
            "VACUUM ANALYZE layout_no_vector",
        ),
    ),
    ("memory_words (a, the backend's)", "memory_words", ()),
)
#: (c): the vector moved out of the row by the table's TOAST settings, if PostgreSQL does.
TOAST_LAYOUT = (
    "CREATE TABLE layout_toast (LIKE memories) WITH (toast_tuple_target = 128)",
    "ALTER TABLE layout_toast ALTER COLUMN embedding SET STORAGE EXTERNAL",
    "INSERT INTO layout_toast OVERRIDING SYSTEM VALUE SELECT * FROM memories",
    "VACUUM FULL layout_toast",
)
_SIZES = (
    "SELECT pg_relation_size(%(t)s::regclass), pg_table_size(%(t)s::regclass)"
    " - pg_relation_size(%(t)s::regclass), pg_indexes_size(%(t)s::regclass)"
)
_DROP_LAYOUTS = (
    "DROP INDEX IF EXISTS layout_wide_search",
    "DROP TABLE IF EXISTS layout_no_vector",
    "DROP TABLE IF EXISTS layout_toast",
)
LAYOUT_ROUNDS = 2
#: Memories per batch and batches of the write cost with and without memory_words (--layouts).
WRITE_COST_BATCH = 1000
WRITE_COST_ROUNDS = 6
#: Memories written one at a time, each followed by a vector search (after_writes).
AFTER_WRITE_ROUNDS = 10
AFTER_WRITE_STORE = "bench/after-write"
#: Other words budgets than the backend's, for the variants table.
OTHER_BUDGETS = (2000, 3000, 5000)


@dataclass
class Side:
    """One backend's timings at one size, in milliseconds."""

    recall: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in MODES})
    vector: list[float] = field(default_factory=list)
    words: list[float] = field(default_factory=list)
    fetch: list[float] = field(default_factory=list)
    memories: list[float] = field(default_factory=list)
    cold_open: list[float] = field(default_factory=list)
    cold_search: list[float] = field(default_factory=list)
    write_one: list[float] = field(default_factory=list)
    search_after: list[float] = field(default_factory=list)


@dataclass
class Row:
    """Both backends at one size."""

    size: int
    sides: dict[str, Side]
    embed: list[float]
    text_fetch: list[float]
    binary_fetch: list[float]
    same_hits: float


def warm(
    homes: dict[str, Thatch], queries: Sequence[str], embedder: CachedEmbedder, row: Row
) -> None:
    """Recall in each mode, then its parts, on both backends, alternating which goes first."""
    stores = (STORE, GLOBAL_STORE)
    model = embedder.model_id
    embed = embedder.inner.embed_query
    row.embed.extend(timed(lambda q=q: embed(q)) for q in queries[:WARMUP])
    for query in queries[:WARMUP]:
        for th in homes.values():
            for mode in MODES:
                th.recall(query, stores=stores, limit=LIMIT, mode=mode, min_cosine=-1, record=False)
    agree = []
    for i, query in enumerate(queries):
        order = BACKENDS if i % 2 == 0 else BACKENDS[::-1]
        for mode in MODES:
            for name in order:
                th = homes[name]
                row.sides[name].recall[mode].append(
                    timed(
                        lambda th=th, q=query, m=mode: th.recall(
                            q, stores=stores, limit=LIMIT, mode=m, min_cosine=-1, record=False
                        )
                    )
                )
        found = {
            name: [h.memory.id for h in th.recall(query, stores=stores, limit=LIMIT, record=False)]
            for name, th in homes.items()
        }
        agree.append(len(set(found["sqlite"]) & set(found["postgres"])) / LIMIT)
        vector = embedder.embed_query(query)
        for name in order:
            th, side = homes[name], row.sides[name]
            storage = th.memory_storage
            scope = Scope(stores=th.stores_for(stores), branch=th.branch)
            side.vector.append(
                timed(lambda s=storage, v=vector, c=scope: s.vector_search(v, model, c, DEPTH))
            )
            side.words.append(timed(lambda s=storage, q=query, c=scope: s.text_search(q, c, DEPTH)))
            meaning = {h.id for h in storage.vector_search(vector, model, scope, DEPTH)}
            by_words = storage.text_search(query, scope, DEPTH)
            missing = [h.id for h in by_words if h.id not in meaning]
            side.fetch.append(timed(lambda s=storage, ids=missing: s.embeddings(ids, model)))
            shown = sorted(meaning)[:LIMIT]
            side.memories.append(timed(lambda s=storage, ids=shown: s.get_memories(ids)))
    row.same_hits = statistics.mean(agree)


def cold(db_path: Path, dsn: str, model: str, dim: int, rounds: int, row: Row) -> None:
    """Fresh handles' open and first vector search, then bare reads of the rows (PostgreSQL)."""
    query = unit_vectors(1, dim, np.random.default_rng(0))[0]
    scope = Scope(stores=(STORE, GLOBAL_STORE), branch=None)

    def opener(name: str) -> Callable[[], Any]:
        if name == "sqlite":
            return lambda: SQLiteStorage(db_path)
        # The cache's figures, on a server with pgvector too (--server-search).
        return lambda: PostgresStorage(dsn, SCHEMA, server_search="off")

    for r in range(rounds):
        for name in BACKENDS if r % 2 == 0 else BACKENDS[::-1]:
            side = row.sides[name]
            start = time.perf_counter()
            storage = opener(name)()
            opened = time.perf_counter()
            storage.vector_search(query, model, scope, DEPTH)
            searched = time.perf_counter()
            storage.close()
            side.cold_open.append((opened - start) * 1000)
            side.cold_search.append((searched - opened) * 1000)
        with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={SCHEMA}") as conn:
            row.text_fetch.append(timed(lambda c=conn: c.execute(ALL_ROWS, (model,)).fetchall()))
            with conn.cursor(binary=True) as cursor:
                row.binary_fetch.append(
                    timed(lambda c=cursor: c.execute(ALL_ROWS, (model,)).fetchall())
                )


def after_writes(homes: dict[str, Thatch], model: str, dim: int, row: Row) -> None:
    """One memory written through a warm handle, then its next vector search; deleted after.

    The write changes the handle's vectors, so its next search catches up:
    SQLite adds the row to its index; PostgreSQL reads every row's (id, rev)
    and fetches the new row. The memory goes to a store of its own, out of
    the searched scope, and is deleted once all rounds are timed.
    """
    rng = np.random.default_rng(1)
    scope = Scope(stores=(STORE, GLOBAL_STORE), branch=None)
    query = unit_vectors(1, dim, rng)[0]
    labels = [f"after-write-{row.size}-{r}" for r in range(AFTER_WRITE_ROUNDS)]
    for r, label in enumerate(labels):
        vector = unit_vectors(1, dim, rng)[0]
        for name in BACKENDS if r % 2 == 0 else BACKENDS[::-1]:
            storage, side = homes[name].memory_storage, row.sides[name]
            item = NewMemory(AFTER_WRITE_STORE, label, f"written at round {r}", None, model, vector)
            side.write_one.append(timed(lambda s=storage, i=item: s.write_memories([i])))
            side.search_after.append(
                timed(lambda s=storage: s.vector_search(query, model, scope, DEPTH))
            )
    for th in homes.values():
        for label in labels:
            th.memory_storage.delete_memory(AFTER_WRITE_STORE, label)


def explain(dsn: str, query_words: str) -> None:
    """Plans of the words search for ``query_words``: all its words, the affordable ones.

    The affordable ones twice (the second run finds the pages the first
    read in the server's buffers) and once ordered by id instead of
    ``ts_rank``, which leaves what the ranking itself costs.
    """
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={SCHEMA}") as conn:
        affordable = wordcounts.tsquery(conn, wordcounts.WordCounts(), query_words)
        unranked = _WORDS_SEARCH.replace("ORDER BY score DESC, m.id", "ORDER BY m.id")
        for name, expression, sql in (
            ("all words", text.tsquery(text.words(query_words)), _WORDS_SEARCH),
            ("affordable words", affordable, _WORDS_SEARCH),
            ("affordable words, again", affordable, _WORDS_SEARCH),
            ("affordable words, ordered by id (no ranking)", affordable, unranked),
        ):
            params = {
                "query": expression,
                "stores": [STORE, GLOBAL_STORE],
                "branch": None,
                "limit": DEPTH,
            }
            plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)" + sql, params)
            print(f"words search plan for {query_words!r}, {name} ({expression}):")
            for (line,) in plan.fetchall():
                print(f"    {line}")


@dataclass
class Variant:
    """One search of a query (text and vector) for the ``DEPTH`` best ids, and its figures."""

    name: str
    search: Callable[[str, np.ndarray], list[int]]
    #: The variant whose 20 best this one's R@20 is measured against (None: not measured).
    truth: str | None = None
    #: A second reference: for words, SQLite's search (another ranking, the same budget idea).
    also: str | None = None
    times: list[float] = field(default_factory=list)
    overlaps: list[float] = field(default_factory=list)
    also_overlaps: list[float] = field(default_factory=list)


def before(vectors: ModelVectors, query: np.ndarray, stores: Sequence[str]) -> list[int]:
    """The vector search as the backend made it before: the rows in scope copied, all sorted."""
    wanted = [code for code, name in enumerate(vectors.stores) if name in set(stores)]
    rows = np.flatnonzero(np.isin(vectors.store_of, wanted) & (vectors.branch_of == 0))
    scores = vectors.matrix[rows] @ query
    order = np.lexsort((vectors.ids[rows], -scores))[:DEPTH]
    return [int(i) for i in vectors.ids[rows[order]]]


def measure_variants(
    homes: dict[str, Thatch], dsn: str, queries: Sequence[str], embedder: CachedEmbedder
) -> list[Variant]:
    """Every variant on every query, rotating which goes first, with R@20 against its truth."""
    stores = (STORE, GLOBAL_STORE)
    model = embedder.model_id
    sqlite, pg = homes["sqlite"].memory_storage, homes["postgres"].memory_storage
    scope = Scope(stores=stores, branch=None)
    conn = psycopg.connect(dsn, autocommit=True, options=f"-c search_path={SCHEMA}")
    assert isinstance(pg, PostgresStorage)
    copy = pg._vectors(pg._cache, model, "read vectors")
    exact = attrs.evolve(copy, codes=None)

    def ids(hits: Sequence[Any]) -> list[int]:
        return [hit.id for hit in hits]

    def all_words(query: str) -> list[int]:
        expression = text.tsquery(text.words(query))
        if expression is None:
            return []
        params = {"query": expression, "stores": list(stores), "branch": None, "limit": DEPTH}
        return [row[0] for row in conn.execute(_WORDS_SEARCH, params, prepare=False).fetchall()]

    def at_budget(query: str, _vector: np.ndarray, budget: int) -> list[int]:
        kept = wordcounts.MAX_POSTINGS
        wordcounts.MAX_POSTINGS = budget
        try:
            return ids(pg.text_search(query, scope, DEPTH))
        finally:
            wordcounts.MAX_POSTINGS = kept

    def scan(vectors: ModelVectors, vector: np.ndarray) -> list[int]:
        return [i for i, _ in vectors.search(vector, stores, None, DEPTH)]

    budget_searches: dict[int, Callable[[str, np.ndarray], list[int]]] = {
        budget: functools.partial(at_budget, budget=budget)
        for budget in OTHER_BUDGETS
        if budget != wordcounts.MAX_POSTINGS
    }
    all_words_name = "words: pg all words (as before)"
    lite = "words: sqlite text_search"
    exact_name = "vector: pg float32 masked product"
    variants = [
        Variant(lite, lambda q, v: ids(sqlite.text_search(q, scope, DEPTH))),
        Variant(all_words_name, lambda q, v: all_words(q), None, lite),
        Variant(
            f"words: pg text_search ({wordcounts.MAX_POSTINGS:,} budget)",
            lambda q, v: ids(pg.text_search(q, scope, DEPTH)),
            all_words_name,
            lite,
        ),
        *(
            Variant(f"words: pg {budget:,} budget", searcher, all_words_name, lite)
            for budget, searcher in budget_searches.items()
        ),
        Variant(
            "vector: sqlite vector_search",
            lambda q, v: ids(sqlite.vector_search(v, model, scope, DEPTH)),
        ),
        Variant(exact_name, lambda q, v: scan(exact, v)),
        Variant(
            "vector: pg copy in scope + sort (before)",
            lambda q, v: before(copy, v, stores),
            exact_name,
        ),
        Variant(
            f"vector: pg vector_search ({'int8' if copy.codes is not None else 'float32'})",
            lambda q, v: ids(pg.vector_search(v, model, scope, DEPTH)),
            exact_name,
        ),
    ]
    by_name = {variant.name: variant for variant in variants}
    for query in queries[:WARMUP]:
        for variant in variants:
            variant.search(query, embedder.embed_query(query))
    for i, query in enumerate(queries):
        vector = embedder.embed_query(query)
        for k in range(len(variants)):
            variant = variants[(i + k) % len(variants)]
            variant.times.append(timed(lambda f=variant.search, q=query, v=vector: f(q, v)))
        for variant in variants:
            found = variant.search(query, vector)
            if variant.truth is not None:
                truth = by_name[variant.truth].search(query, vector)
                variant.overlaps.append(overlap(found, truth))
            if variant.also is not None:
                truth = by_name[variant.also].search(query, vector)
                variant.also_overlaps.append(overlap(found, truth))
    conn.close()
    return variants


@dataclass
class Layout:
    """One table the words search may read, its sizes (MB) and its timings (ms)."""

    name: str
    table: str
    #: psycopg's default (prepared from the fifth run on, so the server's generic plan), or never.
    prepare: bool | None
    heap_mb: float = 0.0
    toast_mb: float = 0.0
    index_mb: float = 0.0
    times: list[float] = field(default_factory=list)
    same: list[float] = field(default_factory=list)


def measure_layouts(dsn: str, queries: Sequence[str]) -> tuple[list[Layout], tuple[float, ...]]:
    """The backend's words search SQL on each table of ``LAYOUTS``, with the affordable words.

    Each table twice: through psycopg's default, which prepares a statement
    from its fifth run on (the server then runs its generic plan, as the
    backend did before it asked for no preparing), and never prepared.
    Layout by layout (a block each, rotating which goes first, ``LAYOUT_ROUNDS``
    rounds): one untimed pass over the queries, so that what fits in the
    server's buffers is there, then a timed pass. Interleaving query by query
    would make the tables evict each other, which no real server does. R@20
    against memory_words (the same rows, so 1.000 unless the plans differ).
    Also (c): the sizes of a copy of memories with ``toast_tuple_target =
    128`` and the vector's storage EXTERNAL, rewritten, and of its vectors.
    """
    stores = [STORE, GLOBAL_STORE]
    conn = psycopg.connect(dsn, autocommit=True, options=f"-c search_path={SCHEMA}")
    layouts = [
        Layout(f"{name}{'' if prepare is False else ', prepared'}", table, prepare)
        for name, table, _ in LAYOUTS
        for prepare in (None, False)
    ]
    for _, _, statements in LAYOUTS:
        for statement in statements:
            conn.execute(statement)
    for statement in TOAST_LAYOUT:
        conn.execute(statement)

    def sizes(table: str) -> tuple[float, float, float]:
        row = conn.execute(_SIZES, {"t": table}).fetchone()
        assert row is not None
        return (row[0] / 1e6, row[1] / 1e6, row[2] / 1e6)

    for layout in layouts:
        layout.heap_mb, layout.toast_mb, layout.index_mb = sizes(layout.table)
    toast_row = conn.execute("SELECT avg(pg_column_size(embedding)) FROM layout_toast").fetchone()
    toast = (*sizes("layout_toast"), float(toast_row[0]) if toast_row else 0.0)
    counts = wordcounts.WordCounts()
    expressions = [wordcounts.tsquery(conn, counts, q) for q in queries]

    def search(table: str, expression: str, prepare: bool | None = False) -> list[int]:
        sql = _WORDS_SEARCH.replace("FROM memory_words AS m", f"FROM {table} AS m")
        params = {"query": expression, "stores": stores, "branch": None, "limit": DEPTH}
        return [row[0] for row in conn.execute(sql, params, prepare=prepare).fetchall()]

    truth = {e: search("memory_words", e) for e in expressions if e is not None}
    for r in range(LAYOUT_ROUNDS):
        for k in range(len(layouts)):
            layout = layouts[(r + k) % len(layouts)]
            for expression in truth:
                search(layout.table, expression, layout.prepare)
            for expression, best in truth.items():
                layout.times.append(
                    timed(lambda t=layout.table, e=expression, p=layout.prepare: search(t, e, p))
                )
                layout.same.append(overlap(search(layout.table, expression, layout.prepare), best))
    for statement in _DROP_LAYOUTS:
        conn.execute(statement)
    conn.close()
    return layouts, toast


def write_cost(dsn: str, dim: int, vocab: Any, rng: np.random.Generator) -> dict[str, list[float]]:
    """Ms per memory of a batch of ``WRITE_COST_BATCH`` saves, without and with memory_words.

    The backend's INSERT (``thatch_postgres.storage``) in one transaction,
    into two fresh schemas: one at migration 5 (the wide rows' GIN index, no
    words table), one at the latest (the triggers fill memory_words and its
    index); ``WRITE_COST_ROUNDS`` rounds, alternating which goes first.
    """
    times: dict[str, list[float]] = {}
    conns: dict[str, psycopg.Connection[Any]] = {}
    for name, steps in (("before", MIGRATIONS[:5]), ("memory_words", MIGRATIONS)):
        schema = f"{SCHEMA}_write_{name}"
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"SET search_path TO {schema}")
        migrate(conn, schema, steps)
        conns[name], times[name] = conn, []
    for r in range(WRITE_COST_ROUNDS):
        vectors = unit_vectors(WRITE_COST_BATCH, dim, rng)
        contents = sentences(vocab, WRITE_COST_BATCH, rng)
        params = [
            pg_storage._params(NewMemory(STORE, f"w-{r}-{i}", text_, None, "m", vectors[i]))
            for i, text_ in enumerate(contents)
        ]
        for name in list(conns) if r % 2 == 0 else list(conns)[::-1]:
            conn = conns[name]
            start = time.perf_counter()
            with conn.transaction():
                for one in params:
                    conn.execute(pg_storage._INSERT, one)
            times[name].append((time.perf_counter() - start) * 1000 / WRITE_COST_BATCH)
    for name, conn in conns.items():
        conn.execute(f"DROP SCHEMA {SCHEMA}_write_{name} CASCADE")
        conn.close()
    return times


def print_layouts(size: int, layouts: Sequence[Layout], toast: tuple[float, ...]) -> None:
    """The layouts table of one size."""
    print(f"\nwords search by table at {size:,} memories (the backend's SQL, affordable words):")
    print(
        f"{'table':<44} | {'heap MB':>7} {'toast':>6} {'index':>6} | {'p50':>6} {'p95':>6} | R@20"
    )
    for layout in layouts:
        print(
            f"{layout.name:<44} | {layout.heap_mb:>7.1f} {layout.toast_mb:>6.1f} "
            f"{layout.index_mb:>6.1f} | {p50(layout.times):>6.2f} {p95(layout.times):>6.2f} | "
            f"{statistics.mean(layout.same):.3f}"
        )
    heap, toasted, index, vector = toast
    print(
        f"(c) memories with toast_tuple_target=128, embedding STORAGE EXTERNAL, VACUUM FULL: "
        f"heap {heap:.1f} MB, toast {toasted:.1f} MB, index {index:.1f} MB, "
        f"vector {vector:.0f} bytes in the row"
    )


def overlap(found: Sequence[int], truth: Sequence[int]) -> float:
    """Share of ``truth`` in ``found``."""
    return len(set(found) & set(truth)) / len(truth) if truth else 1.0


def print_variants(size: int, variants: Sequence[Variant]) -> None:
    """The variants table of one size."""
    print(f"\nvariants at {size:,} memories (ms; R@20 against the reference named above):")
    print(f"{'search':<40} | {'p50':>7} {'p95':>7} | {'R@20':>5} {'sqlite':>6}")
    for v in variants:
        r20 = f"{statistics.mean(v.overlaps):>5.3f}" if v.overlaps else f"{'':>5}"
        also = f"{statistics.mean(v.also_overlaps):>6.3f}" if v.also_overlaps else ""
        print(f"{v.name:<40} | {p50(v.times):>7.2f} {p95(v.times):>7.2f} | {r20} {also}")
    print(
        "R@20: share of the reference's 20 best found (words: all words; vector: float32);\n"
        "sqlite: share of SQLite's words search's 20 best found (bm25 there, ts_rank here)"
    )


def vacuum(dsn: str) -> float:
    """VACUUM ANALYZE the schema's memories and their words (as autovacuum would); seconds."""
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={SCHEMA}") as conn:
        start = time.perf_counter()
        conn.execute("VACUUM ANALYZE memories")
        conn.execute("VACUUM ANALYZE memory_words")
        return time.perf_counter() - start


def p50(values: Sequence[float]) -> float:
    return float(percentile(values, 50))


def p95(values: Sequence[float]) -> float:
    return float(percentile(values, 95))


def print_rows(rows: Sequence[Row]) -> None:
    """The warm, parts and cold tables, and the goal."""
    print("\nwarm recall through Thatch.recall (ms; query vector cached; SQLite / PostgreSQL):")
    print(
        f"{'memories':>9} {'mode':>6} | {'sqlite p50':>10} {'p95':>7} | {'pg p50':>7} {'p95':>7} "
        f"| {'ratio p50':>9} {'p95':>5}"
    )
    for r in rows:
        for mode in MODES:
            s, g = r.sides["sqlite"].recall[mode], r.sides["postgres"].recall[mode]
            print(
                f"{r.size:>9,} {mode:>6} | {p50(s):>10.2f} {p95(s):>7.2f} | {p50(g):>7.2f} "
                f"{p95(g):>7.2f} | {p50(g) / p50(s):>9.2f} {p95(g) / p95(s):>5.2f}"
            )
        print(
            f"{'':>9} embed_query p50 {p50(r.embed):.2f} ms (paid once per recall on either "
            f"side); top-5 hybrid ids alike: {r.same_hits:.3f}"
        )
    print("\nparts, p50 ms (SQLite / PostgreSQL):")
    print(f"{'memories':>9} | {'vector':>13} | {'words':>13} | {'fetch':>13} | {'memories':>13}")
    for r in rows:
        lite, pg = r.sides["sqlite"], r.sides["postgres"]
        cells = [
            f"{p50(getattr(lite, part)):>6.2f}/{p50(getattr(pg, part)):<6.2f}"
            for part in ("vector", "words", "fetch", "memories")
        ]
        print(f"{r.size:>9,} | " + " | ".join(cells))
    print(
        "vector = storage.vector_search (20 best), words = storage.text_search (20 best), "
        "fetch = storage.embeddings\nof the words hits the vector hits lack, memories = "
        "storage.get_memories of 5 ids"
    )
    print("\ncold: a fresh handle's open and first vector search (ms, median of the rounds):")
    print(
        f"{'memories':>9} | {'sqlite open':>11} {'search':>7} | {'pg open':>7} {'search':>7} "
        f"| {'pg bare read: text':>18} {'binary':>7}"
    )
    for r in rows:
        lite, pg = r.sides["sqlite"], r.sides["postgres"]
        print(
            f"{r.size:>9,} | {p50(lite.cold_open):>11.1f} {p50(lite.cold_search):>7.1f} | "
            f"{p50(pg.cold_open):>7.1f} {p50(pg.cold_search):>7.1f} | "
            f"{p50(r.text_fetch):>18.1f} {p50(r.binary_fetch):>7.1f}"
        )
    print(
        f"\none memory written through a warm handle, then its next vector search "
        f"(ms, median of {AFTER_WRITE_ROUNDS}):"
    )
    print(f"{'memories':>9} | {'sqlite write':>12} {'search':>7} | {'pg write':>8} {'search':>7}")
    for r in rows:
        lite, pg = r.sides["sqlite"], r.sides["postgres"]
        print(
            f"{r.size:>9,} | {p50(lite.write_one):>12.1f} {p50(lite.search_after):>7.1f} | "
            f"{p50(pg.write_one):>8.1f} {p50(pg.search_after):>7.1f}"
        )
    for r in rows:
        s, g = r.sides["sqlite"].recall["hybrid"], r.sides["postgres"].recall["hybrid"]
        ratio = p50(g) / p50(s)
        met = "met" if ratio <= GOAL_RATIO else "NOT met"
        print(f"goal at {r.size:,}: hybrid p50 ratio {ratio:.2f} <= {GOAL_RATIO:g}: {met}")


def main(argv: Sequence[str] | None = None) -> int:
    """Start a server, fill both homes size by size, time warm and cold recall at each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size")
    parser.add_argument("--rounds", type=int, default=5, help="cold loads per backend per size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--explain", action="store_true", help="print a words search's plan")
    parser.add_argument("--variants", action="store_true", help="also time candidate fixes")
    parser.add_argument(
        "--layouts", action="store_true", help="also time the words search on other tables"
    )
    parser.add_argument(
        "--server-search",
        action="store_true",
        help="on pgserver's PostgreSQL with pgvector; also time the server's search by meaning",
    )
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    rng = np.random.default_rng(args.seed)
    texts = read_queries(DATA / "queries.jsonl")
    queries = [texts[i % len(texts)] for i in range(max(args.queries, WARMUP))]
    vocab = vocabulary(DATA, 3000, rng)
    pg_cluster = load_pg_cluster()

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    rows: list[Row] = []
    tables: list[tuple[int, list[Variant]]] = []
    layout_tables: list[tuple[int, list[Layout], tuple[float, ...]]] = []
    server_rows: list[ServerRow] = []
    with contextlib.ExitStack() as stack:
        programs = None
        if args.server_search:
            programs = stack.enter_context(pg_cluster.pgvector_programs())
        server = stack.enter_context(pg_cluster.running_server(programs))
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="thatch-pg-recall-"))
        dsn = server.dsn()
        more = ""
        if args.server_search:
            # Made before the home opens, so that its writes fill it.
            pg_server_search.make_table(dsn, SCHEMA)
            more = 'server_search = "off"\n'
        base = open_home(Path(folder, "sqlite"), None, None)
        embedder = CachedEmbedder(base.embedder)
        homes = {
            "sqlite": open_home(Path(folder, "sqlite"), embedder, None),
            "postgres": open_home(
                Path(folder, "postgres"), embedder, postgres_config(dsn, SCHEMA, more)
            ),
        }
        model, dim = embedder.model_id, embedder.dim
        print(f"model {model} (dim {dim}); {len(queries)} queries; server {server.root}")
        written = 0
        for size in sizes:
            count = size - written
            fresh = unit_vectors(count, dim, rng)
            contents = sentences(vocab, count, rng)
            for name, th in homes.items():
                start = time.perf_counter()
                write_memories(th.memory_storage, STORE, written, fresh, contents, model)
                took = time.perf_counter() - start
                print(f"  {name}: {count:,} memories written in {took:.1f} s")
            written = size
            print(f"  postgres: VACUUM ANALYZE in {vacuum(dsn):.1f} s")
            if args.explain:
                explain(dsn, queries[0])
            row = Row(size, {name: Side() for name in BACKENDS}, [], [], [], 0.0)
            warm(homes, queries, embedder, row)
            cold(Path(homes["sqlite"].config.db_path), dsn, model, dim, args.rounds, row)
            after_writes(homes, model, dim, row)
            rows.append(row)
            if args.variants:
                tables.append((size, measure_variants(homes, dsn, queries, embedder)))
            if args.layouts:
                layout_tables.append((size, *measure_layouts(dsn, queries)))
            if args.server_search:
                server_rows.append(
                    pg_server_search.measure(
                        size,
                        homes,
                        dsn,
                        SCHEMA,
                        (STORE, GLOBAL_STORE),
                        queries,
                        embedder,
                        args.rounds,
                    )
                )
        if args.layouts:
            writes = write_cost(dsn, dim, vocab, rng)
        for th in homes.values():
            th.close()
        base.close()
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print_rows(rows)
    if server_rows:
        pg_server_search.print_rows(server_rows)
    for size, variants in tables:
        print_variants(size, variants)
    for size, layouts, toast in layout_tables:
        print_layouts(size, layouts, toast)
    if args.layouts:
        print(
            f"\nsaving memories ({WRITE_COST_ROUNDS} batches of {WRITE_COST_BATCH:,}, "
            "one transaction each, the backend's INSERT; ms per memory):"
        )
        for name, values in writes.items():
            print(f"  {name:<13} p50 {p50(values):.3f}  mean {statistics.mean(values):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
