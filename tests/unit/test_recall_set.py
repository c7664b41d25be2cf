"""The conversational recall set (bench/data/conversations) and its generator.

The set is written by bench/conversation_set.py; the recall figures on it are
printed by ``bench/recall_quality.py --data bench/data/conversations``. These
checks need no model: the generator is deterministic, the committed files are
what it writes, and the set has the sizes and query types it declares.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from types import ModuleType

import pytest
from bench_scripts import bench_script

#: The sizes bench/data/conversations/README.md declares.
MEMORIES = 2515
QUERY_TYPES = {"paraphrase": 240, "temporal": 144, "identifier": 160, "error": 178}
STORES = 4

Rows = list[dict[str, object]]


@pytest.fixture(scope="module")
def generator() -> Iterator[ModuleType]:
    """bench/conversation_set.py, imported as the bench scripts import it."""
    with bench_script("conversation_set") as module:
        yield module


@pytest.fixture(scope="module")
def built(generator: ModuleType) -> tuple[Rows, Rows]:
    memories, queries = generator.build()
    return memories, queries


def test_the_generator_is_deterministic(generator: ModuleType, built: tuple[Rows, Rows]) -> None:
    assert generator.build() == built


def test_the_committed_files_are_what_the_generator_writes(generator: ModuleType) -> None:
    for name, text in generator.files().items():
        committed = (generator.FOLDER / name).read_text(encoding="utf-8")
        assert committed == text, f"{name} is stale; run uv run python bench/conversation_set.py"


def test_the_set_has_its_declared_sizes(generator: ModuleType, built: tuple[Rows, Rows]) -> None:
    memories, queries = built
    assert len(memories) == MEMORIES >= 2000
    assert len(queries) == sum(QUERY_TYPES.values()) >= 500
    assert Counter(q["kind"] for q in queries) == QUERY_TYPES
    assert tuple(QUERY_TYPES) == generator.TYPES
    assert len({m["store"] for m in memories}) == STORES


def test_every_query_names_evidence_in_its_store(built: tuple[Rows, Rows]) -> None:
    memories, queries = built
    labels = Counter((m["store"], m["label"]) for m in memories)
    assert max(labels.values()) == 1, "a label is reused within a store"
    for query in queries:
        relevant = query["relevant"]
        assert isinstance(relevant, list), query
        assert relevant, query
        assert all((query["store"], label) in labels for label in relevant), query


def test_evidence_is_unique_text(built: tuple[Rows, Rows]) -> None:
    """No answer has a word-for-word twin that the query would also be right to get."""
    memories, queries = built
    content = {(m["store"], m["label"]): m["content"] for m in memories}
    texts = Counter((m["store"], str(m["content"]).split("] ", 1)[1]) for m in memories)
    for query in queries:
        for label in query["relevant"]:  # type: ignore[attr-defined]
            said = str(content[(query["store"], label)]).split("] ", 1)[1]
            assert texts[(query["store"], said)] == 1, said


def test_memories_are_json_lines_thatch_import_reads(generator: ModuleType) -> None:
    for line in generator.files()["memories.jsonl"].splitlines():
        assert set(json.loads(line)) == {"label", "content", "store"}
