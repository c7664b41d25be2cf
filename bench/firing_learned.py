"""Firing rules learnt from labelled prompts, on bench/data/firing: does more data or a fit help?

bench/prediction_firing.py ships the intent shift: the threshold moves with the
prompt's component along one axis, the mean of ~140 generic task prompts less
the mean of ~140 questions (core/src/thatch/decisions/firing_background.tsv).
This script asks whether learning from more labelled prompts does better, with
the firing set kept out of every fit.

1. **Axes from a larger background.** bench/data/intent_training holds 400
   situations with 1,600 task prompts and 900 prompts where nothing should
   fire, written for this without seeing the firing set. Each axis (mean
   difference or balanced logistic regression, on that set alone or with the
   shipped background) is scored on the whole firing set with the shipped
   rule's grid: intent weight x margin, each at its best threshold (best
   fire@5 with false-fire <= 0.05); the row shows the best with at most 0.5
   wrong lines per task prompt, and the best with no margin.
2. **Fits on the firing set, 5-fold by situation.** A query-side linear map
   (q' = q + A q, full or rank 32, L2 penalty, trained with a ranking loss over
   the training folds' matchers and a firing loss that keeps their unrelated
   prompts under the bar), and a nearest-neighbour intent (the mean cosine of
   the prompt's 5 nearest training tasks less that of its 5 nearest unrelated
   prompts) beside the shipped shift. Each fold's held-out prompts are ranked
   against all 305 matchers and calibrated as above; figures are the folds'
   mean.

    uv run python bench/firing_learned.py     # ~3 min
    uv run python bench/firing_learned.py --data bench/data/firing_questions

``--data`` runs both parts on another set in the firing set's format, such as
bench/data/firing_questions (994 preferences, a question each).
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import thatch
from cached_embedder import CachedEmbedder
from data_sets import DATA, read_jsonl
from firing_measures import MAX_WRONG, SHOWN, Figures, FiringSet, Matrix, Rule, calibrate, embed_set
from thatch.decisions import firing

TRAINING = DATA / "intent_training"
FOLDS = 5
#: The shipped rule's grid, wider in weight: a better axis may bear more.
WEIGHTS = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0)
MARGINS: tuple[float | None, ...] = (None, 0.03, 0.05, 0.10)
Vectors = npt.NDArray[np.float64]


def mean_difference(vectors: Matrix, tasks: npt.NDArray[np.bool_]) -> Matrix:
    """The shipped axis: mean task vector less mean other vector, unit length."""
    return firing.intent_axis(vectors, ["task" if t else "ask" for t in tasks])


def logistic_axis(vectors: Matrix, tasks: npt.NDArray[np.bool_], l2: float) -> Matrix:
    """The weight vector of a class-balanced logistic regression, unit length."""
    x = vectors.astype(np.float64)
    y = tasks.astype(np.float64)
    weight = np.where(tasks, 0.5 / y.mean(), 0.5 / (1 - y.mean())) / len(x)
    w, bias = np.zeros(x.shape[1]), 0.0
    for _ in range(2000):
        gradient = weight * (1 / (1 + np.exp(-(x @ w + bias))) - y)
        w -= 0.5 * (x.T @ gradient + l2 * w)
        bias -= 0.5 * gradient.sum()
    return (w / np.linalg.norm(w)).astype(np.float32)


def best_on_grid(data: FiringSet, axis: Matrix) -> tuple[str, Figures, str, Figures]:
    """The grid's best point within MAX_WRONG, and its best point with no margin."""
    cosines = data.queries @ data.matchers.T
    intent = (data.queries @ axis)[:, None]
    points = {
        (w, m): calibrate(data, cosines, Rule("", cosines + w * intent, m))
        for w in WEIGHTS
        for m in MARGINS
    }
    kept = max(
        ((k, p) for k, p in points.items() if p.wrong <= MAX_WRONG), key=lambda kp: kp[1].fire5
    )
    open_ = max(((k, p) for k, p in points.items() if k[1] is None), key=lambda kp: kp[1].fire5)
    return f"w {kept[0][0]:g} m {kept[0][1]}", kept[1], f"w {open_[0][0]:g}", open_[1]


def train_map(
    tasks: Matrix,
    situation: npt.NDArray[np.int64],
    matchers: Matrix,
    unrelated: Matrix,
    l2: float,
    rank: int | None,
    steps: int = 300,
) -> Matrix:
    """A for q' = q + A q: softmax ranking of each task's matcher, firing loss at 0.45."""
    bar, temperature, sharpness, rate = 0.45, 0.05, 0.05, 3e-3
    dim = matchers.shape[1]
    rng = np.random.default_rng(0)
    params: list[Vectors] = (
        [np.zeros((dim, dim))] if rank is None else [rng.normal(0, 1e-3, (dim, rank)) for _ in "uv"]
    )
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    qt, qu, m = (a.astype(np.float64) for a in (tasks, unrelated, matchers))
    rows = np.arange(len(qt))
    for step in range(1, steps + 1):
        a = params[0] if rank is None else params[0] @ params[1].T
        st, su = (qt + qt @ a.T) @ m.T, (qu + qu @ a.T) @ m.T
        z = np.exp((st - st.max(1, keepdims=True)) / temperature)
        d_st = z / z.sum(1, keepdims=True)
        d_st[rows, situation] -= 1
        d_st /= temperature * len(qt)
        positive = 1 / (1 + np.exp(-(st[rows, situation] - bar) / sharpness))
        d_st[rows, situation] += (positive - 1) / sharpness / len(qt)
        e = np.exp((su - su.max(1, keepdims=True)) / temperature)
        soft_max = temperature * np.log(e.sum(1)) + su.max(1)
        negative = 1 / (1 + np.exp(-(soft_max - bar) / sharpness))
        d_su = (negative / sharpness / len(qu))[:, None] * e / e.sum(1, keepdims=True)
        d_a = (d_st @ m).T @ qt + (d_su @ m).T @ qu
        grads = (
            [d_a + 2 * l2 * params[0]]
            if rank is None
            else [d_a @ params[1] + 2 * l2 * params[0], d_a.T @ params[0] + 2 * l2 * params[1]]
        )
        for i, g in enumerate(grads):  # Adam
            first[i] = 0.9 * first[i] + 0.1 * g
            second[i] = 0.999 * second[i] + 0.001 * g * g
            step_size = rate * np.sqrt(1 - 0.999**step) / (1 - 0.9**step)
            params[i] -= step_size * first[i] / (np.sqrt(second[i]) + 1e-8)
    a = params[0] if rank is None else params[0] @ params[1].T
    return a.astype(np.float32)


def nearest_intent(prompts: Matrix, tasks: Matrix, unrelated: Matrix, k: int = 5) -> Matrix:
    """Mean cosine to the k nearest training tasks less that to the k nearest unrelated."""

    def near(other: Matrix) -> Matrix:
        return -np.sort(-(prompts @ other.T), axis=1)[:, :k].mean(axis=1)

    return (near(tasks) - near(unrelated)).astype(np.float32)


#: A variant of part 2: (queries, training rows) -> (ranking cosines, firing score, margin).
Variant = Callable[[FiringSet, npt.NDArray[np.int64], npt.NDArray[np.int64]], tuple[Matrix, Matrix]]


def cross_validate(data: FiringSet, variants: dict[str, tuple[Variant, float | None]]) -> None:
    """Each variant's fold-mean figures, folds drawn by situation (unrelated prompts at random)."""
    rng = np.random.default_rng(0)
    fold_of_situation = rng.permutation(len(data.matchers)) % FOLDS
    unrelated = np.flatnonzero(np.char.startswith(data.kinds, "unrelated"))
    fold = np.full(len(data.kinds), -1)
    fold[unrelated] = rng.permutation(len(unrelated)) % FOLDS
    task_rows = np.flatnonzero(data.kinds == "task")
    fold[task_rows] = fold_of_situation[data.expect[task_rows]]
    print(f"{'variant (5-fold by situation)':<52} {'fire@5':>6} {'ff':>6} {'wrong':>5} {'top5':>6}")
    for name, (variant, margin) in variants.items():
        figures = []
        for f in range(FOLDS):
            train = np.flatnonzero((fold != f) & (fold >= 0))
            test = np.flatnonzero(fold == f)
            ranking, score = variant(data, train, test)
            held = FiringSet(
                [],
                [],
                data.matchers,
                data.predictions,
                data.queries[test],
                data.expect[test],
                data.kinds[test],
            )
            point = calibrate(held, ranking, Rule(name, score, margin))
            tasks = np.flatnonzero(held.kinds == "task")
            own = ranking[tasks, held.expect[tasks]]
            top5 = np.mean((ranking[tasks] > own[:, None]).sum(axis=1) < SHOWN)
            figures.append((point.fire5, point.false_fire, point.wrong, top5))
        fire5, false, wrong, top5 = np.mean(figures, axis=0)
        print(f"{name:<52} {fire5:>6.3f} {false:>6.3f} {wrong:>5.2f} {top5:>6.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA / "firing", help="the set to score")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        home = stack.enter_context(tempfile.TemporaryDirectory(prefix="thatch-firing-learned-"))
        embedder = CachedEmbedder(stack.enter_context(thatch.open(home=home)).embedder)
        data = embed_set(embedder, args.data)
        shipped = firing.background()
        background = np.stack([embedder.embed_query(text) for _, text in shipped])
        background_tasks = np.asarray([label == "task" for label, _ in shipped])
        situations = [
            *read_jsonl(TRAINING / "situations_a.jsonl"),
            *read_jsonl(TRAINING / "situations_b.jsonl"),
        ]
        others = read_jsonl(TRAINING / "unrelated.jsonl")
        tasks = np.stack([embedder.embed_query(str(t)) for s in situations for t in s["tasks"]])  # type: ignore[attr-defined]
        unrelated = np.stack([embedder.embed_query(str(o["text"])) for o in others])
        matchers = embedder.embed_passages([str(s["matcher"]) for s in situations])
    kinds = np.asarray([str(o["kind"]) for o in others])
    firing_texts = {str(p["text"]) for p in data.prompts}
    shared = sum(str(t) in firing_texts for s in situations for t in s["tasks"])  # type: ignore[attr-defined]
    shared += sum(str(o["text"]) in firing_texts for o in others)
    nearest = (data.matchers @ matchers.T).max(axis=1)
    counts = ", ".join(f"{(kinds == k).sum()} {k}" for k in dict.fromkeys(kinds))
    print(
        f"training set: {len(situations)} situations, {len(tasks)} task prompts, "
        f"{len(unrelated)} unrelated ({counts}); texts shared with the firing set: {shared}; "
        f"each firing matcher's nearest training matcher: median cosine "
        f"{np.median(nearest):.2f}, >= 0.8 for {np.mean(nearest >= 0.8):.2f}\n"
    )

    # Part 1: axes from the larger background, on the whole firing set.
    both = np.concatenate([tasks, unrelated])
    is_task = np.concatenate([np.ones(len(tasks), bool), np.zeros(len(unrelated), bool)])
    asks_only = np.concatenate([np.ones(len(tasks), bool), kinds != "other_task"])
    with_shipped = np.concatenate([background, both])
    with_shipped_tasks = np.concatenate([background_tasks, is_task])
    axes = {
        "shipped background, mean difference": mean_difference(background, background_tasks),
        "training set, mean difference": mean_difference(both, is_task),
        "training set less other tasks, mean difference": mean_difference(
            both[asks_only], is_task[asks_only]
        ),
        "shipped + training, mean difference": mean_difference(with_shipped, with_shipped_tasks),
        **{
            f"{name}, logistic l2 {l2:g}": logistic_axis(vectors, labels, l2)
            for name, vectors, labels in (
                ("training set", both, is_task),
                ("shipped + training", with_shipped, with_shipped_tasks),
            )
            for l2 in (1e-2, 1e-3)
        },
    }
    print(
        f"{'axis (whole firing set)':<48} {'best, wrong <= 0.5':<14} {'thresh':>6} {'fire@5':>6} "
        f"{'ff':>6} {'wrong':>5}   {'no margin':<7} {'fire@5':>6} {'wrong':>5}"
    )
    for name, axis in axes.items():
        kept, point, open_, open_point = best_on_grid(data, axis)
        print(
            f"{name:<48} {kept:<14} {point.threshold:>6.2f} {point.fire5:>6.3f} "
            f"{point.false_fire:>6.3f} {point.wrong:>5.2f}   {open_:<7} "
            f"{open_point.fire5:>6.3f} {open_point.wrong:>5.2f}"
        )

    # Part 2: fits on the firing set itself, held out by situation.
    axis = axes["shipped background, mean difference"]
    cosines = data.queries @ data.matchers.T
    shift = cosines + 1.5 * (data.queries @ axis)[:, None]

    def fixed(score: Matrix) -> Variant:
        return lambda d, train, test: (cosines[test], score[test])

    def mapped(l2: float, rank: int | None) -> Variant:
        def run(d: FiringSet, train: npt.NDArray[np.int64], test: npt.NDArray[np.int64]):
            t = train[d.kinds[train] == "task"]
            u = train[np.char.startswith(d.kinds[train], "unrelated")]
            a = train_map(d.queries[t], d.expect[t], d.matchers, d.queries[u], l2, rank)
            moved = d.queries[test] + d.queries[test] @ a.T
            return moved @ d.matchers.T, moved @ d.matchers.T

        return run

    def neighbours(weight: float) -> Variant:
        def run(d: FiringSet, train: npt.NDArray[np.int64], test: npt.NDArray[np.int64]):
            t = train[d.kinds[train] == "task"]
            u = train[np.char.startswith(d.kinds[train], "unrelated")]
            near = nearest_intent(d.queries[test], d.queries[t], d.queries[u])
            return cosines[test], shift[test] + weight * near[:, None]

        return run

    cross_validate(
        data,
        {
            "plain cosine": (fixed(cosines), None),
            "shipped intent shift 1.5, margin 0.03": (fixed(shift), 0.03),
            "shipped intent shift 1.5, no margin": (fixed(shift), None),
            "linear map, full, l2 0.01": (mapped(1e-2, None), None),
            "linear map, rank 32, l2 0.01": (mapped(1e-2, 32), None),
            "linear map, rank 32, l2 0.001": (mapped(1e-3, 32), None),
            "shift + nearest-neighbour intent x1, margin 0.03": (neighbours(1.0), 0.03),
            "shift + nearest-neighbour intent x1, no margin": (neighbours(1.0), None),
            "shift + nearest-neighbour intent x2, margin 0.05": (neighbours(2.0), 0.05),
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
