"""bench/firing_trained.py: firing with a model trained for it.

The script's figures need torch, transformers and real weights
(docs/benchmarks.md, "A model trained for firing"); these checks need none.
They cover the clear error without the libraries, the training examples, and
the rules built on a gate's or a pair model's output.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from types import ModuleType

import numpy as np
import pytest
from bench_scripts import bench_script


@pytest.fixture(scope="module")
def script() -> Iterator[ModuleType]:
    """bench/firing_trained.py, imported as the bench scripts import each other."""
    with bench_script("firing_trained") as module:
        yield module


def tiny_set() -> object:
    """Two situations, a task prompt on each, two unrelated prompts sitting on a matcher."""
    from firing_measures import FiringSet

    eye = np.eye(4, dtype=np.float32)
    return FiringSet(
        situations=[{"id": "a", "matcher": "ma"}, {"id": "b", "matcher": "mb"}],
        prompts=[{"text": t} for t in ("task a", "task b", "ask a", "ask b")],
        matchers=np.stack([eye[0], eye[1]]),
        predictions=np.stack([eye[2], eye[3]]),
        # The unrelated prompts have their matcher's words: cosine 1, as the tasks.
        queries=np.stack([eye[0], eye[1], eye[0], eye[1]]),
        expect=np.asarray([0, 1, -1, -1]),
        kinds=np.asarray(["task", "task", "unrelated", "unrelated"]),
    )


def test_without_torch_it_names_the_missing_library(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules makes the import fail as an absent package does.
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(SystemExit) as raised:
        script.libraries()
    assert "torch is missing" in str(raised.value)
    assert "beside thatch-core" in str(raised.value)


def test_gate_examples_label_every_training_prompt(script: ModuleType) -> None:
    examples = script.gate_examples()
    labels = [label for _, label in examples]
    assert (labels.count(1.0), labels.count(0.0)) == (1600, 900)
    assert all(len(texts) == 1 for texts, _ in examples)


def test_a_gate_that_knows_the_work_fires_only_on_it(script: ModuleType) -> None:
    from firing_measures import calibrate

    data = tiny_set()
    cosines = data.queries @ data.matchers.T  # type: ignore[attr-defined]
    knows = script.gate_rules(cosines, np.asarray([1.0, 1.0, 0.0, 0.0], dtype=np.float32))
    blind = script.gate_rules(cosines, np.asarray([0.5] * 4, dtype=np.float32))
    assert calibrate(data, cosines, knows[0]).fire5 == 1.0
    # A gate that cannot tell them apart leaves cosine, which cannot either.
    assert calibrate(data, cosines, blind[0]).fire5 == 0.0


class FakeClassifier:
    """Says 0.9 for a prompt on its own situation's matcher, 0.1 for any other pair."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def probabilities(self, texts: Sequence[tuple[str, ...]]) -> np.ndarray:
        self.seen.extend(texts)
        own = {("task a", "ma"), ("task b", "mb")}
        return np.asarray([0.9 if pair in own else 0.1 for pair in texts], dtype=np.float32)


def test_the_pair_model_scores_each_prompts_best_matchers(script: ModuleType) -> None:
    data = tiny_set()
    cosines = data.queries @ data.matchers.T  # type: ignore[attr-defined]
    classifier = FakeClassifier()
    scores, ranked = script.pair_scores(classifier, data, cosines)
    # Two matchers, both within the depth: every pair is scored once.
    assert len(classifier.seen) == 8
    assert scores[0, 0] == pytest.approx(0.9)
    assert scores[2, 0] == pytest.approx(0.1)
    assert np.array_equal(ranked, cosines)
