"""Calibrate the recall and dedup cosine thresholds of an embedder on bench/data.

dedup
    Cosine above which two memories are reported as saying the same thing.
    Positives are the ``duplicate`` pairs of pairs.jsonl; negatives are the
    ``related`` (same topic, different fact) and ``unrelated`` pairs. The
    threshold maximises F0.5, which weighs precision twice as much as recall:
    a false "near duplicate" warning nags the user about two distinct facts and
    teaches them to ignore the warning, while a missed duplicate only leaves
    one redundant memory that ``thatch duplicates`` or a later review can find.

recall
    Cosine above which a memory counts as relevant to a query (recall nudges,
    ``search --min-cosine``). For every query of queries.jsonl the positives
    are (query, relevant memory) and the one negative is (query, best-scoring
    memory in scope that is not relevant), the memory that would be wrongly
    shown first; the 25 queries with no relevant memory contribute only that
    negative. The threshold maximises F1: a missed memory and a wrongly shown
    one cost about the same (the agent lacks a fact, or reads a useless one),
    so neither precision nor recall is favoured.

For both, the thresholds tried are the cosines 0.00, 0.01, ... 1.00: finer
steps would only fit the threshold to single examples of a ~150-item set. Among
grid points with the same best score, the one farthest from any example cosine
is taken, so the threshold does not sit right against one example.

    uv run python bench/calibrate_thresholds.py            # print only
    uv run python bench/calibrate_thresholds.py --write    # update thresholds.json

The embedder is the one thatch is configured with (THATCH_MODEL /
THATCH_MODEL_PATH apply; by default the built-in all-MiniLM-L6-v2 pack), and
``--write`` stores the result under that embedder's model id.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import query_products
import thatch
from data_sets import DATA, read_jsonl
from thatch.plugin.embedder import Embedder
from thatch.plugin.records import GLOBAL_STORE
from thresholds_file import THRESHOLDS_FILE, update_thresholds

SOURCE = "bench/calibrate_thresholds.py"
GRID = np.round(np.arange(0.0, 1.0001, 0.01), 2)
#: Weight of recall against precision in F-beta: 0.5 for dedup (precision first).
DEDUP_BETA = 0.5
RECALL_BETA = 1.0


@dataclass(frozen=True)
class Point:
    """Precision, recall and F-beta of one threshold."""

    threshold: float
    precision: float
    recall: float
    f: float


def f_beta(precision: float, recall: float, beta: float) -> float:
    """The weighted harmonic mean of precision and recall (0 when both are 0)."""
    b2 = beta * beta
    denominator = b2 * precision + recall
    return (1 + b2) * precision * recall / denominator if denominator else 0.0


def sweep(positives: np.ndarray, negatives: np.ndarray, beta: float) -> list[Point]:
    """Precision, recall and F-beta of 'cosine >= t' for every t of the grid."""
    return [evaluate(positives, negatives, float(t), beta) for t in GRID]


def evaluate(positives: np.ndarray, negatives: np.ndarray, threshold: float, beta: float) -> Point:
    """Precision, recall and F-beta of 'cosine >= threshold'."""
    tp = int(np.sum(positives >= threshold))
    fp = int(np.sum(negatives >= threshold))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / len(positives)
    return Point(threshold, precision, recall, f_beta(precision, recall, beta))


def choose(positives: np.ndarray, negatives: np.ndarray, beta: float) -> tuple[Point, float]:
    """The grid threshold with the best F-beta; among equals, the farthest from any example.

    Returns the point and its margin: the distance to the nearest example cosine.
    """
    examples = np.concatenate([positives, negatives])
    best: tuple[float, float, Point] | None = None
    for point in sweep(positives, negatives, beta):
        margin = float(np.min(np.abs(examples - point.threshold)))
        if best is None or (round(point.f, 9), margin) > (round(best[2].f, 9), best[1]):
            best = (point.f, margin, point)
    assert best is not None
    return best[2], best[1]


def dedup_scores(embedder: Embedder, data: Path) -> tuple[np.ndarray, np.ndarray, dict[str, list]]:
    """Cosines of duplicate pairs and of the other pairs, plus all cosines by kind."""
    pairs = read_jsonl(data / "pairs.jsonl")
    a = embedder.embed_passages([str(p["a"]) for p in pairs])
    b = embedder.embed_passages([str(p["b"]) for p in pairs])
    cosines = np.sum(a * b, axis=1)
    by_kind: dict[str, list[float]] = {}
    for pair, cosine in zip(pairs, cosines.tolist(), strict=True):
        by_kind.setdefault(str(pair["kind"]), []).append(cosine)
    positives = np.array(by_kind.get("duplicate", []))
    negatives = np.array(by_kind.get("related", []) + by_kind.get("unrelated", []))
    return positives, negatives, by_kind


@dataclass(frozen=True)
class RecallSet:
    """Cosines for the recall threshold, with the query kind of each."""

    positives: np.ndarray
    positive_kinds: list[str]
    negatives: np.ndarray
    negative_kinds: list[str]
    #: Queries with no relevant memory (they contribute only a negative).
    no_answer: int


def recall_scores(embedder: Embedder, data: Path) -> RecallSet:
    """Cosines of (query, relevant memory) and of (query, best irrelevant memory in scope)."""
    memories = read_jsonl(data / "memories.jsonl")
    queries = read_jsonl(data / "queries.jsonl")
    matrix = embedder.embed_passages([str(m["content"]) for m in memories])
    positives: list[float] = []
    positive_kinds: list[str] = []
    negatives: list[float] = []
    negative_kinds: list[str] = []
    no_answer = 0
    for query in queries:
        scope = {str(query["store"]), GLOBAL_STORE}
        relevant = set(query["relevant"])  # type: ignore[call-overload]
        kind = str(query.get("kind", ""))
        no_answer += not relevant
        cosines = matrix @ embedder.embed_query(str(query["query"]))
        wrong = []
        for memory, cosine in zip(memories, cosines.tolist(), strict=True):
            if memory["store"] not in scope:
                continue
            if memory["label"] in relevant:
                positives.append(cosine)
                positive_kinds.append(kind)
            else:
                wrong.append(cosine)
        negatives.append(max(wrong))
        negative_kinds.append(kind)
    return RecallSet(
        np.array(positives), positive_kinds, np.array(negatives), negative_kinds, no_answer
    )


def print_by_kind(data: RecallSet, threshold: float) -> None:
    """At ``threshold``: relevant memories kept, and best wrong memories let through, by kind."""
    print(f"at {threshold:.2f}, by query kind:")
    for kind in dict.fromkeys([*data.positive_kinds, *data.negative_kinds]):
        kept = [c for c, k in zip(data.positives, data.positive_kinds, strict=True) if k == kind]
        wrong = [c for c, k in zip(data.negatives, data.negative_kinds, strict=True) if k == kind]
        above = sum(c >= threshold for c in wrong)
        line = f"  {kind:<8} best wrong memory above it for {above}/{len(wrong)} queries"
        if kept:
            line += f"; relevant memories kept {sum(c >= threshold for c in kept)}/{len(kept)}"
        print(line)


def summary(name: str, values: Sequence[float] | np.ndarray) -> str:
    """min / median / max of a set of cosines."""
    v = np.asarray(values)
    return (
        f"{name:<28} n={len(v):>3}  min {v.min():.3f}  median {np.median(v):.3f}  max {v.max():.3f}"
    )


def print_table(points: Sequence[Point], chosen: Point, beta: float, lo: float, hi: float) -> None:
    """The sweep every 0.02 between ``lo`` and ``hi``, with the chosen point in its place."""
    label = "F1" if beta == 1.0 else f"F{beta:g}"
    print(f"{'threshold':>9} {'precision':>9} {'recall':>7} {label:>7}")
    for p in points:
        on_grid = lo <= p.threshold <= hi and round(p.threshold * 100) % 2 == 0
        if not on_grid and p.threshold != chosen.threshold:
            continue
        mark = "  <- chosen" if p.threshold == chosen.threshold else ""
        print(f"{p.threshold:>9.2f} {p.precision:>9.3f} {p.recall:>7.3f} {p.f:>7.3f}{mark}")


def main(argv: Sequence[str] | None = None) -> int:
    """Compute, print and optionally store both thresholds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of the JSONL files")
    parser.add_argument("--write", action="store_true", help="update the thresholds file")
    parser.add_argument(
        "--file", type=Path, default=THRESHOLDS_FILE, help="thresholds file to update"
    )
    query_products.add_option(parser)
    args = parser.parse_args(argv)

    with contextlib.ExitStack() as stack:
        home = stack.enter_context(tempfile.TemporaryDirectory(prefix="thatch-calibrate-"))
        query_products.configure(home, args.query_products)
        th = stack.enter_context(thatch.open(home=home))
        embedder = th.embedder
        model_id = embedder.model_id
        print(f"model {model_id}\n")

        positives, negatives, by_kind = dedup_scores(embedder, args.data)
        print("dedup: cosine of each pair of pairs.jsonl")
        for kind in ("duplicate", "related", "unrelated"):
            print("  " + summary(kind, by_kind.get(kind, [])))
        dedup, margin = choose(positives, negatives, DEDUP_BETA)
        print("positives = duplicate; negatives = related + unrelated; maximise F0.5")
        print_table(sweep(positives, negatives, DEDUP_BETA), dedup, DEDUP_BETA, 0.60, 0.96)
        print(f"chosen dedup {dedup.threshold:.2f}; nearest example cosine {margin:.4f} away")

        data = recall_scores(embedder, args.data)
        positives, negatives = data.positives, data.negatives
        no_answer = data.no_answer
        print("\nrecall: cosine of query vs memory in scope (query's store + global)")
        print("  " + summary("query, relevant memory", positives))
        print("  " + summary("query, best irrelevant one", negatives))
        print(f"  ({no_answer} queries have no relevant memory: they add only a negative)")
        recall, margin = choose(positives, negatives, RECALL_BETA)
        print("positives = relevant; negatives = best irrelevant per query; maximise F1")
        print_table(sweep(positives, negatives, RECALL_BETA), recall, RECALL_BETA, 0.20, 0.60)
        print(f"chosen recall {recall.threshold:.2f}; nearest example cosine {margin:.4f} away")
        print_by_kind(data, recall.threshold)

        print(
            f"\nchosen for {model_id}: recall {recall.threshold:.2f} "
            f"(P {recall.precision:.3f} R {recall.recall:.3f} F1 {recall.f:.3f}), "
            f"dedup {dedup.threshold:.2f} "
            f"(P {dedup.precision:.3f} R {dedup.recall:.3f} F0.5 {dedup.f:.3f})"
        )
        if args.write:
            update_thresholds(
                args.file,
                model_id,
                {"recall": recall.threshold, "dedup": dedup.threshold, "source": SOURCE},
            )
            print(f"wrote {args.file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
