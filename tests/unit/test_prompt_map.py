"""The learnt firing maps (thatch.decisions.prompt_map) and the choice of firing rule."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.decisions import firing, prompt_map
from thatch.decisions.engine import DecisionModel, ScoreSettings
from thatch.decisions.service import settings_from_config
from thatch.plugin.config import Config
from thatch.plugin.errors import ConfigError
from thatch.testing import WordHashEmbedder, plugins_with

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2@8199be6f699a"


@pytest.fixture
def th(tmp_path: Path) -> Iterator[Thatch]:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=WordHashEmbedder())
    with Thatch(Config.load(tmp_path / "home", environ={}), plugins, tmp_path) as opened:
        yield opened


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def sending(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """A matrix that moves the unit vector ``source`` onto ``target``: A = (t - s) s^T."""
    return np.outer(target - source, source).astype(np.float32)


def prompt_only(matrix: np.ndarray) -> prompt_map.FiringMaps:
    return prompt_map.FiringMaps(matrix)


def test_a_zero_map_leaves_the_prompt_as_it_is() -> None:
    vector = unit(np.asarray([3.0, 4.0, 0.0]))
    moved = prompt_only(np.zeros((3, 3), dtype=np.float32)).prompt(vector)
    assert np.allclose(moved, vector)


def test_the_map_moves_the_prompt_and_keeps_it_unit_length() -> None:
    source, target = unit(np.asarray([1.0, 0.0, 0.0])), unit(np.asarray([0.0, 1.0, 1.0]))
    maps = prompt_only(sending(source, target))
    moved = maps.prompt(source)
    assert np.allclose(moved, target, atol=1e-6)
    other = unit(np.asarray([0.0, 0.0, 1.0]))
    # A vector the map does not see (orthogonal to its source) keeps its direction.
    assert np.allclose(maps.prompt(other), other)
    assert float(np.linalg.norm(moved)) == pytest.approx(1.0)


def test_a_map_that_sends_the_prompt_to_zero_keeps_the_prompt() -> None:
    vector = unit(np.asarray([1.0, 0.0]))
    collapse = -np.eye(2, dtype=np.float32)
    maps = prompt_map.FiringMaps(collapse, collapse)
    assert np.allclose(maps.prompt(vector), vector)
    assert np.allclose(maps.matcher(vector), vector)


def test_maps_must_be_square_and_of_one_size() -> None:
    with pytest.raises(ValueError, match="square"):
        prompt_only(np.zeros((3, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="square"):
        prompt_map.FiringMaps(np.zeros((3, 3), np.float32), np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="one size"):
        prompt_map.FiringMaps(np.zeros((3, 3), np.float32), np.zeros((2, 2), np.float32))


def test_the_storage_search_ranks_matchers_as_the_mapped_cosine_does() -> None:
    rng = np.random.default_rng(0)
    maps = prompt_map.FiringMaps(
        rng.normal(0, 0.1, (8, 8)).astype(np.float32), rng.normal(0, 0.1, (8, 8)).astype(np.float32)
    )
    prompt = maps.prompt(unit(rng.normal(size=8)))
    matchers = [unit(row) for row in rng.normal(size=(20, 8))]
    search = maps.search(prompt)
    assert float(np.linalg.norm(search)) == pytest.approx(1.0)
    for matcher in matchers:
        moved = matcher + maps.passage @ matcher
        assert np.allclose(maps.matcher(matcher), moved / np.linalg.norm(moved), atol=1e-6)
        cosine = float(prompt @ maps.matcher(matcher))
        # cos(search, m) = mapped cosine x |m + B m| / |(I + B)^T prompt|: one factor per
        # matcher (its mapped length), one per prompt.
        scale = float(np.linalg.norm(prompt + maps.passage.T @ prompt))
        expected = cosine * float(np.linalg.norm(moved)) / scale
        assert float(search @ matcher) == pytest.approx(expected, abs=1e-5)
    # Without a matcher map the search is the moved prompt and matchers stay as stored.
    alone = prompt_only(maps.query)
    assert np.array_equal(alone.search(prompt), prompt)
    assert np.array_equal(alone.matcher(matchers[0]), matchers[0])


class Reads:
    """Stored vectors by id, counting which ids are read."""

    def __init__(self, vectors: dict[int, np.ndarray]) -> None:
        self.vectors = vectors
        self.read: list[list[int]] = []

    def __call__(self, ids: list[int]) -> dict[int, np.ndarray]:
        self.read.append(sorted(ids))
        return {key: self.vectors[key] for key in ids if key in self.vectors}


def test_moved_matchers_are_kept_and_read_again_when_their_vector_changes() -> None:
    rng = np.random.default_rng(1)
    maps = prompt_map.FiringMaps(
        np.zeros((8, 8), np.float32), rng.normal(0, 0.2, (8, 8)).astype(np.float32)
    )
    stored = Reads({key: unit(rng.normal(size=8)) for key in (1, 2, 3)})
    moved = prompt_map.MovedMatchers(maps)
    prompt = unit(rng.normal(size=8))
    search = maps.search(prompt)

    def found(*keys: int) -> dict[int, float]:
        return {key: float(search @ stored.vectors[key]) for key in keys}

    first = moved.cosines(prompt, search, found(1, 2), stored)
    assert first == pytest.approx(
        {k: float(prompt @ maps.matcher(stored.vectors[k])) for k in (1, 2)}
    )
    # Met again: only the new matcher is read back.
    assert moved.cosines(prompt, search, found(1, 2, 3), stored).keys() == {1, 2, 3}
    assert stored.read == [[1, 2], [3]]
    # Matcher 2 deleted and its id given to another vector: the storage's cosine no longer
    # fits the kept vector, so it is read again and scored by its new vector.
    stored.vectors[2] = unit(rng.normal(size=8))
    again = moved.cosines(prompt, search, found(2), stored)
    assert stored.read[-1] == [2]
    assert again[2] == pytest.approx(float(prompt @ maps.matcher(stored.vectors[2])))
    # A matcher the storage no longer has is left out.
    assert moved.cosines(prompt, search, {9: 0.5}, stored) == {}


def test_a_model_without_a_map_has_none_and_fires_on_plain_cosine() -> None:
    assert prompt_map.for_model("test/word-hash") is None
    assert firing.for_settings("test/word-hash", intent=False, learnt_map=True) is firing.PLAIN


def test_the_default_model_ships_finite_maps_of_its_dimension() -> None:
    shipped = prompt_map.for_model(DEFAULT_MODEL)
    assert shipped is not None
    assert shipped.passage is not None
    for matrix in (shipped.query, shipped.passage):
        assert matrix.shape == (384, 384)
        assert matrix.dtype == np.float32
        assert np.isfinite(matrix).all()
        # Maps that learnt something: not the zero matrices they start from.
        assert float(np.abs(matrix).max()) > 0.01


def test_every_index_entry_names_a_file_that_loads() -> None:
    assert prompt_map.index()
    for model_id in prompt_map.index():
        assert prompt_map.for_model(model_id) is not None


def test_the_settings_choose_the_rule() -> None:
    assert firing.for_settings(DEFAULT_MODEL, intent=False, learnt_map=True).maps is not None
    assert firing.for_settings(DEFAULT_MODEL, intent=False, learnt_map=False) is firing.PLAIN
    # The intent shift is calibrated on the model's own vectors: it never goes through the map.
    with_intent = firing.for_settings(DEFAULT_MODEL, intent=True, learnt_map=True)
    assert with_intent is firing.for_model(DEFAULT_MODEL)
    assert with_intent.maps is None


def test_prompt_map_is_read_from_the_config_and_checked() -> None:
    assert settings_from_config({}).prompt_map is True
    assert settings_from_config({"predictions": {"prompt_map": False}}).prompt_map is False
    with pytest.raises(ConfigError, match="prompt_map"):
        settings_from_config({"predictions": {"prompt_map": "no"}})


def decision_model(
    th: Thatch, *, rule: firing.Firing | None = None, settings: ScoreSettings | None = None
) -> DecisionModel:
    return DecisionModel(
        th.decision_storage,
        th.embedder,
        dedup_threshold=0.9,
        fire_threshold=0.6,
        settings=settings,
        firing_rule=rule,
    )


def test_the_engine_takes_the_maps_of_its_model_unless_switched_off(tmp_path: Path) -> None:
    embedder = WordHashEmbedder(dim=384, model_id=DEFAULT_MODEL)
    plugins = plugins_with(thatch_sqlite.plugin, embedder=embedder)
    with Thatch(Config.load(tmp_path / "home", environ={}), plugins, tmp_path) as opened:
        assert decision_model(opened).firing.maps is prompt_map.for_model(DEFAULT_MODEL)
        switched_off = decision_model(opened, settings=ScoreSettings(prompt_map=False))
        assert switched_off.firing is firing.PLAIN


def test_a_query_compares_the_mapped_prompt_with_the_matchers(th: Thatch) -> None:
    plain_model = decision_model(th, rule=firing.PLAIN)
    plain_model.update("writing tests", "use pytest", "create", store="global")
    plain_model.update("naming branches", "prefix with the ticket", "create", store="global")
    prompt = "writing tests"
    plain = plain_model.query(prompt, ["global"])
    assert [hit.prediction.statement for hit in plain] == ["use pytest"]
    # A prompt map that sends this prompt onto the other matcher's vector fires that one.
    source = th.embedder.embed_query(prompt)
    branches = th.embedder.embed_passages(["naming branches"])[0]
    moved = firing.Firing(maps=prompt_only(sending(source, branches)))
    hits = decision_model(th, rule=moved).query(prompt, ["global"])
    assert [hit.prediction.statement for hit in hits] == ["prefix with the ticket"]
    assert hits[0].cosine == pytest.approx(1.0, abs=1e-4)


def test_a_matcher_map_scores_the_stored_vectors_anew(th: Thatch) -> None:
    plain_model = decision_model(th, rule=firing.PLAIN)
    plain_model.update("writing tests", "use pytest", "create", store="global")
    plain_model.update("naming branches", "prefix with the ticket", "create", store="global")
    # A prompt as near one matcher as the other (cosine 0.71 to each).
    prompt = "writing tests naming branches"
    tests = th.embedder.embed_passages(["writing tests"])[0]
    # A matcher map that only lengthens the tests matcher: its mapped direction, and so
    # every mapped cosine, is unchanged, but the storage's search leans towards it.
    stretch = 3.0 * np.outer(tests, tests).astype(np.float32)
    maps = prompt_map.FiringMaps(np.zeros_like(stretch), stretch)
    search = maps.search(th.embedder.embed_query(prompt))
    assert float(search @ tests) > 0.9
    hits = decision_model(th, rule=firing.Firing(maps=maps)).query(prompt, ["global"])
    # Scored anew from the stored vectors, both matchers fire at their mapped cosine.
    assert sorted(hit.prediction.statement for hit in hits) == [
        "prefix with the ticket",
        "use pytest",
    ]
    assert [hit.cosine for hit in hits] == pytest.approx([0.7071, 0.7071], abs=1e-3)
