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
"exact recall". Hybrid recall runs its words search on a worker thread
beside the query embedding and the meaning search, and splits an int8 scan
of 32k rows or more between two threads; "in line" is the same recall with
both on the caller's thread, as before. Recall, in line, exact recall and
floor run back to back for each query, rotating which goes first. "R@20"
is the share of the exact search's 20 best (what recall takes from the
meaning list) that the default search also returns.

``--words`` adds a table of words-search SQL at each size, timed in turn on
every query, with every memory in scope and with the global store only (a
tenth of them): the joined query (every match's memory row read for its
scope, bm25 of those in scope), ``storage.text_search`` as it runs now, FTS5's
own rank order with the scope read lazily, and the best 2 x 20 of all matches
marked in scope, falling back to the joined query. ``--embed`` adds a table of
the query embedding beside its parts (tokenizer, one ONNX run) and other
onnxruntime sessions (threads, spinning).

``--variants`` adds a table of first-pass searches for the 20 best at each
size, timed in turn on every query: the index (exact, and int8 with 1, 2 or 4
times the candidates re-scored), and bare numpy products of float16 and int8
copies of the vectors (numpy has no SIMD kernel for either). ``--hnsw`` adds an
HNSW graph (usearch, int8, if it is importable: it is not a dependency) with
its build time and memory, its candidates re-scored from the float32 matrix.

    uv run python bench/recall_latency.py
    uv run python bench/recall_latency.py --sizes 1000,10000
    uv run python bench/recall_latency.py --sizes 100000 --variants
    uv run python bench/recall_latency.py --sizes 100000 --words --embed
    uv run --with usearch python bench/recall_latency.py --sizes 100000 --variants --hnsw
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import thatch
from data_sets import DATA, read_queries
from measure import percentile, proc_memory, timed
from stop_words import without_stop_words
from synthetic import sentences, unit_vectors, vocabulary, write_memories
from thatch.api import Thatch
from thatch.memory import recall as recall_module
from thatch.memory.recall import recall as recall_in
from thatch.plugin import quantized
from thatch.plugin.records import GLOBAL_STORE, Scope
from thatch_sqlite import fts, vectors
from thatch_sqlite.connect import DEFAULT_MMAP_BYTES
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
    in_line: list[float]
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


class _InLine:
    """A stand-in for recall's worker pool that runs each search on the caller's thread."""

    def submit(self, fn: Callable[..., object], *args: object, **kwargs: object) -> object:
        done = fn(*args, **kwargs)

        class Done:
            def result(self) -> object:
                return done

        return Done()


@contextlib.contextmanager
def in_line() -> Iterator[None]:
    """Recall as it was before its parts overlapped: words search after the meaning
    search on one thread, and every int8 scan on one thread."""
    saved = recall_module._WORKERS, quantized.SPLIT_AT
    recall_module._WORKERS, quantized.SPLIT_AT = _InLine(), sys.maxsize  # type: ignore[assignment]
    try:
        yield
    finally:
        recall_module._WORKERS, quantized.SPLIT_AT = saved


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
    """Time recall, exact recall, the floor and recall in line on every query (rotating order),
    then the parts."""
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
            )
        )

    def floor(query: str) -> float:
        return timed(lambda: floor_search(th, matrix, query))

    def recall_in_line(query: str) -> float:
        with in_line():
            return recall(query)

    sides = (recall, exact_recall, floor, recall_in_line)
    for query in queries[:WARMUP]:
        for side in sides:
            side(query)
    times: list[list[float]] = [[] for _ in sides]
    for i, query in enumerate(queries):
        for k in range(len(sides)):
            side = (i + k) % len(sides)
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
        times[3],
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


#: The words search as storage.text_search runs it: bm25 of every in-scope match.
_WORDS_JOINED = """
    SELECT m.id, bm25(memories_fts, 4.0, 1.0) AS score
    FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid
    WHERE memories_fts MATCH ?
      AND (? OR m.archived = 0) AND m.store IN (SELECT value FROM json_each(?))
      AND (m.branch IS NULL OR m.branch = ?)
    ORDER BY score, m.id LIMIT ?"""
#: FTS5 ranks every match itself (ORDER BY rank); the scope is read only as far as needed.
_WORDS_RANKED = """
    SELECT m.id, memories_fts.rank
    FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid
    WHERE memories_fts MATCH ? AND memories_fts.rank MATCH 'bm25(4.0, 1.0)'
      AND (? OR m.archived = 0) AND m.store IN (SELECT value FROM json_each(?))
      AND (m.branch IS NULL OR m.branch = ?)
    ORDER BY memories_fts.rank"""
#: The best ``k`` of every match, scope or not, each marked in scope or not.
_WORDS_TOP = """
    SELECT f.id, f.score, m.id IS NOT NULL FROM (
        SELECT rowid AS id, bm25(memories_fts, 4.0, 1.0) AS score FROM memories_fts
        WHERE memories_fts MATCH ? ORDER BY score, id LIMIT ?
    ) AS f LEFT JOIN memories AS m ON m.id = f.id
      AND (? OR m.archived = 0) AND m.store IN (SELECT value FROM json_each(?))
      AND (m.branch IS NULL OR m.branch = ?)
    ORDER BY f.score, f.id"""
WordsSearch = Callable[[sqlite3.Connection, str, tuple[object, ...]], list[tuple[int, float]]]


def words_joined(
    conn: sqlite3.Connection, match: str, scope: tuple[object, ...]
) -> list[tuple[int, float]]:
    return conn.execute(_WORDS_JOINED, (match, *scope, DEPTH)).fetchall()


def words_ranked(
    conn: sqlite3.Connection, match: str, scope: tuple[object, ...]
) -> list[tuple[int, float]]:
    """Rows in rank order up to ``DEPTH``, plus any tied with the last, then (score, id)."""
    rows: list[tuple[int, float]] = []
    for row in conn.execute(_WORDS_RANKED, (match, *scope)):
        if len(rows) >= DEPTH and row[1] != rows[-1][1]:
            break
        rows.append(row)
    return sorted(rows, key=lambda row: (row[1], row[0]))[:DEPTH]


def words_top(
    conn: sqlite3.Connection, match: str, scope: tuple[object, ...]
) -> list[tuple[int, float]]:
    """The in-scope ones of the best ``2 x DEPTH`` of all matches, else the joined search.

    Exact either way: an in-scope match above the last of the best 2 x DEPTH
    is among them, and when there are fewer matches than that, all were read.
    """
    rows = conn.execute(_WORDS_TOP, (match, 2 * DEPTH, *scope)).fetchall()
    kept = [(memory_id, score) for memory_id, score, in_scope in rows if in_scope]
    if len(kept) >= DEPTH or len(rows) < 2 * DEPTH:
        return kept[:DEPTH]
    return words_joined(conn, match, scope)


def measure_words(th: Thatch, queries: Sequence[str]) -> list[tuple[str, list[float], int]]:
    """Each words-search SQL on every query in turn, in the full scope and the global store only.

    The MATCH expression is the one storage.text_search builds (rarest words
    within fts.MAX_POSTINGS). A variant's mismatches are queries whose 20 ids
    or scores differ from the joined search's. The connection maps the file
    as the storage's does.
    """
    conn = sqlite3.connect(th.config.db_path)
    conn.execute(f"PRAGMA mmap_size = {DEFAULT_MMAP_BYTES}")
    counts = {
        word.casefold(): conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)",
            (fts.phrase(word), fts.MAX_POSTINGS + 1),
        ).fetchone()[0]
        for query in queries
        for word in fts.words(query)
    }
    matches = {
        match: query
        for query in queries
        if (
            match := fts.match_expression(
                fts.affordable({word: counts[word.casefold()] for word in fts.words(query)})
            )
        )
    }
    storage = th.memory_storage

    def text_search(_conn: sqlite3.Connection, match: str, scope: tuple[object, ...]):
        stores = tuple(json.loads(str(scope[1])))
        found = storage.text_search(matches[match], Scope(stores, th.branch), DEPTH)
        return [(hit.id, -hit.score) for hit in found]

    searches: list[tuple[str, WordsSearch]] = [
        ("joined (storage.text_search before)", words_joined),
        ("storage.text_search (now)", text_search),
        ("ranked by FTS5, scope read lazily", words_ranked),
        ("best 2x20 of all, then scope; else joined", words_top),
    ]
    table: list[tuple[str, list[float], int]] = []
    for label, stores in (
        ("all in scope", (STORE, GLOBAL_STORE)),
        ("global only", (GLOBAL_STORE,)),
    ):
        scope = (False, json.dumps(th.stores_for(stores)), th.branch)
        times: list[list[float]] = [[] for _ in searches]
        wrong = [0 for _ in searches]
        for i, match in enumerate(matches):
            truth = words_joined(conn, match, scope)
            for k in range(len(searches)):
                j = (i + k) % len(searches)
                search = searches[j][1]
                times[j].append(timed(lambda f=search, m=match, s=scope: f(conn, m, s)))
                wrong[j] += search(conn, match, scope) != truth
        table += [
            (f"{label}: {name}", t, w)
            for (name, _), t, w in zip(searches, times, wrong, strict=True)
        ]
    conn.close()
    return table


def measure_embed(th: Thatch, queries: Sequence[str]) -> list[tuple[str, list[float]]]:
    """embed_query beside its parts and other onnxruntime sessions of the same model, in turn.

    Reaches into fastembed (the query model's tokenizer and session): the
    parts are the tokenizer alone and one run of the session on the tokens;
    the other sessions differ in threads and in whether their workers spin.
    """
    import onnxruntime as ort

    embedder = th.embedder
    embedder.embed_query("warm up")
    inner = embedder._query_model.model  # type: ignore[attr-defined]
    session, tokenizer = inner.model, inner.tokenizer

    def other(threads: int, spin: bool) -> ort.InferenceSession:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.add_session_config_entry("session.intra_op.allow_spinning", str(int(spin)))
        return ort.InferenceSession(session._model_path, options, providers=session.get_providers())

    def feeds(query: str) -> dict[str, np.ndarray]:
        encoded = tokenizer.encode(query)
        ids = np.array([encoded.ids], dtype=np.int64)
        mask = np.array([encoded.attention_mask], dtype=np.int64)
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

    runs = [
        ("session, 2 threads, no spinning (the query session)", session),
        ("session, 1 thread", other(1, False)),
        ("session, 2 threads, spinning", other(2, True)),
    ]
    calls: list[tuple[str, Callable[[str], object]]] = [
        ("embed_query", embedder.embed_query),
        ("tokenize alone", feeds),
        *((name, lambda q, s=run: s.run(None, feeds(q))) for name, run in runs),
    ]
    lengths = [len(tokenizer.encode(query).ids) for query in queries]
    print(f"query word pieces: p50 {statistics.median(lengths):g}, max {max(lengths)}")
    times: list[list[float]] = [[] for _ in calls]
    for query in queries[:WARMUP]:
        for _, call in calls:
            call(query)
    for i, query in enumerate(queries):
        for k in range(len(calls)):
            j = (i + k) % len(calls)
            times[j].append(timed(lambda f=calls[j][1], q=query: f(q)))
    return [(name, spent) for (name, _), spent in zip(calls, times, strict=True)]


def print_embed(table: Sequence[tuple[str, list[float]]]) -> None:
    """The query embedding table."""
    print("\nquery embedding (ms; sessions include tokenizing):")
    print(f"{'call':<52} | {'p50':>7} {'p95':>7}")
    for name, spent in table:
        print(f"{name:<52} | {percentile(spent, 50):>7.3f} {percentile(spent, 95):>7.3f}")


def print_rows(rows: Sequence[Row]) -> None:
    """The results table and the goals."""
    print(
        f"{'memories':>9} {'int8':>4} | {'recall p50':>10} {'p95':>7} | "
        f"{'in line p50':>11} {'p95':>7} | {'exact p50':>9} "
        f"{'p95':>7} | {'floor p50':>9} {'p95':>7} | {'ratio p50':>9} {'p95':>5} | "
        f"{'embed':>6} {'vector':>7} {'exact':>6} {'R@20':>5} {'words':>7} {'words-sw':>8} "
        f"{'fetch':>6} {'numpy':>6}"
    )
    print("-" * 172)
    for r in rows:
        p50, p95 = percentile(r.recall, 50), percentile(r.recall, 95)
        e50, e95 = percentile(r.exact_recall, 50), percentile(r.exact_recall, 95)
        i50, i95 = percentile(r.in_line, 50), percentile(r.in_line, 95)
        f50, f95 = percentile(r.floor, 50), percentile(r.floor, 95)
        print(
            f"{r.size:>9,} {'yes' if r.quantized else 'no':>4} | {p50:>10.2f} {p95:>7.2f} | "
            f"{i50:>11.2f} {i95:>7.2f} | "
            f"{e50:>9.2f} {e95:>7.2f} | {f50:>9.2f} {f95:>7.2f} "
            f"| {p50 / f50:>9.2f} {p95 / f95:>5.2f} | {statistics.median(r.embed):>6.2f} "
            f"{statistics.median(r.vector):>7.2f} {statistics.median(r.exact_vector):>6.2f} "
            f"{statistics.mean(r.overlap):>5.3f} {statistics.median(r.words):>7.2f} "
            f"{statistics.median(r.content_words):>8.2f} {statistics.median(r.fetch):>6.2f} "
            f"{statistics.median(r.product):>6.3f}"
        )
    print(
        "ms; int8 = the repository store is past QUANTIZE_AT; recall = th.recall incl. query "
        "embedding;\nin line = the same with its words search after the meaning search on one "
        "thread and each int8 scan on one thread (as before they overlapped);\n"
        "exact = the same recall on a handle whose index "
        "keeps float32 (the exact search); floor = embed + numpy product + argpartition;\n"
        "parts (p50): embed = "
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


def print_words(size: int, table: Sequence[tuple[str, list[float], int]]) -> None:
    """The words-search table of one size."""
    print(f"\nwords search SQL for the {DEPTH} best at {size:,} memories (ms):")
    print(f"{'search':<62} | {'p50':>7} {'p95':>7} | mismatches")
    for name, times, wrong in table:
        print(f"{name:<62} | {percentile(times, 50):>7.3f} {percentile(times, 95):>7.3f} | {wrong}")


def main(argv: Sequence[str] | None = None) -> int:
    """Fill a throw-away home size by size and time recall at each size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--variants", action="store_true", help="also time first-pass variants")
    parser.add_argument("--embed", action="store_true", help="also time query embedding parts")
    parser.add_argument("--words", action="store_true", help="also time words-search SQL")
    parser.add_argument("--hnsw", action="store_true", help="with --variants: an HNSW graph too")
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    rng = np.random.default_rng(args.seed)
    texts = read_queries(DATA / "queries.jsonl")
    queries = [texts[i % len(texts)] for i in range(max(args.queries, WARMUP))]
    vocab = vocabulary(DATA, 3000, rng)

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    rows, tables, words_tables = [], [], []
    embed_table: list[tuple[str, list[float]]] = []
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
            if args.words:
                words_tables.append((size, measure_words(th, queries)))
            if args.variants:
                tables.append((size, measure_variants(th, exact, matrix, queries, args.hnsw)))
        if args.embed:
            embed_table = measure_embed(th, queries)
        exact.close()
    print(f"load average at end: {os.getloadavg()[0]:.2f}\n")
    print_rows(rows)
    for size, variants in tables:
        print_variants(size, variants)
    for size, words_table in words_tables:
        print_words(size, words_table)
    if embed_table:
        print_embed(embed_table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
