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
held in one numpy array, and ``argpartition`` for the top 5. Recall and floor
run back to back for each query, alternating which goes first.

    uv run python bench/recall_latency.py
    uv run python bench/recall_latency.py --sizes 1000,10000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import thatch
from data_sets import DATA
from measure import percentile, timed
from stop_words import without_stop_words
from synthetic import sentences, unit_vectors, vocabulary, write_memories
from thatch.api import Thatch
from thatch.plugin.records import GLOBAL_STORE, Scope

STORE = "bench/repo"
LIMIT = 5
WARMUP = 20
GOAL_P50_MS = 15.0
GOAL_RATIO = 3.0


@dataclass(frozen=True)
class Row:
    """Latency figures of one corpus size, in milliseconds."""

    size: int
    recall: list[float]
    floor: list[float]
    embed: list[float]
    vector: list[float]
    words: list[float]
    content_words: list[float]
    fetch: list[float]
    product: list[float]


def read_queries(path: Path) -> list[str]:
    """The query texts of queries.jsonl."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line)["query"] for line in handle if line.strip()]


def floor_search(th: Thatch, matrix: np.ndarray, query: str) -> np.ndarray:
    """Embed the query, one matrix-vector product, top ``LIMIT`` by argpartition."""
    scores = matrix @ th.embedder.embed_query(query)
    best = np.argpartition(-scores, LIMIT - 1)[:LIMIT]
    return best[np.argsort(-scores[best])]


def measure(th: Thatch, matrix: np.ndarray, queries: Sequence[str], size: int) -> Row:
    """Time recall and the floor on every query (alternating order), then the parts."""
    stores = (STORE, GLOBAL_STORE)
    scope = Scope(stores=stores, branch=th.branch)
    model = th.embedder.model_id
    depth = 20  # what recall fetches from each list for limit 5

    def recall(query: str) -> float:
        return timed(
            lambda: th.recall(query, stores=stores, limit=LIMIT, min_cosine=-1, record=False)
        )

    def floor(query: str) -> float:
        return timed(lambda: floor_search(th, matrix, query))

    for query in queries[:WARMUP]:
        recall(query)
        floor(query)
    recall_ms, floor_ms = [], []
    for i, query in enumerate(queries):
        if i % 2:
            floor_ms.append(floor(query))
            recall_ms.append(recall(query))
        else:
            recall_ms.append(recall(query))
            floor_ms.append(floor(query))

    embed_ms, vector_ms, words_ms, content_ms, fetch_ms, product_ms = [], [], [], [], [], []
    for query in queries:
        embed_ms.append(timed(lambda q=query: th.embedder.embed_query(q)))
        vector = th.embedder.embed_query(query)
        vector_ms.append(
            timed(lambda v=vector: th.memory_storage.vector_search(v, model, scope, depth))
        )
        words_ms.append(timed(lambda q=query: th.memory_storage.text_search(q, scope, depth)))
        # Recall fetches the stored vectors of the words hits the meaning list lacks.
        by_meaning = {
            hit.id for hit in th.memory_storage.vector_search(vector, model, scope, depth)
        }
        missing = [h.id for h in th.memory_storage.text_search(query, scope, depth)]
        missing = [memory_id for memory_id in missing if memory_id not in by_meaning]
        fetch_ms.append(timed(lambda ids=missing: th.memory_storage.embeddings(ids, model)))
        content = without_stop_words(query)
        content_ms.append(timed(lambda q=content: th.memory_storage.text_search(q, scope, depth)))
        product_ms.append(timed(lambda v=vector: np.argpartition(-(matrix @ v), LIMIT - 1)))
    return Row(
        size, recall_ms, floor_ms, embed_ms, vector_ms, words_ms, content_ms, fetch_ms, product_ms
    )


def print_rows(rows: Sequence[Row]) -> None:
    """The results table and the goals."""
    print(
        f"{'memories':>9} | {'recall p50':>10} {'p95':>7} | {'floor p50':>9} {'p95':>7} "
        f"| {'ratio p50':>9} {'p95':>5} | {'embed':>6} {'vector':>7} {'words':>7} "
        f"{'words-sw':>8} {'fetch':>6} {'numpy':>6}"
    )
    print("-" * 116)
    for r in rows:
        p50, p95 = percentile(r.recall, 50), percentile(r.recall, 95)
        f50, f95 = percentile(r.floor, 50), percentile(r.floor, 95)
        print(
            f"{r.size:>9,} | {p50:>10.2f} {p95:>7.2f} | {f50:>9.2f} {f95:>7.2f} "
            f"| {p50 / f50:>9.2f} {p95 / f95:>5.2f} | {statistics.median(r.embed):>6.2f} "
            f"{statistics.median(r.vector):>7.2f} {statistics.median(r.words):>7.2f} "
            f"{statistics.median(r.content_words):>8.2f} {statistics.median(r.fetch):>6.2f} "
            f"{statistics.median(r.product):>6.3f}"
        )
    print(
        "ms; recall = th.recall incl. query embedding; floor = embed + numpy product + "
        "argpartition;\nparts (p50): embed = embed_query, vector = storage.vector_search, "
        "words = storage.text_search,\nwords-sw = storage.text_search of the query without "
        "English stop words (not what recall does today),\nfetch = storage.embeddings of the "
        "words hits missing from the vector hits, numpy = product + argpartition alone"
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


def main(argv: Sequence[str] | None = None) -> int:
    """Fill a throw-away home size by size and time recall at each size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    rng = np.random.default_rng(args.seed)
    texts = read_queries(DATA / "queries.jsonl")
    queries = [texts[i % len(texts)] for i in range(max(args.queries, WARMUP))]
    vocab = vocabulary(DATA, 3000, rng)

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="thatch-latency-") as home,
        thatch.open(home=home) as th,
    ):
        model, dim = th.embedder.model_id, th.embedder.dim
        print(f"model {model} (dim {dim}); vocabulary {len(vocab)} words; {len(queries)} queries")
        matrix = np.empty((0, dim), np.float32)
        for size in sizes:
            start = time.perf_counter()
            count = size - len(matrix)
            vectors = unit_vectors(count, dim, rng)
            contents = sentences(vocab, count, rng)
            write_memories(th.memory_storage, STORE, len(matrix), vectors, contents, model)
            matrix = np.concatenate([matrix, vectors])
            print(f"  {size:,} memories written in {time.perf_counter() - start:.1f} s")
            rows.append(measure(th, matrix, queries, size))
    print(f"load average at end: {os.getloadavg()[0]:.2f}\n")
    print_rows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
