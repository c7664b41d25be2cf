"""bench/firing_map_training.py and bench/firing_map.py: learning and storing the firing maps.

The figures of the shipped maps come from the real model (docs/benchmarks.md,
"A learnt prompt map"); these checks need none. On a small made-up space
where the plain cosine is wrong in a way a linear map can undo, the training
must undo it, on prompts it did not see; and the script must write both maps
in the file format thatch.decisions.prompt_map reads (tests/unit/
test_prompt_map.py loads the shipped file itself).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from bench_scripts import bench_script
from thatch.decisions import prompt_map

DIM = 16
SITUATIONS = 12


@pytest.fixture(scope="module")
def training() -> Iterator[ModuleType]:
    with bench_script("firing_map_training") as module:
        yield module


@pytest.fixture(scope="module")
def script() -> Iterator[ModuleType]:
    with bench_script("firing_map") as module:
        yield module


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def made_up(training: ModuleType, seed: int, prompts_per_situation: int) -> object:
    """Situations on the first 12 axes. A task prompt is a little of its situation's axis,
    more of the *next* situation's, a task marker (axis 12) and an axis every prompt shares
    (15); an unrelated prompt is one situation's axis, a question marker (13) and the shared
    axis. Plain cosine ranks the wrong situation first and fires unrelated prompts. A
    linear map, then unit length, undoes both: it unmixes the situations, drops the shared
    axis and turns the question marker into a long arm of its own (14)."""
    rng = np.random.default_rng(seed)
    axes = np.eye(DIM)
    matchers = axes[:SITUATIONS]
    situation = np.repeat(np.arange(SITUATIONS), prompts_per_situation)
    pull = np.roll(matchers, -1, axis=0)[situation]
    noise = rng.normal(0.0, 0.03, (len(situation), DIM))
    tasks = unit_rows(0.5 * matchers[situation] + 0.7 * pull + axes[12] + 1.5 * axes[15] + noise)
    near = matchers[rng.integers(0, SITUATIONS, 40)]
    unrelated = unit_rows(near + axes[13] + 1.5 * axes[15] + rng.normal(0.0, 0.03, (40, DIM)))
    return training.TrainingSet(matchers, tasks, situation, unrelated)


def first_and_false(training: ModuleType, data: object, maps: object, bar: float) -> tuple:
    score = training.scores(np.concatenate([data.tasks, data.unrelated]), data.matchers, maps)
    tasks, others = score[: len(data.tasks)], score[len(data.tasks) :]
    first = np.mean(tasks.argmax(axis=1) == data.situation)
    false_fire = np.mean(others.max(axis=1) >= bar)
    return float(first), float(false_fire)


def test_training_undoes_a_linear_distortion_on_prompts_it_did_not_see(
    training: ModuleType,
) -> None:
    train_set, test_set = made_up(training, 1, 6), made_up(training, 2, 3)
    settings = training.Settings(epochs=30, rate=3e-2, batch=12, unrelated_per_batch=8)
    maps = training.train(train_set, settings)
    plain = first_and_false(training, test_set, None, settings.bar)
    learnt = first_and_false(training, test_set, maps, settings.bar)
    assert plain[0] < 0.2
    assert plain[1] > 0.5
    assert learnt[0] > 0.9
    assert learnt[1] < 0.2


def test_training_is_seeded(training: ModuleType) -> None:
    data = made_up(training, 1, 4)
    settings = training.Settings(epochs=2, rate=1e-2, batch=12, unrelated_per_batch=8)
    first, again = training.train(data, settings), training.train(data, settings)
    assert np.array_equal(first.query, again.query)
    other = training.train(data, training.Settings(**{**settings.__dict__, "seed": 8}))
    assert not np.array_equal(first.query, other.query)


def test_every_epoch_is_reported_and_the_variants_learn(training: ModuleType) -> None:
    data = made_up(training, 1, 4)
    seen: list[int] = []
    for variant in (
        {"rank": 4},
        {"passage": True},
        {"unit_query": False},
    ):
        settings = training.Settings(epochs=3, rate=1e-2, batch=12, unrelated_per_batch=8)
        settings = training.Settings(**{**settings.__dict__, **variant})
        maps = training.train(data, settings, after_epoch=lambda epoch, _: seen.append(epoch))
        assert np.abs(maps.query).max() > 0
        assert (maps.passage is not None) == bool(variant.get("passage"))
    assert seen == [1, 2, 3] * 3


def test_the_script_writes_both_maps_and_keeps_other_models(
    script: ModuleType, training: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "prompt_maps"
    folder.mkdir()
    (folder / prompt_map.INDEX_FILE).write_text('{"other/model": {"file": "x.npy"}}\n')
    monkeypatch.setattr(script, "MAPS_FOLDER", folder)
    rng = np.random.default_rng(0)
    query, passage = rng.normal(0, 0.1, (8, 8)), rng.normal(0, 0.1, (8, 8))
    written = script.write("org/model@abc", training.Maps(query, passage))
    assert written.parent == folder
    assert written.name == "org-model-abc.npz"
    index = json.loads((folder / prompt_map.INDEX_FILE).read_text())
    # Other models' entries are kept.
    assert set(index) == {"other/model", "org/model@abc"}
    assert index["org/model@abc"]["file"] == written.name
    with np.load(written) as loaded:
        assert loaded["query"].dtype == np.float16
        assert np.allclose(loaded["query"], query, atol=1e-3)
        assert np.allclose(loaded["passage"], passage, atol=1e-3)


def test_the_benches_score_a_set_as_the_engine_scores_a_pair() -> None:
    """firing_rules.mapped_cosines (the whole set at once) against FiringMaps, pair by pair."""
    with bench_script("firing_rules") as rules, bench_script("firing_measures") as measures:
        rng = np.random.default_rng(3)
        maps = prompt_map.FiringMaps(
            rng.normal(0, 0.1, (DIM, DIM)).astype(np.float32),
            rng.normal(0, 0.1, (DIM, DIM)).astype(np.float32),
        )
        matchers = unit_rows(rng.normal(size=(5, DIM))).astype(np.float32)
        queries = unit_rows(rng.normal(size=(7, DIM))).astype(np.float32)
        data = measures.FiringSet(
            [], [], matchers, matchers, queries, np.zeros(7, np.int64), np.asarray(["task"] * 7)
        )
        whole = rules.mapped_cosines(data, maps)
        for row, query in enumerate(queries):
            prompt = maps.prompt(query)
            for column, matcher in enumerate(matchers):
                expected = float(prompt @ maps.matcher(matcher))
                assert whole[row, column] == pytest.approx(expected, abs=1e-5)
