"""The words search from the best matches alone returns what the joined query returns."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from thatch.plugin.records import NewMemory, Scope
from thatch_sqlite import fts
from thatch_sqlite import storage as storage_module
from thatch_sqlite.storage import SQLiteStorage

WORDS = ("deploy", "billing", "tests", "tabs", "cache", "queue", "retry", "token")


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SQLiteStorage]:
    rng = random.Random(3)
    vector = np.ones(4, dtype=np.float32) / 2
    opened = SQLiteStorage(tmp_path / "thatch.db")
    opened.write_memories(
        [
            NewMemory(
                # The big store holds nine in ten memories; "small" a few, one branch-bound.
                "big" if i % 10 else "small",
                f"m{i}",
                " ".join(rng.choices(WORDS, k=rng.randrange(2, 9))),
                "feature" if i % 30 == 0 else None,
                "m",
                vector,
            )
            for i in range(600)
        ]
    )
    with opened:
        yield opened


def joined(storage: SQLiteStorage, query: str, scope: Scope, limit: int) -> list[tuple[int, float]]:
    """The search as one joined query, as it ran before the best-first path."""
    expression = fts.match_expression(fts.affordable(storage._cache.doc_counts(fts.words(query))))
    rows = storage._conn.execute(
        storage_module._TEXT_SEARCH,
        (expression, False, json.dumps(scope.stores), scope.branch, limit),
    ).fetchall()
    return [(memory_id, -score) for memory_id, score in rows]


@pytest.mark.parametrize("stores", [("big", "small"), ("big",), ("small",), ("none",)])
@pytest.mark.parametrize("limit", [1, 5, 20, 200])
def test_best_first_matches_the_joined_query(
    storage: SQLiteStorage, stores: tuple[str, ...], limit: int
) -> None:
    scope = Scope(stores=stores, branch=None)
    for query in ("deploy billing", "tabs", "retry the token cache", "nothing matches"):
        found = [(hit.id, hit.score) for hit in storage.text_search(query, scope, limit)]
        assert found == joined(storage, query, scope, limit)


def test_a_scope_of_few_matches_goes_to_the_joined_query(storage: SQLiteStorage) -> None:
    few = Scope(stores=("small",), branch="feature")
    storage.text_search("deploy billing tests", few, 20)
    assert (("small",), "feature", False) in storage._scattered_scopes
    most = Scope(stores=("big", "small"), branch=None)
    storage.text_search("deploy billing tests", most, 20)
    assert (("big", "small"), None, False) not in storage._scattered_scopes
