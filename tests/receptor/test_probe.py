"""The predictive probe: both methods classify merged, resonant and loner alike.

The texts are chosen for :class:`thatch.testing.WordHashEmbedder`, whose cosine
counts shared words: the near-duplicate restates the failure with every word
but one (cosine 0.95 to the problem), the related memory shares the failing
command and error but adds the fix (0.67), the unrelated one shares no word (0).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from thatch.testing import WordHashEmbedder
from thatch_receptor.probe import (
    DEFAULT_PROBE,
    MERGE_COSINE,
    Embed,
    Probe,
    ProbeNode,
    embed_world,
    make_probe,
)
from thatch_receptor.probe_baseline import BaselineProbe
from thatch_receptor.probe_consensus import ConsensusProbe

PROBE_SET = Path(__file__).resolve().parents[1] / "data" / "receptor"
PROBLEM = ["bash: pytest tests/test_auth.py -> exit 1: AssertionError: token expired"]
DUPLICATE = ProbeNode("dup", "pytest tests/test_auth.py exit 1 AssertionError token expired")
RELATED = ProbeNode("related", "pytest exit 1 AssertionError token expired: freeze the clock")
UNRELATED = ProbeNode("unrelated", "the team stand-up is at nine thirty in the main channel")
SHOWN = ProbeNode(
    "shown", "access tokens live fifteen minutes refresh tokens thirty days", shown=True
)
SHOWN_AGAIN = ProbeNode(
    "shown-again", "access tokens live fifteen minutes, refresh tokens thirty days!"
)
METHODS = ["baseline", "consensus"]


@pytest.fixture
def embed() -> Embed:
    return WordHashEmbedder(dim=4096).embed_passages


def cosine(embed: Embed, a: str, b: str) -> float:
    first, second = embed([a, b])
    return float(first @ second)


def test_the_texts_sit_where_the_tests_need_them(embed: Embed) -> None:
    assert cosine(embed, PROBLEM[0], DUPLICATE.text) >= MERGE_COSINE
    assert 0.5 < cosine(embed, PROBLEM[0], RELATED.text) < MERGE_COSINE
    assert cosine(embed, PROBLEM[0], UNRELATED.text) == pytest.approx(0.0, abs=1e-6)
    assert cosine(embed, SHOWN.text, SHOWN_AGAIN.text) >= MERGE_COSINE


@pytest.mark.parametrize("method", METHODS)
def test_near_duplicate_related_and_unrelated_are_merged_resonant_and_loner(
    method: str, embed: Embed
) -> None:
    result = make_probe(method, embed).run(PROBLEM, [UNRELATED, RELATED, DUPLICATE])

    assert result.method == method
    assert [n.id for n in result.merged] == ["dup"]
    assert [n.id for n in result.resonant] == ["related"]
    assert [n.id for n in result.loner] == ["unrelated"]
    assert result.verdict("dup") == "merged"
    assert result.verdict("missing") is None


@pytest.mark.parametrize("method", METHODS)
def test_what_was_shown_and_its_near_duplicates_are_merged(method: str, embed: Embed) -> None:
    world = [SHOWN, SHOWN_AGAIN, RELATED, UNRELATED]

    result = make_probe(method, embed).run(PROBLEM, world)

    assert {n.id for n in result.merged} == {"shown", "shown-again"}
    assert [n.id for n in result.resonant] == ["related"]


@pytest.mark.parametrize("method", METHODS)
def test_the_probe_records_its_time_and_a_score_per_node(method: str, embed: Embed) -> None:
    result = make_probe(method, embed).run(PROBLEM, [RELATED, UNRELATED])

    assert result.seconds > 0.0
    assert set(result.scores) == {"related", "unrelated"}
    assert result.scores["related"] > result.scores["unrelated"]


@pytest.mark.parametrize("method", METHODS)
def test_resonant_nodes_beyond_the_limit_are_loners(method: str, embed: Embed) -> None:
    variants = [
        ProbeNode(f"r{n}", f"pytest exit 1 AssertionError token expired: fix number{n} word{n}")
        for n in range(4)
    ]
    # The variants are one topic; a high cluster cosine keeps the baseline from
    # offering only its leader and medoid.
    probe: Probe = (
        BaselineProbe(embed, limit=2, cluster_cosine=0.99)
        if method == "baseline"
        else ConsensusProbe(embed, limit=2)
    )

    result = probe.run(PROBLEM, variants)

    assert len(result.resonant) == 2
    assert len(result.loner) == 2


def test_the_baseline_offers_a_clusters_best_member_and_its_medoid(embed: Embed) -> None:
    # One cluster at 0.5 holds best, centre and edge; centre has the highest
    # summed cosine (its medoid). Another holds aside alone (0.41 to best).
    nodes = [
        ProbeNode("best", "pytest exit 1 AssertionError token expired: freeze the clock"),
        ProbeNode("centre", "AssertionError token expired: freeze the clock in the auth fixture"),
        ProbeNode("edge", "token expired: freeze the clock with freeze_time"),
        ProbeNode("aside", "AssertionError token expired: auth fixture conftest"),
    ]

    result = BaselineProbe(embed, resonant_cosine=0.2).run(PROBLEM, nodes)

    assert [n.id for n in result.resonant] == ["best", "aside", "centre"]
    assert [n.id for n in result.loner] == ["edge"]
    assert result.scores["edge"] >= 0.2


def test_the_simulation_gives_the_same_result_for_the_same_seed(embed: Embed) -> None:
    world = [RELATED, UNRELATED, DUPLICATE, SHOWN, SHOWN_AGAIN] + [
        ProbeNode(f"n{n}", f"pytest token check{n} expired path{n}") for n in range(8)
    ]

    first = ConsensusProbe(embed, seed=7).run(PROBLEM, world)
    again = ConsensusProbe(embed, seed=7).run(PROBLEM, world)
    other = ConsensusProbe(embed, seed=8).run(PROBLEM, world)

    assert first.scores == again.scores
    assert (first.merged, first.resonant, first.loner) == (
        again.merged,
        again.resonant,
        again.loner,
    )
    assert first.scores != other.scores


def test_a_node_linked_only_weakly_stays_cold(embed: Embed) -> None:
    # "clock" is its only word in common with the related memory (cosine 0.16):
    # its neighbours are hot, but a weak link carries little next to the ground.
    faint = ProbeNode("faint", "clock gears brass pendulum weights chime")

    result = ConsensusProbe(embed).run(PROBLEM, [RELATED, faint, UNRELATED])

    assert result.verdict("faint") == "loner"
    assert result.scores["faint"] < 0.1


@pytest.mark.parametrize(("field", "value"), [("ground", 0.0), ("votes", 0), ("votes", 11)])
def test_the_simulation_refuses_parameters_it_cannot_run(
    embed: Embed, field: str, value: float
) -> None:
    with pytest.raises(ValueError, match=field):
        ConsensusProbe(embed, **{field: value})


def test_the_problem_node_is_the_mean_of_its_texts(embed: Embed) -> None:
    texts = ["bash: make -> exit 2", "grep retry in src -> 0 files"]

    world = embed_world(embed, texts, [ProbeNode("a", texts[0]), ProbeNode("b", texts[1])])

    assert float(np.linalg.norm(world.problem)) == pytest.approx(1.0)
    assert world.relevance[0] == pytest.approx(world.relevance[1])


@pytest.mark.parametrize("method", METHODS)
def test_an_empty_world_gives_empty_lists(method: str, embed: Embed) -> None:
    result = make_probe(method, embed).run(PROBLEM, [])

    assert (result.merged, result.resonant, result.loner) == ((), (), ())


@pytest.mark.parametrize("method", METHODS)
def test_of_two_passing_near_duplicates_the_second_is_merged(method: str, embed: Embed) -> None:
    twin = ProbeNode("twin", "pytest exit 1 AssertionError token expired: freeze the clock!")

    result = make_probe(method, embed).run(PROBLEM, [RELATED, twin, UNRELATED])

    assert [n.id for n in result.resonant] == ["related"]
    assert [n.id for n in result.merged] == ["twin"]


def test_a_probe_without_a_problem_is_refused(embed: Embed) -> None:
    with pytest.raises(ValueError, match="needs a problem"):
        make_probe(DEFAULT_PROBE, embed).run([], [RELATED])


def test_an_unknown_method_is_named_with_the_known_ones(embed: Embed) -> None:
    with pytest.raises(ValueError, match=r"'cosine'.*baseline, consensus"):
        make_probe("cosine", embed)


def test_the_default_probe_is_one_of_the_methods(embed: Embed) -> None:
    assert make_probe(DEFAULT_PROBE, embed).name == DEFAULT_PROBE


def test_the_labelled_set_is_complete() -> None:
    lines = (PROBE_SET / "probe_set.jsonl").read_text(encoding="utf-8").splitlines()
    problems = [json.loads(line) for line in lines]
    fields = {"id", "problem", "solution", "shown", "duplicates", "repeats", "near_misses"}

    assert len(problems) >= 40
    assert len({p["id"] for p in problems}) == len(problems)
    for problem in problems:
        assert set(problem) == fields, problem["id"]
        empty = [field for field in sorted(fields) if not problem[field]]
        assert not empty, problem["id"]
    distractors = (PROBE_SET / "probe_distractors.jsonl").read_text(encoding="utf-8")
    assert len(distractors.splitlines()) >= 20
