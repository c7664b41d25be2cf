"""The server's search by meaning (pgvector) beside the cache's and SQLite's.

What bench/postgres_recall.py ``--server-search`` adds.

Run on the PostgreSQL 16 with pgvector that the ``pgserver`` wheel ships
(tests/postgres/pg_cluster.py ``pgvector_programs``). The PostgreSQL home
of the main benchmark is set to ``server_search = "off"``, so its figures
stay the cache's; the table of vectors is made before it opens, so its
writes fill it. Per size, :func:`measure` times on that same schema:

- the copy of every memory's vector into ``memory_vectors`` (what a
  server's first handle with pgvector does once) and the HNSW index's build
  (``CREATE INDEX CONCURRENTLY``, as the backend builds it), from empty;
- warm: ``vector_search`` for the 20 best of the two stores through SQLite,
  the PostgreSQL cache (int8 scan, a warm copy) and a handle whose
  ``server_search_from = 0`` (the server ranks), interleaved, each with
  R@20 against exact search (the float32 masked product over the copy);
- ``hnsw.ef_search`` by hand, for the whole scope and for a scope of one
  store in ten (the global store), p50 and R@20 at each value;
- one memory written at a time with the index there (its graph takes the
  vector in the write's transaction), against the same write without
  the index, ``WRITES`` of each, deleted after;
- cold: a fresh handle's open and first search, with the server searching
  (no vectors read into the process) and with the cache (every vector read);
  ``rounds`` rounds, alternating.

The index is dropped afterwards, so that the next size's writes do not
pay the graph's inserts.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import attrs
import numpy as np
import psycopg
from cached_embedder import CachedEmbedder
from measure import percentile, timed
from thatch.api import Thatch
from thatch.plugin.records import GLOBAL_STORE, NewMemory, Scope
from thatch_postgres import pgvector, server_search
from thatch_postgres.storage import PostgresStorage

#: The ``hnsw.ef_search`` values timed by hand.
EF_VALUES = (40, 100, 200, 400, 1000)
#: Queries per ``ef_search`` value and scope.
EF_QUERIES = 100
WARMUP = 20
#: Memories written one at a time, with the index and without.
WRITES = 20
WRITE_STORE = "bench/server-search-writes"
#: Where pgserver's initdb creates the extension (thatch_postgres.pgvector).
EXTENSION_SCHEMA = "public"


@dataclass
class ServerRow:
    """The server search's figures at one size (ms unless named otherwise)."""

    size: int
    copy_s: float = 0.0
    build_s: float = 0.0
    index_mb: float = 0.0
    times: dict[str, list[float]] = field(default_factory=dict)
    recall: dict[str, list[float]] = field(default_factory=dict)
    #: (scope, ef_search) -> times, R@20.
    efs: dict[tuple[str, int], tuple[list[float], list[float]]] = field(default_factory=dict)
    cold_open: dict[str, list[float]] = field(default_factory=dict)
    cold_search: dict[str, list[float]] = field(default_factory=dict)
    #: "with index" / "without": ms per write of one memory.
    writes: dict[str, list[float]] = field(default_factory=dict)


def make_table(dsn: str, schema: str) -> None:
    """Make ``memory_vectors`` in the empty schema, as a first handle with pgvector does."""
    storage = PostgresStorage(dsn, schema, server_search_from=0)
    assert storage.server_search == "in use", storage.server_search
    storage.close()


def measure(
    size: int,
    homes: dict[str, Thatch],
    dsn: str,
    schema: str,
    stores: tuple[str, ...],
    queries: Sequence[str],
    embedder: CachedEmbedder,
    rounds: int,
) -> ServerRow:
    """Every figure of the module docstring at ``size``, searching ``stores``."""
    row = ServerRow(size)
    model, dim = embedder.model_id, embedder.dim
    scope = Scope(stores=stores, branch=None)
    conn = psycopg.connect(
        dsn, autocommit=True, options=f"-c search_path={schema},{EXTENSION_SCHEMA}"
    )
    name = pgvector.index_name(model, dim)
    conn.execute(f"DROP INDEX IF EXISTS {name}")
    conn.execute("TRUNCATE memory_vectors")
    start = time.perf_counter()
    pgvector.fill_gaps(conn, schema, EXTENSION_SCHEMA)
    row.copy_s = time.perf_counter() - start
    conn.execute("VACUUM ANALYZE memory_vectors")
    start = time.perf_counter()
    assert pgvector.build_index(conn, schema, EXTENSION_SCHEMA, model, dim)
    row.build_s = time.perf_counter() - start
    size_row = conn.execute("SELECT pg_relation_size(%s::regclass)", (name,)).fetchone()
    row.index_mb = size_row[0] / 1e6 if size_row else 0.0

    cache = homes["postgres"].memory_storage
    sqlite = homes["sqlite"].memory_storage
    assert isinstance(cache, PostgresStorage)
    assert cache.server_search == "off"
    server = PostgresStorage(dsn, schema, server_search_from=0)
    exact = attrs.evolve(cache._vectors(cache._cache, model, "read vectors"), codes=None)
    sides: dict[str, Callable[[np.ndarray], list[int]]] = {
        "sqlite": lambda v: [h.id for h in sqlite.vector_search(v, model, scope, 20)],
        "pg cache": lambda v: [h.id for h in cache.vector_search(v, model, scope, 20)],
        "pg server": lambda v: [h.id for h in server.vector_search(v, model, scope, 20)],
    }
    vectors = [embedder.embed_query(q) for q in queries]
    for vector in vectors[:WARMUP]:
        for search in sides.values():
            search(vector)
    for i, vector in enumerate(vectors):
        truth = [memory_id for memory_id, _ in exact.search(vector, stores, None, 20)]
        names = list(sides)
        for k in range(len(names)):
            side = names[(i + k) % len(names)]
            row.times.setdefault(side, []).append(timed(lambda s=sides[side], v=vector: s(v)))
            row.recall.setdefault(side, []).append(overlap(sides[side](vector), truth))
    assert not server._cache._models, "the server handle never loaded the cache"

    for scope_name, some in (("all", stores), ("global, 1 in 10", (GLOBAL_STORE,))):
        narrow = Scope(stores=some, branch=None)
        for ef in EF_VALUES:
            times: list[float] = []
            recalls: list[float] = []
            kept = server_search.ef_search
            server_search.ef_search = lambda _limit, _total, _in_scope, ef=ef: ef
            try:
                for vector in vectors[:EF_QUERIES]:
                    truth = [i for i, _ in exact.search(vector, some, None, 20)]
                    times.append(
                        timed(lambda v=vector, n=narrow: server.vector_search(v, model, n, 20))
                    )
                    found = [h.id for h in server.vector_search(vector, model, narrow, 20)]
                    recalls.append(overlap(found, truth))
            finally:
                server_search.ef_search = kept
            row.efs[(scope_name, ef)] = (times, recalls)
    server.close()

    rng = np.random.default_rng(size)
    for side in ("with index", "without"):
        if side == "without":
            conn.execute(f"DROP INDEX {name}")
        for i in range(WRITES):
            vector = rng.standard_normal(dim).astype(np.float32)
            item = NewMemory(WRITE_STORE, f"w-{side}-{i}", "one write", None, model, vector)
            row.writes.setdefault(side, []).append(timed(lambda m=item: cache.write_memories([m])))
    for memory in cache.list_memories([WRITE_STORE]):
        cache.delete_memory(WRITE_STORE, memory.label)
    assert pgvector.build_index(conn, schema, EXTENSION_SCHEMA, model, dim)

    query = vectors[0]
    openers: dict[str, Callable[[], PostgresStorage]] = {
        "server": lambda: PostgresStorage(dsn, schema, server_search_from=0),
        "cache": lambda: PostgresStorage(dsn, schema, server_search="off"),
    }
    for r in range(rounds):
        for side in openers if r % 2 == 0 else list(openers)[::-1]:
            start = time.perf_counter()
            storage = openers[side]()
            opened = time.perf_counter()
            storage.vector_search(query, model, scope, 20)
            searched = time.perf_counter()
            storage.close()
            row.cold_open.setdefault(side, []).append((opened - start) * 1000)
            row.cold_search.setdefault(side, []).append((searched - opened) * 1000)
    conn.execute(f"DROP INDEX {name}")
    conn.close()
    return row


def overlap(found: Sequence[int], truth: Sequence[int]) -> float:
    return len(set(found) & set(truth)) / len(truth) if truth else 1.0


def _p(values: Sequence[float], q: float) -> float:
    return float(percentile(values, q))


def print_rows(rows: Sequence[ServerRow]) -> None:
    """The server search's tables."""
    print("\nsearch by meaning, 20 best of the two stores (ms; R@20 against exact float32):")
    print(f"{'memories':>9} | {'search':<10} | {'p50':>7} {'p95':>7} | {'R@20':>5}")
    for r in rows:
        for side, times in r.times.items():
            print(
                f"{r.size:>9,} | {side:<10} | {_p(times, 50):>7.2f} {_p(times, 95):>7.2f} | "
                f"{statistics.mean(r.recall[side]):>5.3f}"
            )
    print(
        f"(the server at ef_search {server_search.EF_SEARCH} for the whole scope, "
        "as the backend sets it)"
    )
    print("\nhnsw.ef_search by hand (p50 ms / R@20 against exact):")
    scopes = sorted({scope for r in rows for scope, _ in r.efs})
    for r in rows:
        for scope in scopes:
            cells = [
                f"{ef}: {_p(r.efs[(scope, ef)][0], 50):.2f}/"
                f"{statistics.mean(r.efs[(scope, ef)][1]):.3f}"
                for ef in EF_VALUES
            ]
            print(f"{r.size:>9,} | {scope:<16} | " + "  ".join(cells))
    print("\nthe table of vectors and its index, from empty (s):")
    print(f"{'memories':>9} | {'copy':>6} | {'HNSW build':>10} | {'index MB':>8}")
    for r in rows:
        print(f"{r.size:>9,} | {r.copy_s:>6.1f} | {r.build_s:>10.1f} | {r.index_mb:>8.1f}")
    print("\none memory written at a time (ms, p50 / p95), with the HNSW index and without:")
    for r in rows:
        cells = [
            f"{side} {_p(times, 50):.2f} / {_p(times, 95):.2f}" for side, times in r.writes.items()
        ]
        print(f"{r.size:>9,} | " + " | ".join(cells))
    print("\ncold: a fresh handle's open and first search (ms, median of the rounds):")
    print(
        f"{'memories':>9} | {'server: open':>12} {'search':>7} | {'cache: open':>11} {'search':>7}"
    )
    for r in rows:
        print(
            f"{r.size:>9,} | {_p(r.cold_open['server'], 50):>12.1f} "
            f"{_p(r.cold_search['server'], 50):>7.1f} | {_p(r.cold_open['cache'], 50):>11.1f} "
            f"{_p(r.cold_search['cache'], 50):>7.1f}"
        )
