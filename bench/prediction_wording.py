"""Paraphrases linked, opposites merged: the wording rule on the wording pair sets.

Every pair of a set (see bench/data/README.md) is a statement ``a`` the
user already has as a prediction and a statement ``b`` the agent records
later. A ``paraphrase`` pair should be linked (``b`` is ``a`` in other
words), an ``opposite`` pair never merged (``b`` contradicts ``a``). For the
current rule and every variant, the script prints the share of paraphrases
linked (goal >= 0.90) and the number of opposites merged (goal 0), with the
cosine of the real embedding model, per kind of pair. It measures the
committed set bench/data/wording_pairs.jsonl, on which the rule was tuned,
and the two sets written before it was tuned on them (wording_pairs_heldout*).

A rule sees the two statements and their cosine, as
``DecisionModel._same_prediction`` does for the nearest existing predictions.
The default rule is then checked end to end: ``a`` recorded with ``create``,
``b`` with ``confirm``, each pair in its own store of a throw-away home,
through ``DecisionModel.update``; the figures must be those of the table.

    uv run python bench/prediction_wording.py            # the tables (~2 min)
    uv run python bench/prediction_wording.py --misses   # and every pair the default gets wrong
    uv run python bench/prediction_wording.py --data bench/data/wording_pairs.jsonl
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import thatch
from data_sets import DATA, read_jsonl
from thatch.decisions import wording
from thatch.decisions.engine import SIMILAR_COSINE, DecisionModel
from thatch.decisions.wording import (
    CONTRAST_COSINE,
    FUNCTION_WORDS,
    LINK_COSINE,
    SUBSET_COSINE,
    SWAP_COSINE,
    conflict,
    content_overlap,
    differing_words,
    negated,
    normalise,
    opposition,
    why_not_linked,
)
from thatch.plugin.embedder import Embedder

SETS = (
    DATA / "wording_pairs.jsonl",
    DATA / "wording_pairs_heldout.jsonl",
    DATA / "wording_pairs_heldout2.jsonl",
)
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


@dataclass(frozen=True)
class Gates:
    """The thresholds and parts of the rule, to build every variant from the module's pieces."""

    link: float = LINK_COSINE
    subset: float = SUBSET_COSINE
    swap: float = SWAP_COSINE
    contrast: float = CONTRAST_COSINE
    #: A single word put for a single other word is never linked.
    one_word_swaps: bool = True
    #: The cosine of the normalised statements counts when higher than the raw one.
    normalised_cosine: bool = True


def gated(gates: Gates) -> Rule:
    """The rule of wording.why_not_linked with other gates (Gates() is the default)."""

    def rule(pair: Pair, embed: Callable[[str, str], float]) -> bool:
        if pair.cosine < gates.link or conflict(pair.a, pair.b) is not None:
            return False
        only_a, only_b = differing_words(pair.a, pair.b)
        if gates.one_word_swaps and len(only_a) == 1 and len(only_b) == 1:
            return False
        cosine = pair.cosine
        one, two = normalise(pair.a), normalise(pair.b)
        changed = (one, two) != (pair.a.lower().strip(), pair.b.lower().strip())
        if gates.normalised_cosine and changed:
            cosine = max(cosine, embed(one, two))
        if cosine < (gates.swap if only_a and only_b else gates.subset):
            return False
        return (
            not (only_a and only_b) or embed(" ".join(only_a), " ".join(only_b)) >= gates.contrast
        )

    return rule


@contextmanager
def no_synonyms() -> Iterator[None]:
    """The rule without its table of synonyms (only lower case and stems join words)."""
    table = wording._SYNONYMS
    wording._SYNONYMS = ()
    try:
        yield
    finally:
        wording._SYNONYMS = table


def variants(dedup: float) -> list[tuple[str, Rule]]:
    """(name, rule) for the rule before, the default and every variant measured."""

    def before(pair: Pair, _: Callable[[str, str], float]) -> bool:
        return (
            pair.cosine >= dedup
            and negated(pair.a) == negated(pair.b)
            and content_overlap(pair.a, pair.b, OLD_STOPWORDS) >= 0.8
        )

    def default(pair: Pair, embed: Callable[[str, str], float]) -> bool:
        return why_not_linked(pair.a, pair.b, pair.cosine, embed) is None

    def synonyms_off(pair: Pair, embed: Callable[[str, str], float]) -> bool:
        with no_synonyms():
            return default(pair, embed)

    def cosine_only(floor: float) -> Rule:
        return lambda pair, _: pair.cosine >= floor

    def polarity(floor: float) -> Rule:
        return lambda pair, _: pair.cosine >= floor and opposition(pair.a, pair.b) is None

    found: list[tuple[str, Rule]] = [
        (f"before: cosine >= {dedup}, negation, overlap >= 0.8", before),
        (
            f"default: cosine >= {LINK_COSINE}, polarity, no one-word swap, "
            f"subset {SUBSET_COSINE} / swap {SWAP_COSINE} + contrast {CONTRAST_COSINE}",
            default,
        ),
        ("default, checked: the same rule built from its parts", gated(Gates())),
    ]
    for floor in (0.4, 0.5):
        found.append((f"default with cosine floor {floor}", gated(Gates(link=floor))))
    found.append(("default without the synonym table", synonyms_off))
    found.append(("default without the one-word-swap rule", gated(Gates(one_word_swaps=False))))
    found.append(("default with the raw cosine only", gated(Gates(normalised_cosine=False))))
    for subset in (0.5, 0.7):
        found.append((f"default with subset cosine {subset}", gated(Gates(subset=subset))))
    for swap in (0.6, 0.8):
        found.append((f"default with swap cosine {swap}", gated(Gates(swap=swap))))
    for bar in (0.3, 0.5):
        found.append((f"default with contrast {bar}", gated(Gates(contrast=bar))))
    for floor in (0.5, 0.7, dedup):
        found.append((f"cosine >= {floor}", cosine_only(floor)))
        found.append((f"cosine >= {floor}, polarity", polarity(floor)))
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
    print(f"{'rule':<78} {'linked':>7} {'opposites':>9} {'related':>7}  goals met")
    for name, linked in rows:
        share = linked["paraphrase"] / totals["paraphrase"]
        merged, related = linked["opposite"], linked["related"]
        met = "yes" if share >= 0.90 and merged == 0 else "no"
        print(f"{name:<78} {share:>7.3f} {merged:>9} {related:>7}  {met}")
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
    """Measure every rule on each set, check the default end to end, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, action="append", help="a pairs JSONL file (default: the three sets)"
    )
    parser.add_argument("--misses", action="store_true", help="list the default's wrong pairs")
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="thatch-prediction-wording-") as home,
        thatch.open(home=home) as th,
    ):
        embedder = th.embedder
        cache: dict[tuple[str, str], float] = {}

        def embed(one: str, two: str) -> float:
            if (one, two) not in cache:
                vectors = embedder.embed_passages([one, two])
                cache[(one, two)] = float(vectors[0] @ vectors[1])
            return cache[(one, two)]

        dedup = th.thresholds().dedup
        print(f"model {embedder.model_id}; dedup {dedup}; link cosine {LINK_COSINE}")
        for path in args.data or SETS:
            print(f"\n== {path.name}")
            pairs = with_cosines(read_pairs(path, RELATED), embedder)
            rows = [(name, measure(pairs, rule, embed)) for name, rule in variants(dedup)]
            if rows[1][1] != rows[2][1]:
                raise SystemExit("the rule built from its parts differs from why_not_linked")
            print_table(pairs, rows)
            if args.misses:
                print_misses(pairs, embed)
            linked = end_to_end(pairs, th)
            print(
                f"\nend to end (DecisionModel.update, a then b as confirm): "
                f"{linked['paraphrase']} paraphrases linked, {linked['opposite']} opposites "
                f"merged, {linked['related']} related merged; of the rest, the answer named a as "
                f"similar (cosine >= {SIMILAR_COSINE}) for {linked['paraphrase named']} "
                f"paraphrases, {linked['opposite named']} opposites, {linked['related named']} "
                "related"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
