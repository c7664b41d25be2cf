"""The firing set (bench/data/firing) and its generator, bench/firing_set.py.

The firing figures on it are printed by bench/prediction_firing.py. These
checks need no model: the generator is deterministic, the committed files are
what it writes, and the set has the sizes and kinds its README declares.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from types import ModuleType

import pytest
from bench_scripts import bench_script

#: The sizes bench/data/firing/README.md declares.
SITUATIONS = 305
KINDS = {"task": 305, "oblique": 313, "unrelated": 323, "unrelated_task": 105}

Rows = list[dict[str, object]]


@pytest.fixture(scope="module")
def generator() -> Iterator[ModuleType]:
    """bench/firing_set.py, imported as the bench scripts import it."""
    with bench_script("firing_set") as module:
        yield module


@pytest.fixture(scope="module")
def built(generator: ModuleType) -> tuple[Rows, Rows]:
    situations, prompts = generator.build()
    return situations, prompts


def test_the_generator_is_deterministic(generator: ModuleType, built: tuple[Rows, Rows]) -> None:
    assert generator.build() == built


def test_the_committed_files_are_what_the_generator_writes(generator: ModuleType) -> None:
    for name, text in generator.files().items():
        committed = (generator.FOLDER / name).read_text(encoding="utf-8")
        assert committed == text, f"{name} is stale; run uv run python bench/firing_set.py"


def test_the_set_has_its_declared_sizes(built: tuple[Rows, Rows]) -> None:
    situations, prompts = built
    assert len(situations) == SITUATIONS >= 300
    assert Counter(p["kind"] for p in prompts) == KINDS
    assert KINDS["unrelated"] + KINDS["unrelated_task"] >= 300


def test_every_situation_has_a_task_prompt_and_ids_resolve(built: tuple[Rows, Rows]) -> None:
    situations, prompts = built
    ids = [s["id"] for s in situations]
    assert len(set(ids)) == len(ids)
    tasks = Counter(str(p["expect"][0]) for p in prompts if p["kind"] == "task")  # type: ignore[index]
    assert tasks == Counter({str(ident): 1 for ident in ids})
    for prompt in prompts:
        related = prompt["kind"] in ("task", "oblique")
        assert bool(prompt["expect"]) == related
        assert "{" not in str(prompt["text"]).replace("{3}", ""), prompt["text"]


def test_no_prompt_repeats_or_restates_its_matcher(built: tuple[Rows, Rows]) -> None:
    situations, prompts = built
    texts = [str(p["text"]).lower() for p in prompts]
    assert len(set(texts)) == len(texts)
    matchers = {str(s["id"]): str(s["matcher"]).lower() for s in situations}
    for prompt in prompts:
        for ident in prompt["expect"]:  # type: ignore[attr-defined]
            assert matchers[ident] not in str(prompt["text"]).lower()


def test_the_rows_are_json_lines(generator: ModuleType) -> None:
    for text in generator.files().values():
        assert all(json.loads(line) for line in text.splitlines())
