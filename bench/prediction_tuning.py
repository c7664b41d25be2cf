"""Tune the decision model's firing threshold and score variant on bench/data/decisions.jsonl.

The situations of the set are loaded into a throw-away home through
``DecisionModel.update`` with the real embedder, in file order, each
preference's signals one after the other (see bench/data/DECISIONS.md). Then
every probe prompt is queried, for every variant and every threshold, with
``DecisionModel.query(probe, [store], limit=10)``: the same call, limit and
store scope as ``thatch predictions query``.

Measures, for one (variant, threshold):

recall
    Share of the probes that have an expected situation whose hits include
    at least one prediction of that situation.
precision
    Share of the shown (probe, prediction) pairs that are right, over every
    probe, those that expect nothing included: a line of the nudge block is
    right when its prediction belongs to one of the probe's expected
    situations. A line from a neighbouring situation counts as wrong, because
    the agent reads it too.
F1
    Harmonic mean of that precision and recall; the pick maximises it.
probe precision
    Share of the probes that fired anything whose hits include an expected
    prediction (a looser precision: one right line makes the block right).
top-1
    Share of the probes with an expected situation whose first hit (highest
    score) is one of its predictions: the ranking quality.
MRR
    Mean over those probes of 1 / rank of the first expected hit (0 when
    none is shown).
false alarms
    Probes that expect nothing but fired anyway.

Variants are :class:`~thatch.decisions.engine.ScoreSettings` (population
prior on in all): baseline (edge weight 1, cosine power 1), edge weight from
cosine, cosine^1.3, and both. Firing depends on the cosine and the threshold
only, so at one threshold the variants fire the same matchers; they differ in
ranking and in which predictions survive the limit of 10. The
edge-weight flag changes how edges are created, so the set is loaded once per
value of the flag, into its own store of the same home. The same is done with
the population prior off, measured for comparison but never chosen.

Two checks of the engine come with the load:

confidence inversions
    Pairs of loaded predictions where one has more confirms and no more
    disconfirms than the other, yet a lower confidence (the prior each was
    created with outweighs the evidence).
opposite preferences
    For each ``opposite`` line, ``a`` is recorded, then ``b`` as a confirm,
    in a fresh store: is ``b`` stored as its own prediction, or merged into
    ``a`` (whose confidence it then raises)?

Thresholds tried are 0.25, 0.30, ... 0.70. A finer grid would fit the
threshold to single probes: one probe moves recall by 1/117 = 0.0085. The
steps of 0.01 around the chosen threshold are printed afterwards, to show how
flat the optimum is. Ties on F1 go to the better top-1, then to the better
MRR, then to the variant listed first (baseline first: a change of default
needs a strictly better result), then to the threshold farthest from any
probe-to-matcher cosine, so it does not sit right against one example.

    uv run python bench/prediction_tuning.py

The firing threshold itself is calibrated by bench/prediction_firing.py (with
the prompt-intent rule of thatch.decisions.firing it is no longer a plain
cosine); the "chosen" point here is this set's best F1, printed to compare.
Last, the figures at the shipped defaults: the engine's rule at the
threshold of thresholds.json, and the rule before it, plain cosine at 0.40.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import query_products
import thatch
from cached_embedder import CachedEmbedder
from data_sets import DATA as DATA_DIR
from decision_set import Loaded, Opposite, Probe, Situation, load, read_set
from thatch.decisions.engine import DecisionModel, PredictionHit, ScoreSettings
from thatch.plugin import DecisionStorage
from thatch.plugin.decisions import Prediction
from thatch.plugin.embedder import Embedder

DATA = DATA_DIR / "decisions.jsonl"
#: Results per query, as ``thatch predictions query`` defaults to.
LIMIT = 10
GRID = np.round(np.arange(0.25, 0.7001, 0.05), 2)
#: Around the chosen threshold, printed as a sensitivity check.
FINE_STEPS = np.round(np.arange(-0.04, 0.0401, 0.01), 2)


@dataclass(frozen=True)
class Variant:
    """A named way of scoring, and the store its edges were loaded into."""

    name: str
    settings: ScoreSettings

    @property
    def store(self) -> str:
        """One store per way of loading: the edge weight and the prior change what is stored."""
        edges = "cosine" if self.settings.edge_weight_from_cosine else "one"
        prior = "population" if self.settings.population_prior else "flat"
        return f"bench/edge-{edges}-prior-{prior}"


#: The candidates the choice is made among.
VARIANTS = (
    Variant("baseline", ScoreSettings()),
    Variant("edge weight from cosine", ScoreSettings(edge_weight_from_cosine=True)),
    Variant("cosine^1.3", ScoreSettings(cosine_power=1.3)),
    Variant("both", ScoreSettings(edge_weight_from_cosine=True, cosine_power=1.3)),
)
#: Measured and printed for comparison, never chosen.
EXTRA = (
    Variant("no population prior", ScoreSettings(population_prior=False)),
    Variant("plain cosine (no maps)", ScoreSettings(prompt_map=False)),
)
#: The default before the prompt-intent rule: plain cosine at this threshold.
OLD_THRESHOLD = 0.40


@dataclass(frozen=True)
class Point:
    """Figures of one (variant, threshold)."""

    variant: str
    threshold: float
    precision: float
    recall: float
    f1: float
    probe_precision: float
    top1: float
    mrr: float
    false_alarms: int
    #: Mean lines shown per probe that fired.
    lines: float
    #: Positive probes hit, by probe type.
    hits_by_type: dict[str, int]


def run_probes(
    model: DecisionModel, probes: Sequence[Probe], store: str
) -> list[list[PredictionHit]]:
    """The hits of every probe, in probe order."""
    return [model.query(probe.text, [store], limit=LIMIT) for probe in probes]


def score(
    variant: str,
    threshold: float,
    probes: Sequence[Probe],
    results: Sequence[Sequence[PredictionHit]],
    owners: dict[int, set[str]],
) -> Point:
    """Precision, recall, F1, top-1 and false alarms of one (variant, threshold)."""
    shown = right = fired = fired_right = positives = hit = top = alarms = 0
    reciprocal = 0.0
    by_type: Counter[str] = Counter()
    for probe, hits in zip(probes, results, strict=True):
        expected = set(probe.expect)
        good = [bool(owners.get(h.prediction.id, set()) & expected) for h in hits]
        shown += len(hits)
        right += sum(good)
        fired += bool(hits)
        if expected:
            positives += 1
            hit += any(good)
            fired_right += any(good)
            top += bool(good) and good[0]
            reciprocal += 1 / (good.index(True) + 1) if any(good) else 0.0
            by_type[probe.type] += any(good)
        elif hits:
            alarms += 1
    precision = right / shown if shown else 1.0
    recall = hit / positives if positives else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Point(
        variant=variant,
        threshold=threshold,
        precision=precision,
        recall=recall,
        f1=f1,
        probe_precision=fired_right / fired if fired else 1.0,
        top1=top / positives if positives else 0.0,
        mrr=reciprocal / positives if positives else 0.0,
        false_alarms=alarms,
        lines=shown / fired if fired else 0.0,
        hits_by_type=dict(by_type),
    )


def probe_cosines(
    storage: DecisionStorage, embedder: Embedder, probes: Sequence[Probe], store: str
) -> npt.NDArray[np.float64]:
    """Every probe-to-matcher cosine of the store (the values a threshold crosses)."""
    cosines: list[float] = []
    for probe in probes:
        vector = embedder.embed_query(probe.text)
        hits = storage.nearest_matchers(vector, embedder.model_id, [store], 10_000)
        cosines.extend(float(hit.score) for hit in hits)
    return np.asarray(cosines)


def choose(points: Sequence[Point], cosines: npt.NDArray[np.float64]) -> tuple[Point, float]:
    """Best F1; then top-1; then MRR; then the earlier variant; then the widest margin."""
    order = {variant.name: index for index, variant in enumerate(VARIANTS)}

    def key(point: Point) -> tuple[float, float, float, int, float]:
        margin = float(np.min(np.abs(cosines - point.threshold)))
        return (
            round(point.f1, 9),
            round(point.top1, 9),
            round(point.mrr, 9),
            -order[point.variant],
            margin,
        )

    best = max(points, key=key)
    return best, key(best)[4]


def print_table(points: Sequence[Point], chosen: Point | None) -> None:
    """One line per point, the chosen one marked."""
    print(
        f"{'variant':<24} {'thresh':>6} {'prec':>6} {'recall':>6} {'F1':>6} "
        f"{'probeP':>6} {'top-1':>6} {'MRR':>6} {'alarms':>6} {'lines':>5}"
    )
    for point in points:
        mark = "  <- chosen" if point == chosen else ""
        print(
            f"{point.variant:<24} {point.threshold:>6.2f} {point.precision:>6.3f} "
            f"{point.recall:>6.3f} {point.f1:>6.3f} {point.probe_precision:>6.3f} "
            f"{point.top1:>6.3f} {point.mrr:>6.3f} {point.false_alarms:>6d} "
            f"{point.lines:>5.2f}{mark}"
        )


def print_load(loaded: Loaded, situations: Sequence[Situation]) -> None:
    """What the load did: outcomes, matchers, merges."""
    preferences = sum(len(s.preferences) for s in situations)
    outcomes = ", ".join(f"{n} {name}" for name, n in sorted(loaded.outcomes.items()))
    print(
        f"store {loaded.store}: {len(situations)} situations, {preferences} preferences -> "
        f"{loaded.matchers} matchers, {len(loaded.owners)} predictions; updates: {outcomes}"
    )
    for situation, wording, into, weight in loaded.reused_matchers:
        print(f"  {situation}: {wording!r} reused matcher {into!r} (edge weight {weight:.4f})")
    for situation, statement, into in loaded.merged_predictions:
        print(f"  {situation}: prediction {statement!r} merged into {into!r}")


def print_confidences(storage: DecisionStorage, store: str) -> None:
    """The spread of confidences and priors, and confidence inversions.

    An inversion is a pair where one prediction has more confirms and no
    more disconfirms than the other, yet a lower confidence: the prior it
    started from outweighs the evidence.
    """
    predictions = storage.list_predictions([store])
    values = np.asarray([p.confidence for p in predictions])
    priors = np.asarray([p.prior for p in predictions])
    learned = priors[priors != 0.5]
    spread = f" ({learned.min():.4f} to {learned.max():.4f})" if len(learned) else ""
    print(
        f"  confidences: min {values.min():.4f}, median {np.median(values):.4f}, "
        f"max {values.max():.4f}; priors: {len(priors) - len(learned)} at 0.5, "
        f"{len(learned)} from the population{spread}"
    )
    inversions = [
        (p, q)
        for p in predictions
        for q in predictions
        if p.confirm_count > q.confirm_count
        and p.disconfirm_count <= q.disconfirm_count
        and p.confidence < q.confidence
    ]
    if not inversions:
        print("  no confidence inversions")
        return
    p, q = max(inversions, key=lambda pair: pair[0].confirm_count - pair[1].confirm_count)
    print(
        f"  {len(inversions)} confidence inversions (more confirms, no more disconfirms, lower "
        f"confidence), e.g.\n    {_evidence(p)} {p.statement!r}\n    {_evidence(q)} "
        f"{q.statement!r}"
    )


def _evidence(prediction: Prediction) -> str:
    """Counts, prior and confidence of one prediction, for a report line."""
    return (
        f"[confirm {prediction.confirm_count:g}, disconfirm {prediction.disconfirm_count:g}, "
        f"prior {prediction.prior:.4f} -> {prediction.confidence:.4f}]"
    )


def check_opposites(
    storage: DecisionStorage, embedder: Embedder, dedup: float, opposites: Sequence[Opposite]
) -> None:
    """Record a, then b as a confirm, in a fresh store each: is b stored, or merged into a?"""
    merged = 0
    lines = []
    for index, pair in enumerate(opposites):
        model = DecisionModel(storage, embedder, dedup_threshold=dedup, fire_threshold=1.0)
        store = f"bench/opposite-{index}"
        first = model.update(pair.matcher, pair.a, "create", store=store)
        second = model.update(pair.matcher, pair.b, "confirm", store=store)
        vectors = embedder.embed_passages([pair.a, pair.b])
        cosine = float(vectors[0] @ vectors[1])
        same = second.prediction.id == first.prediction.id
        merged += same
        verdict = f"{second.outcome} a" if same else second.outcome
        lines.append(f"  {cosine:.3f} {verdict:<12} {pair.a!r} / {pair.b!r}")
    print(
        f"\nopposite preferences: recording b (confirm) after a, same situation; "
        f"{merged} of {len(opposites)} were merged into a (cosine >= dedup {dedup})"
    )
    print("\n".join(lines))


def print_details(
    chosen: Point,
    probes: Sequence[Probe],
    results: Sequence[Sequence[PredictionHit]],
    owners: dict[int, set[str]],
) -> None:
    """At the chosen point: hits by probe type, misses, and negatives that fired."""
    totals = Counter(p.type for p in probes if p.expect)
    print(
        "hit by type: "
        + ", ".join(f"{t} {chosen.hits_by_type.get(t, 0)}/{n}" for t, n in totals.items())
    )
    for probe, hits in zip(probes, results, strict=True):
        expected = set(probe.expect)
        if expected and not any(owners.get(h.prediction.id, set()) & expected for h in hits):
            print(f"  missed  [{','.join(probe.expect)}] {probe.text}")
    for probe, hits in zip(probes, results, strict=True):
        if not probe.expect and hits:
            best = hits[0]
            print(
                f"  alarm   {probe.text!r} -> {best.matcher.description!r} "
                f"(cosine {best.cosine:.3f})"
            )


def first_right(
    hits: Sequence[PredictionHit], expect: Sequence[str], owners: dict[int, set[str]]
) -> bool:
    """Whether the first hit belongs to one of the expected situations."""
    return bool(hits) and bool(owners.get(hits[0].prediction.id, set()) & set(expect))


def print_flips(
    probes: Sequence[Probe],
    runs: dict[str, tuple[Sequence[Sequence[PredictionHit]], dict[int, set[str]]]],
) -> None:
    """Probes whose first line is right under one variant and wrong under another."""
    names = list(runs)
    for index, probe in enumerate(probes):
        if not probe.expect:
            continue
        right = {
            name: first_right(hits[index], probe.expect, owners)
            for name, (hits, owners) in runs.items()
        }
        if len(set(right.values())) > 1:
            print(f"  [{','.join(probe.expect)}] {probe.text}")
            for name in names:
                hits = runs[name][0][index]
                lines = "; ".join(
                    f"{h.score:.4f} = {h.cosine:.3f}^p x {h.weight:.2f} x "
                    f"{h.prediction.confidence:.3f} ({h.matcher.description})"
                    for h in hits[:2]
                )
                print(f"    {name:<24} {'right' if right[name] else 'wrong'}: {lines}")


def sweep(
    storage: DecisionStorage,
    embedder: Embedder,
    dedup: float,
    variants: Sequence[Variant],
    thresholds: Sequence[float],
    probes: Sequence[Probe],
    owners: dict[str, dict[int, set[str]]],
) -> tuple[list[Point], dict[tuple[str, float], list[list[PredictionHit]]]]:
    """Query every probe for every (variant, threshold); the points and the raw hits."""
    points: list[Point] = []
    results: dict[tuple[str, float], list[list[PredictionHit]]] = {}
    for variant in variants:
        for threshold in thresholds:
            model = DecisionModel(
                storage,
                embedder,
                dedup_threshold=dedup,
                fire_threshold=threshold,
                settings=variant.settings,
            )
            hits = run_probes(model, probes, variant.store)
            results[(variant.name, threshold)] = hits
            points.append(score(variant.name, threshold, probes, hits, owners[variant.store]))
    return points, results


def main(argv: Sequence[str] | None = None) -> int:
    """Load the set, sweep variants and thresholds, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the decisions JSONL file")
    query_products.add_option(parser)
    args = parser.parse_args(argv)
    situations, probes, opposites = read_set(args.data)
    positives = sum(bool(p.expect) for p in probes)
    print(
        f"{len(situations)} situations, {len(probes)} probes "
        f"({positives} expect a situation, {len(probes) - positives} expect none)"
    )

    with contextlib.ExitStack() as stack:
        home = stack.enter_context(tempfile.TemporaryDirectory(prefix="thatch-prediction-tuning-"))
        query_products.configure(home, args.query_products)
        th = stack.enter_context(thatch.open(home=home))
        embedder = CachedEmbedder(th.embedder)
        dedup = th.thresholds().dedup
        print(f"model {embedder.model_id}; dedup {dedup}; limit {LIMIT}\n")
        owners: dict[str, dict[int, set[str]]] = {}
        for variant in (*VARIANTS, *EXTRA):
            if variant.store in owners:
                continue
            loader = DecisionModel(
                th.decision_storage,
                embedder,
                dedup_threshold=dedup,
                fire_threshold=1.0,
                settings=variant.settings,
            )
            loaded = load(loader, situations, variant.store)
            owners[variant.store] = loaded.owners
            print_load(loaded, situations)
            print_confidences(th.decision_storage, variant.store)
        check_opposites(th.decision_storage, embedder, dedup, opposites)

        grid = GRID.tolist()
        points, results = sweep(
            th.decision_storage, embedder, dedup, VARIANTS, grid, probes, owners
        )
        cosines = probe_cosines(th.decision_storage, embedder, probes, VARIANTS[0].store)
        chosen, margin = choose(points, cosines)
        print(
            "\nprec = right lines / lines shown (all probes); recall = positive probes with an "
            "expected line;\nprobeP = fired probes with an expected line / fired probes; "
            "top-1 = positive probes whose first line\nis expected; MRR = mean 1/rank of the "
            "first expected line; alarms = negative probes that fired;\nlines = mean lines per "
            "fired probe\n"
        )
        print_table(points, chosen)
        extra = sweep(th.decision_storage, embedder, dedup, EXTRA, grid, probes, owners)[0]
        print("\nfor comparison, not a candidate:")
        print_table(extra, None)
        print(
            f"\nchosen: {chosen.variant} at {chosen.threshold:.2f} "
            f"(precision {chosen.precision:.3f}, recall {chosen.recall:.3f}, F1 {chosen.f1:.3f}, "
            f"top-1 {chosen.top1:.3f}, MRR {chosen.mrr:.3f}); "
            f"nearest probe cosine {margin:.4f} away"
        )
        tied = [p for p in points if round(p.f1, 9) == round(chosen.f1, 9) and p != chosen]
        if tied:
            print(
                "tied on F1: "
                + ", ".join(
                    f"{p.variant} {p.threshold:.2f} (top-1 {p.top1:.3f}, MRR {p.mrr:.3f})"
                    for p in tied
                )
            )
        variant = next(v for v in VARIANTS if v.name == chosen.variant)

        fine = [round(chosen.threshold + step, 2) for step in FINE_STEPS.tolist()]
        print(f"\nsensitivity: {variant.name} in steps of 0.01 (not used for the choice)")
        print_table(
            sweep(th.decision_storage, embedder, dedup, [variant], fine, probes, owners)[0], None
        )

        print(
            f"\nat {chosen.threshold:.2f}, probes whose first line is right in some variants only:"
        )
        print_flips(
            probes,
            {v.name: (results[(v.name, chosen.threshold)], owners[v.store]) for v in VARIANTS},
        )
        print(f"\nat the chosen point ({variant.name}, {chosen.threshold:.2f}):")
        print_details(
            chosen, probes, results[(chosen.variant, chosen.threshold)], owners[variant.store]
        )
        if variant.settings != ScoreSettings():
            print(f"the best variant ({chosen.variant}) is not the current default ScoreSettings()")
        else:
            print("the best variant is the current default, ScoreSettings()")
        shipped = th.thresholds().prediction
        print("\nat the shipped defaults:")
        print_table(
            [
                *sweep(
                    th.decision_storage, embedder, dedup, VARIANTS[:1], [shipped], probes, owners
                )[0],
                *sweep(
                    th.decision_storage, embedder, dedup, EXTRA[1:], [OLD_THRESHOLD], probes, owners
                )[0],
            ],
            None,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
