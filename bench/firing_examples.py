"""Firing with example prompts saved beside each preference: does it lift the ranking?

The firing benches find that the model's ranking, not the rule, bounds the
firing: a task prompt's own situation is often not among the five best
matchers. One remedy would change what is stored rather than how it is
scored: when the agent records a preference it also writes a few prompts in
which it applies ("tidy the header of conftest.py" for "Ordering imports in
Python modules"), and a prompt is scored against those as well as the
matcher. This script measures that before any of it is built.

The data is bench/data/intent_training: 400 situations with four task prompts
each and 900 prompts where nothing should fire. In fold k (of four) every
situation's task k is the prompt and its other three tasks are the examples
the agent wrote; the four folds are pooled (1,600 task prompts, and the 900
unrelated prompts once per fold, scored against that fold's examples), and
every variant is calibrated as the firing benches do: the threshold with the
most fire@5 at false-fire <= 0.05 over the pooled unrelated rows. The tasks
and their examples have one author, which favours the examples.

Variants: plain cosine to the matcher; the best of the matcher and 1 to 3
examples; the examples alone; the centroid of the matcher and the examples, the matcher
weighing as one example or as the three together; the mean of the two best of
those four; and the shipped intent shift (weight 1.5, margin 0.03) on the
matcher and on the centroid.

    uv run python bench/firing_examples.py     # ~1 min
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Callable, Sequence

import numpy as np
import thatch
from cached_embedder import CachedEmbedder
from data_sets import DATA, read_jsonl
from firing_measures import HEADER, FiringSet, Matrix, Rule, calibrate, row
from firing_rules import ranking, shipped_axis

TRAINING = DATA / "intent_training"
FOLDS = 4
#: The shipped rule's intent weight and margin (bench/prediction_firing.py).
WEIGHT, MARGIN = 1.5, 0.03

#: A variant: prompts, matchers and each situation's examples to a score per (prompt, situation).
Variant = Callable[[Matrix, Matrix, Matrix], Matrix]


def to_examples(prompts: Matrix, examples: Matrix) -> Matrix:
    """The cosine of each prompt to each situation's examples: prompts x situations x examples."""
    return np.einsum("pd,sed->pse", prompts, examples)


def best_of(count: int) -> Variant:
    """The best of the matcher's cosine and its first ``count`` examples'."""

    def score(prompts: Matrix, matchers: Matrix, examples: Matrix) -> Matrix:
        nearest = to_examples(prompts, examples[:, :count]).max(axis=2)
        return np.maximum(prompts @ matchers.T, nearest)

    return score


def centroid(matcher_share: float) -> Variant:
    """The cosine to the normalised mean of the examples and the matcher, at ``matcher_share``."""

    def score(prompts: Matrix, matchers: Matrix, examples: Matrix) -> Matrix:
        middle = matcher_share * matchers + (1 - matcher_share) * examples.mean(axis=1)
        return prompts @ (middle / np.linalg.norm(middle, axis=1, keepdims=True)).T

    return score


def two_best(prompts: Matrix, matchers: Matrix, examples: Matrix) -> Matrix:
    """The mean of the two best cosines among the matcher and its examples."""
    both = np.concatenate([(prompts @ matchers.T)[:, :, None], to_examples(prompts, examples)], 2)
    return np.sort(both, axis=2)[:, :, -2:].mean(axis=2)


VARIANTS: dict[str, Variant] = {
    "plain cosine to the matcher": lambda p, m, e: p @ m.T,
    **{f"best of matcher and {n} example{'s' * (n > 1)}": best_of(n) for n in (1, 2, 3)},
    "best of the 3 examples alone": lambda p, m, e: to_examples(p, e).max(axis=2),
    "centroid, matcher a quarter (as each example)": centroid(0.25),
    "centroid, matcher a half": centroid(0.5),
    "mean of the 2 best of matcher and 3 examples": two_best,
}
#: Variants that also get the shipped intent shift, and their label with it.
SHIFTED = {
    "plain cosine to the matcher": "plain cosine + intent shift",
    "centroid, matcher a half": "centroid, matcher a half, + intent shift",
}


def pooled(
    variant: Variant, matchers: Matrix, tasks: Matrix, unrelated: Matrix
) -> tuple[Matrix, Matrix]:
    """The variant's scores over the folds: each fold's task prompts, then its unrelated rows.

    ``tasks`` is situations x FOLDS x dim. Also returns the prompts in the same row order.
    """
    scores, prompts = [], []
    for fold in range(FOLDS):
        examples = tasks[:, [k for k in range(FOLDS) if k != fold]]
        rows = np.concatenate([tasks[:, fold], unrelated])
        scores.append(variant(rows, matchers, examples))
        prompts.append(rows)
    return np.concatenate(scores).astype(np.float32), np.concatenate(prompts)


def pooled_set(situations: int, unrelated_kinds: list[str], matchers: Matrix) -> FiringSet:
    """The row labels of :func:`pooled`: fold by fold, each situation's prompt, then the rest.

    Unrelated work (``unrelated_task``) is told apart from questions, runs and
    chatter (``unrelated``), as in the firing set.
    """
    per_fold_expect = np.concatenate([np.arange(situations), np.full(len(unrelated_kinds), -1)])
    per_fold_kinds = np.asarray(["task"] * situations + unrelated_kinds)
    return FiringSet(
        situations=[],
        prompts=[],
        matchers=matchers,
        predictions=matchers,
        queries=matchers,
        expect=np.tile(per_fold_expect, FOLDS),
        kinds=np.tile(per_fold_kinds, FOLDS),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Embed the training set, print each variant at its best threshold."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    situations = [
        *read_jsonl(TRAINING / "situations_a.jsonl"),
        *read_jsonl(TRAINING / "situations_b.jsonl"),
    ]
    others = read_jsonl(TRAINING / "unrelated.jsonl")
    with contextlib.ExitStack() as stack:
        home = stack.enter_context(tempfile.TemporaryDirectory(prefix="thatch-firing-examples-"))
        embedder = CachedEmbedder(stack.enter_context(thatch.open(home=home)).embedder)
        matchers = embedder.embed_passages([str(s["matcher"]) for s in situations])
        tasks = np.stack(
            [np.stack([embedder.embed_query(str(t)) for t in s["tasks"]]) for s in situations]  # type: ignore[attr-defined]
        )
        unrelated = np.stack([embedder.embed_query(str(o["text"])) for o in others])
        _, axis = shipped_axis(embedder)
    kinds = ["unrelated_task" if o["kind"] == "other_task" else "unrelated" for o in others]
    data = pooled_set(len(situations), kinds, matchers)
    print(
        f"model {embedder.model_id}; {len(situations)} situations, {FOLDS} folds of "
        f"{len(situations)} task prompts and {len(unrelated)} unrelated prompts\n"
    )
    print(f"{HEADER} {'among 5 best':>12}")
    for name, variant in VARIANTS.items():
        score, prompts = pooled(variant, matchers, tasks, unrelated)
        among_five = ranking(data, score)[1]
        print(f"{row(name, calibrate(data, score, Rule(name, score)))} {among_five:>12.3f}")
        if name in SHIFTED:
            shifted = score + WEIGHT * (prompts @ axis)[:, None]
            point = calibrate(data, score, Rule(SHIFTED[name], shifted, MARGIN))
            print(f"{row(SHIFTED[name], point)} {among_five:>12.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
