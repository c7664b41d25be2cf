"""Recall latency at 1k, 10k and 100k memories, beside the floor of a bare numpy search.

One process, one throw-away home. Memories are added straight through the
storage backend (``th.memory_storage.write_memories``) because embedding 100k texts
with the real model would take far too long: each synthetic memory carries a
random unit float32 vector of the real model's dimension and model id, and a
synthetic sentence drawn from a vocabulary with a Zipf-like word frequency
(the words of bench/data plus made-up identifiers), so the full-text index
has realistic work: common words match many memories, rare ones few.

Queries are the real texts of bench/data/queries.jsonl, cycled; every recall
embeds its query with the real model, as an agent's recall does. Each timed
recall is ``th.recall(query, stores=(repo store, global), limit=5,
min_cosine=-1, record=False)`` with every memory in scope: the worst case,
where no hit is dropped by the cosine floor and five memories are loaded.

The parts of a recall are timed too, each on its own: the query embedding,
the backend's vector search, its full-text search (plus, for comparison, the
full-text search of the query without English stop words), and the fetch of
the stored vectors of the words hits that the vector hits lack.

The floor is the least any exact recall of the same model can cost: embed the
query with the same embedder, one matrix-vector product over the same vectors
held in one numpy array, and ``argpartition`` for the top 5.

A store of at least ``thatch_sqlite.vectors.QUANTIZE_AT`` memories is searched
through int8 codes whose candidates are scored again exactly. To compare,
every recall is also run on a second storage handle on the same file whose
index keeps every store float32 (the exact search, as before the codes):
"exact recall". Recall, exact recall and floor run back to back for each
query, rotating which goes first. "R@20" is the share of the exact search's
20 best (what recall takes from the meaning list) that the default search
also returns.

``--variants`` adds a table of first-pass searches for the 20 best at each
size, timed in turn on every query: the index (exact, and int8 with 1, 2 or 4
times the candidates re-scored), and bare numpy products of float16 and int8
copies of the vectors (numpy has no SIMD kernel for either). ``--hnsw`` adds an
HNSW graph (usearch, int8, if it is importable: it is not a dependency) with
its build time and memory, its candidates re-scored from the float32 matrix.

    uv run python bench/recall_latency.py
    uv run python bench/recall_latency.py --sizes 1000,10000
    uv run python bench/recall_latency.py --sizes 100000 --variants
    uv run --with usearch python bench/recall_latency.py --sizes 100000 --variants --hnsw
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import thatch
from data_sets import DATA, read_queries
from measure import percentile, proc_memory, timed
from stop_words import without_stop_words
from synthetic import sentences, unit_vectors, vocabulary, write_memories
from thatch.api import Thatch
from thatch.memory.recall import recall as recall_in
from thatch.plugin import quantized
from thatch.plugin.records import GLOBAL_STORE, Scope
from thatch_sqlite import vectors
from thatch_sqlite.storage import SQLiteStorage

STORE = "bench/repo"
LIMIT = 5
WARMUP = 20
GOAL_P50_MS = 15.0
GOAL_RATIO = 3.0
DEPTH = 20  # what recall fetches from each list for limit 5


@dataclass(frozen=True)
class Row:
    """Latency figures of one corpus size, in milliseconds."""

    size: int
    recall: list[float]
    exact_recall: list[float]
    floor: list[float]
    embed: list[float]
    vector: list[float]
    words: list[float]
    content_words: list[float]
    fetch: list[float]
    product: list[float]
    exact_vector: list[float]
    overlap: list[float]
    quantized: bool


def floor_search(th: Thatch, matrix: np.ndarray, query: str) -> np.ndarray:
    """Embed the query, one matrix-vector product, top ``LIMIT`` by argpartition."""
    scores = matrix @ th.embedder.embed_query(query)
    best = np.argpartition(-scores, LIMIT - 1)[:LIMIT]
    return best[np.argsort(-scores[best])]


def exact_storage(th: Thatch) -> SQLiteStorage:
    """A second handle on the home's file whose vector index keeps every store float32."""
    saved = vectors.QUANTIZE_AT
    vectors.QUANTIZE_AT = sys.maxsize
    try:
        return SQLiteStorage(th.config.db_path)
    finally:
        vectors.QUANTIZE_AT = saved


def overlap(found: Sequence[int], truth: Sequence[int]) -> float:
    """Share of ``truth`` in ``found``."""
    return len(set(found) & set(truth)) / len(truth) if truth else 1.0


def measure(th: Thatch, exact: SQLiteStorage, matrix: np.ndarray, queries: Sequence[str]) -> Row:
    """Time recall, exact recall and the floor on every query (rotating order), then the parts."""
    stores = (STORE, GLOBAL_STORE)
    scope = Scope(stores=stores, branch=th.branch)
    model = th.embedder.model_id
    storage = th.memory_storage

    def recall(query: str) -> float:
        return timed(
            lambda: th.recall(query, stores=stores, limit=LIMIT, min_cosine=-1, record=False)
        )

    def exact_recall(query: str) -> float:
        # Resolving the store names is part of th.recall: paid here too.
        return timed(
            lambda: recall_in(
                exact,
                th.embedder,
                query,
                Scope(stores=th.stores_for(stores), branch=th.branch),
                limit=LIMIT,
                min_cosine=-1,
                record=False,
            )
        )

    def floor(query: str) -> float:
        return timed(lambda: floor_search(th, matrix, query))

    sides = (recall, exact_recall, floor)
    for query in queries[:WARMUP]:
        for side in sides:
            side(query)
    times: list[list[float]] = [[], [], []]
    for i, query in enumerate(queries):
        for k in range(3):
            side = (i + k) % 3
            times[side].append(sides[side](query))

    embed_ms, vector_ms, words_ms, content_ms, fetch_ms, product_ms = [], [], [], [], [], []
    exact_ms, overlaps = [], []
    resolve_ms = [timed(lambda: th.stores_for(stores)) for _ in queries]
    print(f"  th.stores_for(the two stores) p50 {statistics.median(resolve_ms):.2f} ms")
    for query in queries:
        embed_ms.append(timed(lambda q=query: th.embedder.embed_query(q)))
        vector = th.embedder.embed_query(query)
        vector_ms.append(timed(lambda v=vector: storage.vector_search(v, model, scope, DEPTH)))
        exact_ms.append(timed(lambda v=vector: exact.vector_search(v, model, scope, DEPTH)))
        truth = [hit.id for hit in exact.vector_search(vector, model, scope, DEPTH)]
        by_meaning = [hit.id for hit in storage.vector_search(vector, model, scope, DEPTH)]
        overlaps.append(overlap(by_meaning, truth))
        words_ms.append(timed(lambda q=query: storage.text_search(q, scope, DEPTH)))
        # Recall fetches the stored vectors of the words hits the meaning list lacks.
        missing = [h.id for h in storage.text_search(query, scope, DEPTH)]
        missing = [memory_id for memory_id in missing if memory_id not in set(by_meaning)]
        fetch_ms.append(timed(lambda ids=missing: storage.embeddings(ids, model)))
        content = without_stop_words(query)
        content_ms.append(timed(lambda q=content: storage.text_search(q, scope, DEPTH)))
        product_ms.append(timed(lambda v=vector: np.argpartition(-(matrix @ v), LIMIT - 1)))
    return Row(
        len(matrix),
        times[0],
        times[1],
        times[2],
        embed_ms,
        vector_ms,
        words_ms,
        content_ms,
        fetch_ms,
        product_ms,
        exact_ms,
        overlaps,
        len(matrix) * (1 - 1 / 10) >= vectors.QUANTIZE_AT,
    )


@dataclass(frozen=True)
class Variant:
    """One first-pass search for the ``DEPTH`` best: its times and R@20 against exact."""

    name: str
    search: Callable[[np.ndarray], Sequence[int]]
    times: list[float]
    overlaps: list[float]


def top_rows(scores: np.ndarray, count: int) -> np.ndarray:
    """Rows of the ``count`` best scores, unordered."""
    cut = len(scores) - count
    return np.argpartition(scores, cut)[cut:] if cut > 0 else np.arange(len(scores))


def rescored(ids: np.ndarray, candidates: np.ndarray, matrix: np.ndarray, query: np.ndarray):
    """The ``DEPTH`` best of ``candidates`` (rows of ``matrix``) by exact cosine, as ids."""
    best = candidates[top_rows(matrix[candidates] @ query, DEPTH)]
    return ids[best].tolist()


def with_oversample(storage: SQLiteStorage, factor: int, scope: Scope, model: str):
    """The index's search with ``factor`` x the results re-scored (no minimum)."""

    def search(query: np.ndarray) -> list[int]:
        saved = vectors.OVERSAMPLE, vectors.MIN_CANDIDATES
        vectors.OVERSAMPLE, vectors.MIN_CANDIDATES = factor, 0
        try:
            return [hit.id for hit in storage.vector_search(query, model, scope, DEPTH)]
        finally:
            vectors.OVERSAMPLE, vectors.MIN_CANDIDATES = saved

    return search


def hnsw_variant(matrix: np.ndarray, ids: np.ndarray) -> Variant | None:
    """An int8 HNSW graph over ``matrix`` (usearch), if usearch can be imported."""
    try:
        from usearch.index import Index
    except ImportError:
        print("usearch is not importable: no HNSW variant (uv run --with usearch ...)")
        return None
    before = proc_memory(os.getpid())["VmRSS"]
    start = time.perf_counter()
    index = Index(ndim=matrix.shape[1], metric="ip", dtype="i8", connectivity=16)
    index.add(np.arange(len(matrix), dtype=np.uint64), matrix, threads=os.cpu_count() or 1)
    built = time.perf_counter() - start
    grown = (proc_memory(os.getpid())["VmRSS"] - before) / 1024
    print(f"HNSW (usearch i8, M=16): built in {built:.1f} s on all cores, RSS +{grown:.1f} MB")

    def search(query: np.ndarray) -> list[int]:
        found = index.search(query, 2 * DEPTH, threads=1)
        return rescored(ids, found.keys.astype(np.int64), matrix, query)

    return Variant("HNSW usearch i8 M=16 ef=64, 2x re-scored", search, [], [])


def measure_variants(
    th: Thatch, exact: SQLiteStorage, matrix: np.ndarray, queries: Sequence[str], hnsw: bool
) -> list[Variant]:
    """Each first-pass search on every query, in turn, with R@20 against the exact index."""
    scope = Scope(stores=(STORE, GLOBAL_STORE), branch=th.branch)
    model = th.embedder.model_id
    ids = np.arange(1, len(matrix) + 1, dtype=np.int64)  # synthetic memory i has id i + 1
    half = matrix.astype(np.float16)
    scale = quantized.scale_for(matrix)
    codes = quantized.encode(matrix, scale)

    def index_exact(query: np.ndarray) -> list[int]:
        return [hit.id for hit in exact.vector_search(query, model, scope, DEPTH)]

    def numpy_f16(query: np.ndarray) -> list[int]:
        return rescored(ids, top_rows(half @ query.astype(np.float16), 2 * DEPTH), matrix, query)

    def numpy_i8(query: np.ndarray) -> list[int]:
        scores = codes @ quantized.encode(query, scale).astype(np.int32)
        return rescored(ids, top_rows(scores, 2 * DEPTH), matrix, query)

    def numkong_i8(query: np.ndarray) -> list[int]:
        scores = quantized.dots(quantized.encode(query, scale), codes)
        return rescored(ids, top_rows(scores, 2 * DEPTH), matrix, query)

    variants = [
        Variant("index, float32 exact (before)", index_exact, [], []),
        *(
            Variant(
                f"index, int8 + {k}x re-scored from SQLite",
                with_oversample(th.memory_storage, k, scope, model),
                [],
                [],
            )
            for k in (1, 2, 4)
        ),
        Variant(
            "bare numpy float32 product",
            lambda q: ids[top_rows(matrix @ q, DEPTH)].tolist(),
            [],
            [],
        ),
        Variant("bare numpy float16 product, 2x re-scored", numpy_f16, [], []),
        Variant("bare numpy int8 product, 2x re-scored", numpy_i8, [], []),
        Variant("bare numkong int8 scan, 2x re-scored", numkong_i8, [], []),
    ]
    if hnsw:
        graph = hnsw_variant(matrix, ids)
        if graph is not None:
            variants.append(graph)
    vectors_of = [th.embedder.embed_query(query) for query in queries]
    for vector in vectors_of[:WARMUP]:
        for variant in variants:
            variant.search(vector)
    for i, vector in enumerate(vectors_of):
        truth = index_exact(vector)
        for k in range(len(variants)):
            variant = variants[(i + k) % len(variants)]
            variant.times.append(timed(lambda v=vector, f=variant.search: f(v)))
            variant.overlaps.append(overlap(variant.search(vector), truth))
    return variants


def print_rows(rows: Sequence[Row]) -> None:
    """The results table and the goals."""
    print(
        f"{'memories':>9} {'int8':>4} | {'recall p50':>10} {'p95':>7} | {'exact p50':>9} "
        f"{'p95':>7} | {'floor p50':>9} {'p95':>7} | {'ratio p50':>9} {'p95':>5} | "
        f"{'embed':>6} {'vector':>7} {'exact':>6} {'R@20':>5} {'words':>7} {'words-sw':>8} "
        f"{'fetch':>6} {'numpy':>6}"
    )
    print("-" * 150)
    for r in rows:
        p50, p95 = percentile(r.recall, 50), percentile(r.recall, 95)
        e50, e95 = percentile(r.exact_recall, 50), percentile(r.exact_recall, 95)
        f50, f95 = percentile(r.floor, 50), percentile(r.floor, 95)
        print(
            f"{r.size:>9,} {'yes' if r.quantized else 'no':>4} | {p50:>10.2f} {p95:>7.2f} | "
            f"{e50:>9.2f} {e95:>7.2f} | {f50:>9.2f} {f95:>7.2f} "
            f"| {p50 / f50:>9.2f} {p95 / f95:>5.2f} | {statistics.median(r.embed):>6.2f} "
            f"{statistics.median(r.vector):>7.2f} {statistics.median(r.exact_vector):>6.2f} "
            f"{statistics.mean(r.overlap):>5.3f} {statistics.median(r.words):>7.2f} "
            f"{statistics.median(r.content_words):>8.2f} {statistics.median(r.fetch):>6.2f} "
            f"{statistics.median(r.product):>6.3f}"
        )
    print(
        "ms; int8 = the repository store is past QUANTIZE_AT; recall = th.recall incl. query "
        "embedding;\nexact = the same recall on a handle whose index keeps float32 (the exact "
        "search); floor = embed + numpy product + argpartition;\nparts (p50): embed = "
        "embed_query, vector = storage.vector_search (20 best), exact = the same on the exact "
        "handle,\nR@20 = mean share of the exact 20 best found, words = storage.text_search, "
        "words-sw = storage.text_search of the query\nwithout English stop words (not what "
        "recall does today), fetch = storage.embeddings of the words hits missing from\nthe "
        "vector hits, numpy = product + argpartition alone"
    )
    for r in rows:
        p50 = percentile(r.recall, 50)
        ratio = p50 / percentile(r.floor, 50)
        goals = [
            f"ratio {ratio:.2f} <= {GOAL_RATIO:g}: {'met' if ratio <= GOAL_RATIO else 'NOT met'}"
        ]
        if r.size >= 100_000:
            met = "met" if p50 <= GOAL_P50_MS else "NOT met"
            goals.insert(0, f"p50 {p50:.2f} ms <= {GOAL_P50_MS:g} ms: {met}")
        print(f"goal at {r.size:,}: " + "; ".join(goals))


def print_variants(size: int, variants: Sequence[Variant]) -> None:
    """The first-pass table of one size."""
    print(f"\nfirst pass for the {DEPTH} best at {size:,} memories (ms; R@20 against exact):")
    print(f"{'search':<48} | {'p50':>7} {'p95':>7} | {'R@20':>6} {'min':>5}")
    for v in variants:
        print(
            f"{v.name:<48} | {percentile(v.times, 50):>7.3f} {percentile(v.times, 95):>7.3f} | "
            f"{statistics.mean(v.overlaps):>6.3f} {min(v.overlaps):>5.2f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Fill a throw-away home size by size and time recall at each size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--variants", action="store_true", help="also time first-pass variants")
    parser.add_argument("--hnsw", action="store_true", help="with --variants: an HNSW graph too")
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    rng = np.random.default_rng(args.seed)
    texts = read_queries(DATA / "queries.jsonl")
    queries = [texts[i % len(texts)] for i in range(max(args.queries, WARMUP))]
    vocab = vocabulary(DATA, 3000, rng)

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    rows, tables = [], []
    with (
        tempfile.TemporaryDirectory(prefix="thatch-latency-") as home,
        thatch.open(home=home) as th,
    ):
        model, dim = th.embedder.model_id, th.embedder.dim
        print(f"model {model} (dim {dim}); vocabulary {len(vocab)} words; {len(queries)} queries")
        exact = exact_storage(th)
        matrix = np.empty((0, dim), np.float32)
        for size in sizes:
            start = time.perf_counter()
            count = size - len(matrix)
            fresh = unit_vectors(count, dim, rng)
            contents = sentences(vocab, count, rng)
            write_memories(th.memory_storage, STORE, len(matrix), fresh, contents, model)
            matrix = np.concatenate([matrix, fresh])
            print(f"  {size:,} memories written in {time.perf_counter() - start:.1f} s")
            rows.append(measure(th, exact, matrix, queries))
            if args.variants:
                tables.append((size, measure_variants(th, exact, matrix, queries, args.hnsw)))
        exact.close()
    print(f"load average at end: {os.getloadavg()[0]:.2f}\n")
    print_rows(rows)
    for size, variants in tables:
        print_variants(size, variants)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
