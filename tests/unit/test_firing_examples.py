"""bench/firing_examples.py: the variants that score a prompt against a preference's examples.

The script's figures come from the real model (docs/benchmarks.md, "Example
prompts beside each preference"); these checks pin what each variant computes
and how the folds are pooled, on vectors small enough to work out by hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import numpy as np
import pytest
from bench_scripts import bench_script


@pytest.fixture(scope="module")
def script() -> Iterator[ModuleType]:
    """bench/firing_examples.py, imported as the bench scripts import each other."""
    with bench_script("firing_examples") as module:
        yield module


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


# Two situations in three dimensions: matcher 0 along x, matcher 1 along y;
# situation 0's examples lean to z, situation 1's lie along y.
MATCHERS = np.stack([unit(1, 0, 0), unit(0, 1, 0)])
EXAMPLES = np.stack(
    [np.stack([unit(0, 0, 1), unit(1, 0, 1)]), np.stack([unit(0, 1, 0), unit(0, 1, 0)])]
)
PROMPT = unit(0, 0, 1)[None, :]


def test_the_best_of_matcher_and_examples_counts_only_the_first_examples(
    script: ModuleType,
) -> None:
    # The prompt is situation 0's second example: at 0.707 from its matcher and first example.
    second = EXAMPLES[0, 1][None, :]
    assert script.best_of(1)(second, MATCHERS, EXAMPLES)[0, 0] == pytest.approx(2**-0.5)
    assert script.best_of(2)(second, MATCHERS, EXAMPLES)[0, 0] == pytest.approx(1.0)
    # Situation 1's matcher and examples are all orthogonal to it.
    assert script.best_of(2)(second, MATCHERS, EXAMPLES)[0, 1] == pytest.approx(0.0)


def test_a_centroid_weighs_the_matcher_by_its_share(script: ModuleType) -> None:
    half = script.centroid(0.5)(PROMPT, MATCHERS, EXAMPLES)
    only_matcher = script.centroid(1.0)(PROMPT, MATCHERS, EXAMPLES)
    middle = 0.5 * MATCHERS[0] + 0.5 * EXAMPLES[0].mean(axis=0)
    assert half[0, 0] == pytest.approx(float(PROMPT[0] @ middle / np.linalg.norm(middle)))
    assert only_matcher[0].tolist() == pytest.approx([0.0, 0.0])


def test_the_two_best_mean_leaves_out_the_weakest(script: ModuleType) -> None:
    score = script.two_best(PROMPT, MATCHERS, EXAMPLES)
    # Situation 0: cosines 0 (matcher), 1 and 0.707 (examples): the mean of 1 and 0.707.
    assert score[0, 0] == pytest.approx((1 + 2**-0.5) / 2, abs=1e-6)


def test_each_fold_scores_its_prompt_against_the_other_folds_examples(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(script, "FOLDS", 2)
    seen: list[np.ndarray] = []

    def variant(prompts: np.ndarray, matchers: np.ndarray, examples: np.ndarray) -> np.ndarray:
        seen.append(examples)
        return prompts @ matchers.T

    unrelated = unit(1, 1, 1)[None, :]
    score, prompts = script.pooled(variant, MATCHERS, EXAMPLES, unrelated)
    # Fold 0 keeps task 1 as the example, fold 1 task 0.
    assert [examples[:, 0].tolist() for examples in seen] == [
        EXAMPLES[:, 1].tolist(),
        EXAMPLES[:, 0].tolist(),
    ]
    # Rows: fold 0's two prompts and the unrelated one, then fold 1's.
    assert (
        prompts.tolist()
        == np.concatenate([EXAMPLES[:, 0], unrelated, EXAMPLES[:, 1], unrelated]).tolist()
    )
    labels = script.pooled_set(2, ["unrelated"], MATCHERS)
    assert labels.expect.tolist() == [0, 1, -1, 0, 1, -1]
    assert labels.kinds.tolist() == ["task", "task", "unrelated"] * 2
    assert score.shape == (6, 2)
