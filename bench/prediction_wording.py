"""Paraphrases linked, opposites merged: the wording rule on bench/data/wording_pairs.jsonl.

Every pair of the set (see bench/data/README.md) is a statement ``a`` the
user already has as a prediction and a statement ``b`` the agent records
later. A ``paraphrase`` pair should be linked (``b`` is ``a`` in other
words), an ``opposite`` pair never merged (``b`` contradicts ``a``). For the
current rule and every variant, the script prints the share of paraphrases
linked (goal >= 0.90) and the number of opposites merged (goal 0), with the
cosine of the real embedding model, per kind of pair.

A rule sees the two statements and their cosine, as
``DecisionModel._same_prediction`` does for the nearest existing predictions.
The default rule is then checked end to end: ``a`` recorded with ``create``,
``b`` with ``confirm``, each pair in its own store of a throw-away home,
through ``DecisionModel.update``; the figures must be those of the table.

    uv run python bench/prediction_wording.py            # the table
    uv run python bench/prediction_wording.py --misses   # and every pair the default gets wrong
"""

from __future__ import annotations

import argparse
import difflib
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import thatch
from data_sets import DATA, read_jsonl
from thatch.decisions.engine import SIMILAR_COSINE, DecisionModel
from thatch.decisions.wording import (
    CONTRAST_COSINE,
    FUNCTION_WORDS,
    LINK_COSINE,
    STOPWORDS,
    SURE_COSINE,
    antonym_clash,
    content_overlap,
    differing_words,
    negated,
    opposition,
    stem,
    why_not_linked,
)
from thatch.plugin.embedder import Embedder

PAIRS = DATA / "wording_pairs.jsonl"
#: Same topic, different fact: merging these is as wrong as merging opposites.
RELATED = DATA / "pairs.jsonl"
#: The opposite preferences of the firing set, written before this rule.
DECISIONS = DATA / "decisions.jsonl"
#: The stop words of the rule before this one (content-word overlap >= 0.8).
OLD_STOPWORDS = sorted(FUNCTION_WORDS)


@dataclass(frozen=True)
class Pair:
    kind: str
    how: str
    a: str
    b: str
    cosine: float = 0.0


Rule = Callable[[Pair, Callable[[str, str], float]], bool]


def read_pairs(path: Path, related: Path) -> list[Pair]:
    """The wording pairs and the firing set's opposites, then the dedup set's ``related`` pairs."""
    pairs = [
        Pair(str(row["kind"]), str(row["how"]), str(row["a"]), str(row["b"]))
        for row in read_jsonl(path)
    ]
    pairs += [
        Pair("opposite", "decisions.jsonl", str(row["a"]), str(row["b"]))
        for row in read_jsonl(DECISIONS)
        if row["kind"] == "opposite"
    ]
    return pairs + [
        Pair("related", "pairs.jsonl", str(row["a"]), str(row["b"]))
        for row in read_jsonl(related)
        if row["kind"] == "related"
    ]


def with_cosines(pairs: Sequence[Pair], embedder: Embedder) -> list[Pair]:
    vectors = embedder.embed_passages([text for pair in pairs for text in (pair.a, pair.b)])
    cosines = np.einsum("ij,ij->i", vectors[0::2], vectors[1::2])
    return [Pair(p.kind, p.how, p.a, p.b, float(c)) for p, c in zip(pairs, cosines, strict=True)]


def differing_contrast(embed: Callable[[str, str], float], pair: Pair) -> float:
    """Cosine of the words only ``a`` has against those only ``b`` has (1 if a side has none)."""
    only_a, only_b = differing_words(pair.a, pair.b)
    if not only_a or not only_b:
        return 1.0
    return embed(" ".join(only_a), " ".join(only_b))


def replaced_spans(first: str, second: str) -> list[tuple[str, str]]:
    """The runs of words ``second`` puts in place of runs of ``first`` ("handle" / "deal with").

    Words aligned by stem; a run only one side has (a clause dropped, a
    "please" added) is no replacement, nor is a swap of stop words alone.
    """
    one, two = first.lower().split(), second.lower().split()
    matcher = difflib.SequenceMatcher(None, [stem(w) for w in one], [stem(w) for w in two])
    spans = []
    for tag, start_one, end_one, start_two, end_two in matcher.get_opcodes():
        mine, theirs = one[start_one:end_one], two[start_two:end_two]
        if tag == "replace" and not set(mine + theirs) <= STOPWORDS:
            spans.append((" ".join(mine), " ".join(theirs)))
    return spans


def span_contrast(embed: Callable[[str, str], float], pair: Pair) -> float:
    """The lowest cosine of a run of words ``b`` puts in place of one of ``a`` (1 if none)."""
    return min(
        (embed(mine, theirs) for mine, theirs in replaced_spans(pair.a, pair.b)), default=1.0
    )


def variants(dedup: float) -> list[tuple[str, Rule]]:
    """(name, rule) for the current rule and every variant measured; the default first after it."""

    def current(pair: Pair, _: Callable[[str, str], float]) -> bool:
        return (
            pair.cosine >= dedup
            and negated(pair.a) == negated(pair.b)
            and content_overlap(pair.a, pair.b, OLD_STOPWORDS) >= 0.8
        )

    def cosine_only(floor: float) -> Rule:
        return lambda pair, _: pair.cosine >= floor

    def negation(floor: float) -> Rule:
        return lambda pair, _: pair.cosine >= floor and negated(pair.a) == negated(pair.b)

    def negation_antonyms(floor: float) -> Rule:
        return lambda pair, _: (
            pair.cosine >= floor
            and negated(pair.a) == negated(pair.b)
            and antonym_clash(pair.a, pair.b) is None
        )

    def polarity(floor: float) -> Rule:
        return lambda pair, _: pair.cosine >= floor and opposition(pair.a, pair.b) is None

    def overlap_polarity(share: float) -> Rule:
        return lambda pair, _: (
            pair.cosine >= dedup
            and content_overlap(pair.a, pair.b, OLD_STOPWORDS) >= share
            and opposition(pair.a, pair.b) is None
        )

    def contrast(floor: float, bar: float) -> Rule:
        return lambda pair, embed: pair.cosine >= floor and differing_contrast(embed, pair) >= bar

    def polarity_contrast(floor: float, bar: float) -> Rule:
        return lambda pair, embed: (
            pair.cosine >= floor
            and opposition(pair.a, pair.b) is None
            and differing_contrast(embed, pair) >= bar
        )

    def polarity_spans(floor: float, bar: float) -> Rule:
        return lambda pair, embed: (
            pair.cosine >= floor
            and opposition(pair.a, pair.b) is None
            and span_contrast(embed, pair) >= bar
        )

    found: list[tuple[str, Rule]] = [
        (f"before: cosine >= {dedup}, negation, overlap >= 0.8", current),
        (
            f"default: cosine >= {LINK_COSINE}, polarity, "
            f"contrast >= {CONTRAST_COSINE} below cosine {SURE_COSINE}",
            lambda pair, embed: why_not_linked(pair.a, pair.b, pair.cosine, embed) is None,
        ),
    ]
    for floor in (0.5, 0.6, 0.7, dedup, 0.8, 0.9):
        found.append((f"cosine >= {floor}", cosine_only(floor)))
    for floor in (0.45, 0.5, 0.55, 0.6, 0.7, dedup):
        found.append((f"cosine >= {floor}, negation", negation(floor)))
        found.append((f"cosine >= {floor}, negation, antonyms", negation_antonyms(floor)))
        found.append((f"cosine >= {floor}, polarity", polarity(floor)))
    for share in (0.3, 0.5, 0.8):
        found.append(
            (f"cosine >= {dedup}, stemmed overlap >= {share}, polarity", overlap_polarity(share))
        )
    for bar in (0.5, 0.7):
        found.append((f"cosine >= 0.6, contrast of differing words >= {bar}", contrast(0.6, bar)))
    for floor in (0.5, 0.6, 0.65, 0.7, dedup):
        for bar in (0.3, 0.4, 0.5, 0.6):
            found.append(
                (f"cosine >= {floor}, polarity, contrast >= {bar}", polarity_contrast(floor, bar))
            )
    for floor in (0.5, 0.7):
        for bar in (0.3, 0.4, 0.5):
            found.append(
                (f"cosine >= {floor}, polarity, span contrast >= {bar}", polarity_spans(floor, bar))
            )
    return found


def measure(pairs: Sequence[Pair], rule: Rule, embed: Callable[[str, str], float]) -> Counter[str]:
    """Linked pairs by kind and by (kind, how)."""
    linked: Counter[str] = Counter()
    for pair in pairs:
        if rule(pair, embed):
            linked[pair.kind] += 1
            linked[f"{pair.kind}/{pair.how}"] += 1
    return linked


def print_table(pairs: Sequence[Pair], rows: Sequence[tuple[str, Counter[str]]]) -> None:
    totals = Counter(pair.kind for pair in pairs)
    hows = sorted({f"{pair.kind}/{pair.how}" for pair in pairs})
    print(
        f"{totals['paraphrase']} paraphrase pairs, {totals['opposite']} opposite pairs, "
        f"{totals['related']} related pairs (same topic, other fact; bench/data/pairs.jsonl)\n"
    )
    print(f"{'rule':<66} {'linked':>7} {'opposites':>9} {'related':>7}  goals met")
    for name, linked in rows:
        share = linked["paraphrase"] / totals["paraphrase"]
        merged, related = linked["opposite"], linked["related"]
        met = "yes" if share >= 0.90 and merged == 0 else "no"
        print(f"{name:<66} {share:>7.3f} {merged:>9} {related:>7}  {met}")
    print("\nby kind of pair (linked of all):")
    print(f"{'':<24}" + "".join(f"{name.split(':')[0]:>10}" for name, _ in rows[:2]))
    for how in hows:
        size = sum(f"{p.kind}/{p.how}" == how for p in pairs)
        cells = "".join(f"{linked[how]:>6}/{size:<3}" for _, linked in rows[:2])
        print(f"{how:<24}{cells}")


def print_misses(pairs: Sequence[Pair], embed: Callable[[str, str], float]) -> None:
    """Every pair the default rule gets wrong, with its cosine and the rule's reason."""
    print("\npairs the default gets wrong (cosine, why not linked):")
    for pair in pairs:
        why = why_not_linked(pair.a, pair.b, pair.cosine, embed)
        if (why is None) != (pair.kind == "paraphrase"):
            print(f"  {pair.kind:<10} {pair.cosine:.3f} {pair.a!r} / {pair.b!r}: {why or 'linked'}")


def end_to_end(pairs: Sequence[Pair], th: thatch.Thatch) -> Counter[str]:
    """Record a, then b as a confirm, through DecisionModel.update: was b linked to a?"""
    thresholds = th.thresholds()
    model = DecisionModel(
        th.decision_storage,
        th.embedder,
        dedup_threshold=thresholds.dedup,
        fire_threshold=1.0,
    )
    linked: Counter[str] = Counter()
    for index, pair in enumerate(pairs):
        store = f"bench/wording-{index}"
        first = model.update("recording a user's preference", pair.a, "create", store=store)
        second = model.update("recording a user's preference", pair.b, "confirm", store=store)
        linked[pair.kind] += second.prediction.id == first.prediction.id
        named = second.similar is not None and second.similar.prediction.id == first.prediction.id
        linked[f"{pair.kind} named"] += named
    return linked


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every rule on the pairs, check the default end to end, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=PAIRS, help="the pairs JSONL file")
    parser.add_argument("--misses", action="store_true", help="list the default's wrong pairs")
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="thatch-prediction-wording-") as home,
        thatch.open(home=home) as th,
    ):
        embedder = th.embedder
        pairs = with_cosines(read_pairs(args.data, RELATED), embedder)
        cache: dict[tuple[str, str], float] = {}

        def embed(one: str, two: str) -> float:
            if (one, two) not in cache:
                vectors = embedder.embed_passages([one, two])
                cache[(one, two)] = float(vectors[0] @ vectors[1])
            return cache[(one, two)]

        dedup = th.thresholds().dedup
        print(f"model {embedder.model_id}; dedup {dedup}; link cosine {LINK_COSINE}\n")
        rules = variants(dedup)
        rows = [(name, measure(pairs, rule, embed)) for name, rule in rules]
        print_table(pairs, rows)
        if args.misses:
            print_misses(pairs, embed)
        linked = end_to_end(pairs, th)
        print(
            f"\nend to end (DecisionModel.update, a then b as confirm): "
            f"{linked['paraphrase']} paraphrases linked, {linked['opposite']} opposites merged, "
            f"{linked['related']} related merged; of the rest, the answer named a as similar "
            f"(cosine >= {SIMILAR_COSINE}) for {linked['paraphrase named']} paraphrases, "
            f"{linked['opposite named']} opposites, {linked['related named']} related"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
