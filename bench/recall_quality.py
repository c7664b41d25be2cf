"""Recall quality of thatch on the hand-written evaluation set in bench/data.

Loads bench/data/memories.jsonl into a throw-away home through the normal write
path, then runs every query of bench/data/queries.jsonl that has relevant
memories in three modes (hybrid, vector, words), with the scope an agent
working in the query's repository would have: that store plus ``global``.

``--distractors N`` adds N generated off-topic memories (``distinct_texts`` of
bench/synthetic.py, the texts of bench/import_throughput.py) spread over the
stores, so each scope is larger than the candidate depth and a memory must be
found, not just kept.

``--data bench/data/conversations`` runs the conversational set instead (2,515
turns of multi-session conversations, 722 queries of four types; written by
bench/conversation_set.py, see bench/data/conversations/README.md).

Prints recall@1, recall@5 and MRR per mode, split by query kind, then the same
metrics for variants of reciprocal-rank fusion (the constant k and the weight
of the words list), computed from the raw per-mode rankings with
:func:`thatch.memory.fusion.fuse`. The variant k=60 / weights 1:1 must reproduce the
hybrid mode exactly; the script checks that.

    uv run python bench/recall_quality.py
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import thatch
from data_sets import DATA, read_jsonl
from stop_words import without_stop_words
from synthetic import distinct_texts
from thatch.api import Thatch
from thatch.memory.fusion import RRF_K, fuse
from thatch.memory.recall import CANDIDATE_FACTOR, MIN_CANDIDATES, RecallMode
from thatch.memory.writer import MemoryInput
from thatch.plugin.records import GLOBAL_STORE, Scope

MODES: tuple[RecallMode, ...] = ("hybrid", "vector", "words")
#: Query kinds of bench/data, printed in this order; other sets print theirs as they come.
KINDS = ("meaning", "words", "mixed")
#: RRF variants tried: (k, vector weight, text weight, stop words dropped from the words query).
Variant = tuple[int, float, float, bool]
VARIANTS: list[Variant] = [
    (k, 1.0, w, stop) for stop in (False, True) for k in (10, 30, 60) for w in (0.25, 0.5, 1.0, 2.0)
]
DEFAULT_VARIANT: Variant = (RRF_K, 1.0, 1.0, False)


@dataclass(frozen=True)
class Query:
    """One evaluation query and the labels of the memories that answer it."""

    text: str
    store: str
    relevant: frozenset[str]
    kind: str

    @property
    def stores(self) -> tuple[str, str]:
        """The search scope: the repository's store and global."""
        return (self.store, GLOBAL_STORE)


@dataclass(frozen=True)
class Lists:
    """One query's raw candidate ids, best first, and the cosine of each."""

    vector: list[int]
    words: list[int]
    content_words: list[int]
    cosine: dict[int, float]


@dataclass(frozen=True)
class Metrics:
    """Mean recall@1, recall@k and mean reciprocal rank over a set of queries."""

    recall_1: float
    recall_k: float
    mrr: float
    count: int


def load_queries(path: Path) -> list[Query]:
    """The queries of queries.jsonl (with and without relevant memories)."""
    return [
        Query(
            text=str(row["query"]),
            store=str(row["store"]),
            relevant=frozenset(str(label) for label in row["relevant"]),  # type: ignore[attr-defined]
            kind=str(row.get("kind", "")),
        )
        for row in read_jsonl(path)
    ]


def load_memories(th: Thatch, path: Path) -> int:
    """Save memories.jsonl through the normal write path; returns how many were saved."""
    items = [
        MemoryInput(label=str(row["label"]), content=str(row["content"]), store=str(row["store"]))
        for row in read_jsonl(path)
    ]
    results = th.remember_many(items)
    redacted = [r.memory.label for r in results if r.redactions]
    if redacted:
        raise SystemExit(f"bench data was redacted, fix the data: {redacted}")
    return len(results)


def add_distractors(th: Thatch, count: int, stores: Sequence[str]) -> None:
    """Save ``count`` generated off-topic memories, spread evenly over ``stores``."""
    items = [
        MemoryInput(label=f"distractor-{i}", content=text, store=stores[i % len(stores)])
        for i, text in enumerate(distinct_texts(count, seed=3))
    ]
    th.remember_many(items)


def score(ranked: Sequence[str], relevant: frozenset[str], k: int) -> tuple[float, float, float]:
    """recall@1, recall@k and reciprocal rank of one ranked list of labels."""
    recall_1 = len(relevant.intersection(ranked[:1])) / len(relevant)
    recall_k = len(relevant.intersection(ranked[:k])) / len(relevant)
    rank = next((i for i, label in enumerate(ranked[:k], 1) if label in relevant), None)
    return recall_1, recall_k, (1.0 / rank if rank else 0.0)


def mean_metrics(rows: Iterable[tuple[float, float, float]]) -> Metrics:
    """Average per-query scores."""
    rows = list(rows)
    if not rows:
        return Metrics(0.0, 0.0, 0.0, 0)
    n = len(rows)
    return Metrics(
        recall_1=sum(r[0] for r in rows) / n,
        recall_k=sum(r[1] for r in rows) / n,
        mrr=sum(r[2] for r in rows) / n,
        count=n,
    )


def mode_rankings(th: Thatch, queries: Sequence[Query], limit: int) -> dict[str, list[list[str]]]:
    """Labels returned by ``th.recall`` for every query, per mode."""
    return {
        mode: [
            [
                hit.memory.label
                for hit in th.recall(
                    q.text, stores=q.stores, limit=limit, mode=mode, min_cosine=-1, record=False
                )
            ]
            for q in queries
        ]
        for mode in MODES
    }


def raw_lists(th: Thatch, queries: Sequence[Query], limit: int) -> list[Lists]:
    """Per query, candidate ids by meaning and by words (all words, no stop words)."""
    depth = max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)
    model = th.embedder.model_id
    lists = []
    for q in queries:
        scope = Scope(stores=q.stores, branch=th.branch)
        vector = th.embedder.embed_query(q.text)
        by_meaning = th.memory_storage.vector_search(vector, model, scope, depth)
        by_words = th.memory_storage.text_search(q.text, scope, depth)
        by_content_words = th.memory_storage.text_search(without_stop_words(q.text), scope, depth)
        cosine = {h.id: h.score for h in by_meaning}
        missing = {h.id for h in [*by_words, *by_content_words]} - cosine.keys()
        for memory_id, stored in th.memory_storage.embeddings(missing, model).items():
            cosine[memory_id] = float(stored @ vector)
        lists.append(
            Lists(
                [h.id for h in by_meaning],
                [h.id for h in by_words],
                [h.id for h in by_content_words],
                cosine,
            )
        )
    return lists


def variant_rankings(
    lists: Sequence[Lists], labels: dict[int, str], variant: Variant, limit: int
) -> list[list[str]]:
    """Labels of the fused top ``limit`` for every query under one RRF variant."""
    k, vector_weight, text_weight, drop_stop_words = variant
    return [
        [
            labels[item.id]
            for item in fuse(
                one.vector,
                one.content_words if drop_stop_words else one.words,
                k=k,
                vector_weight=vector_weight,
                text_weight=text_weight,
            )[:limit]
        ]
        for one in lists
    ]


def query_kinds(queries: Sequence[Query]) -> tuple[str, ...]:
    """The kinds of ``queries``: those of KINDS first, then the rest in order of appearance."""
    present = dict.fromkeys(q.kind for q in queries)
    return tuple(k for k in KINDS if k in present) + tuple(k for k in present if k not in KINDS)


def evaluate(
    queries: Sequence[Query], rankings: Sequence[Sequence[str]], limit: int, kind: str | None
) -> Metrics:
    """Metrics over the queries of one kind (all kinds when None)."""
    return mean_metrics(
        score(ranked, q.relevant, limit)
        for q, ranked in zip(queries, rankings, strict=True)
        if kind is None or q.kind == kind
    )


def print_modes(queries: Sequence[Query], rankings: dict[str, list[list[str]]], limit: int) -> None:
    """The side-by-side table of the three modes, overall and per query kind."""
    header = f"{'queries':<18}" + "".join(f"| {mode:^22}" for mode in MODES)
    print(header)
    print(f"{'':<18}" + f"| {'R@1':>6} {'R@' + str(limit):>6} {'MRR':>7} " * len(MODES))
    print("-" * len(header))
    for kind in (None, *query_kinds(queries)):
        cells = []
        for mode in MODES:
            m = evaluate(queries, rankings[mode], limit, kind)
            cells.append(f"| {m.recall_1:6.3f} {m.recall_k:6.3f} {m.mrr:7.3f} ")
        n = evaluate(queries, rankings["hybrid"], limit, kind).count
        print(f"{(kind or 'all') + f' ({n})':<18}" + "".join(cells))


def print_variants(
    queries: Sequence[Query], lists: Sequence[Lists], labels: dict[int, str], limit: int
) -> Variant:
    """The RRF variant table; returns the best variant (by MRR, then recall@k, recall@1)."""
    kinds = query_kinds(queries)
    columns = "".join(f"| {kind + ' MRR':>14} " for kind in kinds)
    print(
        f"{'stop words':>10} {'k':>4} {'w_vec':>6} {'w_text':>6} "
        f"| {'R@1':>6} {'R@' + str(limit):>6} {'MRR':>7} {columns}"
    )
    print("-" * (56 + 17 * len(kinds)))
    results = {}
    for variant in VARIANTS:
        rankings = variant_rankings(lists, labels, variant, limit)
        m = results[variant] = evaluate(queries, rankings, limit, None)
        per_kind = "".join(
            f"| {evaluate(queries, rankings, limit, kind).mrr:>14.3f} " for kind in kinds
        )
        k, wv, wt, stop = variant
        mark = "  (default)" if variant == DEFAULT_VARIANT else ""
        print(
            f"{'dropped' if stop else 'kept':>10} {k:>4} {wv:>6.2f} {wt:>6.2f} "
            f"| {m.recall_1:6.3f} {m.recall_k:6.3f} {m.mrr:7.3f} {per_kind}{mark}"
        )
    return max(
        VARIANTS,
        key=lambda v: (
            round(results[v].mrr, 6),
            round(results[v].recall_k, 6),
            round(results[v].recall_1, 6),
            v == DEFAULT_VARIANT,
        ),
    )


def cut_rankings(
    lists: Sequence[Lists],
    labels: dict[int, str],
    threshold: float,
    limit: int,
    *,
    words_pass: str = "",
) -> list[list[str]]:
    """Default hybrid rankings after dropping hits whose cosine is below ``threshold``.

    ``words_pass`` keeps a hit whatever its cosine when the words search found
    it: "words" for the search recall runs, "content" for the search of the
    query without stop words; "" keeps none.
    """
    ranked = []
    for one in lists:
        passing = {"words": set(one.words), "content": set(one.content_words)}.get(
            words_pass, set()
        )
        kept = [
            item
            for item in fuse(one.vector, one.words)
            if one.cosine[item.id] >= threshold or item.id in passing
        ]
        ranked.append([labels[item.id] for item in kept[:limit]])
    return ranked


def print_min_cosine(
    th: Thatch,
    queries: Sequence[Query],
    no_answer: Sequence[Query],
    labels: dict[int, str],
    limit: int,
) -> None:
    """Hybrid recall cut at a cosine floor, as recall applies its recall threshold."""
    calibrated = th.thresholds()
    kinds = query_kinds(queries)
    answered, unanswered = raw_lists(th, queries, limit), raw_lists(th, no_answer, limit)
    official = [
        [
            hit.memory.label
            for hit in th.recall(
                q.text, stores=q.stores, limit=limit, min_cosine=calibrated.recall, record=False
            )
        ]
        for q in queries
    ]
    if official != cut_rankings(answered, labels, calibrated.recall, limit):
        raise SystemExit("the simulated cosine floor does not reproduce recall's min_cosine")
    print(
        f"\nHybrid recall with a cosine floor (th.recall's min_cosine; the calibrated recall "
        f"threshold is {calibrated.recall:g}, source: {calibrated.source}):"
    )
    print(
        f"{'floor':>16} | {'R@1':>6} {'R@' + str(limit):>6} {'MRR':>7} "
        + "".join(f"| {kind + ' R@' + str(limit):>13} " for kind in kinds)
        + f"| {'no hit: unanswerable':>20} {'answerable':>10}"
    )
    print("-" * (80 + 16 * len(kinds)))
    floors = [(-1.0, ""), (0.2, ""), (0.3, ""), (calibrated.recall, "")]
    floors += [(calibrated.recall, "words"), (calibrated.recall, "content")]
    for threshold, words_pass in floors:
        ranked = cut_rankings(answered, labels, threshold, limit, words_pass=words_pass)
        empty = cut_rankings(unanswered, labels, threshold, limit, words_pass=words_pass)
        m = evaluate(queries, ranked, limit, None)
        per_kind = "".join(
            f"| {evaluate(queries, ranked, limit, kind).recall_k:>13.3f} " for kind in kinds
        )
        name = "none" if threshold < -0.99 else f"{threshold:g}"
        name += f" +{words_pass}" if words_pass else ""
        silent = f"{sum(not r for r in empty)}/{len(empty)}"
        blank = f"{sum(not r for r in ranked)}/{len(ranked)}"
        print(
            f"{name:>16} | {m.recall_1:6.3f} {m.recall_k:6.3f} {m.mrr:7.3f} {per_kind}"
            f"| {silent:>20} {blank:>10}"
        )
    print(
        "+words: hits the words search found are kept whatever their cosine; +content: the "
        "same for\nthe words search of the query without stop words; 'no hit': queries left "
        "with no result"
    )


def print_misses(
    queries: Sequence[Query], rankings: dict[str, list[list[str]]], limit: int
) -> None:
    """Queries whose relevant memories hybrid recall did not rank first, with the top hits."""
    print(f"Hybrid queries without a relevant memory at rank 1 (top {limit} shown):")
    for index, q in enumerate(queries):
        ranked = rankings["hybrid"][index]
        if not q.relevant.intersection(ranked[:1]):
            marks = ", ".join(f"{label}{'*' if label in q.relevant else ''}" for label in ranked)
            print(f"  [{q.kind}] {q.text!r} -> {marks}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of the JSONL files")
    parser.add_argument("--limit", type=int, default=5, help="results per query (default 5)")
    parser.add_argument("--misses", action="store_true", help="list queries missed at rank 1")
    parser.add_argument(
        "--distractors",
        type=int,
        default=0,
        help="also save this many generated off-topic memories, spread over the stores",
    )
    args = parser.parse_args(argv)

    every_query = load_queries(args.data / "queries.jsonl")
    queries = [q for q in every_query if q.relevant]
    no_answer = [q for q in every_query if not q.relevant]
    with tempfile.TemporaryDirectory(prefix="thatch-bench-") as home, thatch.open(home=home) as th:
        started = time.perf_counter()
        count = load_memories(th, args.data / "memories.jsonl")
        saved = time.perf_counter() - started
        if args.distractors:
            add_distractors(
                th, args.distractors, sorted({q.store for q in queries} | {GLOBAL_STORE})
            )
        labels = {m.id: m.label for m in th.list("all")}
        print(
            f"model {th.embedder.model_id}; {count} memories + {args.distractors} distractors; "
            f"{len(queries)} queries with an answer, {len(no_answer)} without"
        )
        print(f"scope: the query's store + global; limit {args.limit}; record=False\n")

        started = time.perf_counter()
        rankings = mode_rankings(th, queries, args.limit)
        searched = time.perf_counter() - started
        print_modes(queries, rankings, args.limit)
        print(
            f"saving (embedding included) took {saved:.1f} s; "
            f"{len(MODES)} x {len(queries)} recalls {searched:.1f} s"
        )

        lists = raw_lists(th, queries, args.limit)
        default = variant_rankings(lists, labels, DEFAULT_VARIANT, args.limit)
        if default != rankings["hybrid"]:
            raise SystemExit("fusion variant k=60, 1:1 does not reproduce hybrid recall")
        print("\nReciprocal-rank fusion variants of hybrid recall:")
        best = print_variants(queries, lists, labels, args.limit)
        print(
            f"best variant: k={best[0]}, vector weight {best[1]:g}, text weight {best[2]:g}, "
            f"stop words {'dropped' if best[3] else 'kept'}"
        )
        print_min_cosine(th, queries, no_answer, labels, args.limit)
        if args.misses:
            print()
            print_misses(queries, rankings, args.limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
