"""The firing rule of the decision model (thatch.decisions.firing) and its use in queries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.decisions import firing
from thatch.decisions.engine import DecisionModel, ScoreSettings
from thatch.plugin.config import Config
from thatch.testing import WordHashEmbedder, plugins_with


@pytest.fixture
def th(tmp_path: Path) -> Iterator[Thatch]:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=WordHashEmbedder())
    with Thatch(Config.load(tmp_path / "home", environ={}), plugins, tmp_path) as opened:
        yield opened


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_plain_keeps_the_threshold_and_every_matcher() -> None:
    assert firing.PLAIN.threshold(0.4, unit(1, 0)) == 0.4
    assert firing.PLAIN.keep({1: 0.9, 2: 0.41}) == {1: 0.9, 2: 0.41}


def test_intent_moves_the_threshold_by_the_prompts_component_on_the_axis() -> None:
    rule = firing.Firing(axis=unit(1, 0), intent_weight=1.5)
    # A prompt along the axis (work) lowers the bar; one against it raises it.
    assert rule.threshold(0.5, unit(0.2, 1)) == pytest.approx(0.5 - 1.5 * 0.2 / np.sqrt(1.04))
    assert rule.threshold(0.5, unit(-1, 1)) > 0.5
    assert rule.threshold(0.5, unit(0, 1)) == pytest.approx(0.5)


def test_the_margin_keeps_matchers_close_to_the_best() -> None:
    rule = firing.Firing(margin=0.05)
    assert rule.keep({1: 0.60, 2: 0.56, 3: 0.54}) == {1: 0.60, 2: 0.56}
    assert rule.keep({}) == {}


def test_the_axis_points_from_questions_to_tasks() -> None:
    vectors = np.asarray([[1, 0.1], [0.9, 0], [0, 1], [0.1, 0.9]], dtype=np.float32)
    axis = firing.intent_axis(vectors, ["task", "task", "ask", "ask"])
    assert np.linalg.norm(axis) == pytest.approx(1.0)
    assert float(vectors[0] @ axis) > 0 > float(vectors[2] @ axis)


def test_the_background_has_both_labels_and_no_repeats() -> None:
    rows = firing.background()
    labels = {label for label, _ in rows}
    assert labels == {"task", "ask"}
    prompts = [prompt for _, prompt in rows]
    assert len(set(prompts)) == len(prompts) >= 200


def test_an_uncalibrated_model_fires_on_plain_cosine() -> None:
    assert firing.for_model("test/word-hash") is firing.PLAIN


def test_every_shipped_calibration_is_a_unit_axis() -> None:
    for entry in firing._calibrated().values():
        assert entry.axis is not None
        assert float(np.linalg.norm(entry.axis)) == pytest.approx(1.0, abs=1e-4)
        assert entry.intent_weight > 0


def test_prompt_intent_off_gives_plain_cosine(th: Thatch) -> None:
    model = DecisionModel(
        th.decision_storage,
        th.embedder,
        dedup_threshold=0.9,
        fire_threshold=0.4,
        settings=ScoreSettings(prompt_intent=False),
    )
    assert model.firing is firing.PLAIN


def test_a_query_fires_by_the_rule(th: Thatch) -> None:
    def model(rule: firing.Firing) -> DecisionModel:
        return DecisionModel(
            th.decision_storage,
            th.embedder,
            dedup_threshold=0.9,
            fire_threshold=0.45,
            firing_rule=rule,
        )

    model(firing.PLAIN).update("writing tests", "use pytest", "create", store="global")
    model(firing.PLAIN).update("naming tests", "name tests as sentences", "create", store="global")
    prompt = "writing tests"
    vector = th.embedder.embed_query(prompt)
    assert len(model(firing.PLAIN).query(prompt, ["global"])) == 2
    # Against the prompt's direction, the bar rises above every cosine.
    against = firing.Firing(axis=-vector, intent_weight=1.0)
    assert model(against).query(prompt, ["global"]) == []
    # The margin drops the matcher far below the best one.
    narrow = firing.Firing(axis=vector, intent_weight=0.0, margin=0.01)
    hits = model(narrow).query(prompt, ["global"])
    assert [hit.prediction.statement for hit in hits] == ["use pytest"]
