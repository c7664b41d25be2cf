"""The postgres backend's searches: vectors in memory (masks, int8, catch-up), affordable words."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pg_cluster import Server, schema_for
from pg_handles import Open
from pg_handles import query as run_sql
from thatch.testing.contracts import new, scope, write
from thatch_postgres import vectors, wordcounts
from thatch_postgres.storage import PostgresStorage
from thatch_postgres.vectors import ModelVectors, Row, to_bytes

DIM = 16
STORES = ("app", "lib", "global")
BRANCHES = (None, "main", "feature")


def rows_of(matrix: np.ndarray, rng: np.random.Generator, first_id: int = 1) -> list[Row]:
    return [
        (
            first_id + i,
            STORES[int(rng.integers(len(STORES)))],
            BRANCHES[int(rng.integers(len(BRANCHES)))],
            first_id + i,
            to_bytes(vector),
        )
        for i, vector in enumerate(matrix)
    ]


def unit(count: int, rng: np.random.Generator) -> np.ndarray:
    matrix = rng.standard_normal((count, DIM)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def brute_force(
    rows: list[Row], query: np.ndarray, stores: tuple[str, ...], branch: str | None, limit: int
) -> list[tuple[int, float]]:
    """What a search must return: every row in scope scored, best first, ties by id."""
    scored = [
        (row[0], float(np.frombuffer(row[4], "<f4") @ query))
        for row in rows
        if row[1] in stores and (row[2] is None or row[2] == branch)
    ]
    return sorted(scored, key=lambda hit: (-hit[1], hit[0]))[:limit]


@pytest.mark.parametrize("quantize_at", [10**9, 0])
def test_a_search_is_the_best_rows_in_scope(
    quantize_at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "QUANTIZE_AT", quantize_at)
    rng = np.random.default_rng(3)
    # Near-duplicates of a few directions: the int8 scan must still find the exact best.
    centres = unit(8, rng)
    matrix = centres[rng.integers(8, size=600)] + 0.2 * unit(600, rng)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    rows = rows_of(matrix, rng)
    model = ModelVectors.build(rows)
    assert (model.codes is not None) == (quantize_at == 0)
    for query in unit(20, rng):
        for stores, branch in [(STORES, None), (("app",), "main"), (("lib", "global"), "x")]:
            found = model.search(query, stores, branch, 10)
            expected = brute_force(rows, query, stores, branch, 10)
            assert [hit[0] for hit in found] == [hit[0] for hit in expected]
            # Scores are exact cosines, also after an int8 scan.
            assert np.allclose([s for _, s in found], [s for _, s in expected], atol=1e-6)


def test_equal_scores_come_lowest_id_first_past_the_cut() -> None:
    vector = unit(1, np.random.default_rng(0))[0]
    rows: list[Row] = [(i, "app", None, 1, to_bytes(vector)) for i in (9, 4, 7, 1, 5)]
    found = ModelVectors.build(rows).search(vector, ("app",), None, 2)
    assert [hit[0] for hit in found] == [1, 4]


def test_fewer_rows_in_scope_than_asked_returns_those_only() -> None:
    rng = np.random.default_rng(1)
    rows = rows_of(unit(50, rng), rng)
    model = ModelVectors.build(rows)
    in_app = [row[0] for row in rows if row[1] == "app" and row[2] is None]
    found = model.search(unit(1, rng)[0], ("app",), None, 1000)
    assert sorted(hit[0] for hit in found) == sorted(in_app)
    assert model.search(unit(1, rng)[0], ("elsewhere",), None, 5) == []


def test_a_vector_of_another_length_is_left_out() -> None:
    rng = np.random.default_rng(2)
    rows = rows_of(unit(5, rng), rng)
    rows.insert(2, (99, "app", None, 1, b"\x00" * 6))
    model = ModelVectors.build(rows)
    assert 99 not in model.ids.tolist()
    assert model.matrix.shape == (5, DIM)


@pytest.mark.parametrize("quantize_at", [10**9, 0])
def test_a_merged_copy_searches_as_one_built_whole(
    quantize_at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "QUANTIZE_AT", quantize_at)
    rng = np.random.default_rng(4)
    old = rows_of(unit(300, rng), rng)
    new = rows_of(unit(40, rng), rng, first_id=1000)
    keep = np.array([i for i in range(len(old)) if i % 3], np.int64)
    merged = ModelVectors.build(old).merged(keep, ModelVectors.build(new))
    whole = [old[i] for i in keep] + new
    assert merged.token == ModelVectors.build(whole).token
    for query in unit(10, rng):
        found = merged.search(query, ("app", "global"), "main", 8)
        expected = brute_force(whole, query, ("app", "global"), "main", 8)
        assert [hit[0] for hit in found] == [hit[0] for hit in expected]
    ids, matrix = merged.store_matrix("lib")
    lib = sorted(row for row in whole if row[1] == "lib")
    assert ids == [row[0] for row in lib]
    assert np.array_equal(matrix, np.stack([np.frombuffer(row[4], "<f4") for row in lib]))


def test_merging_nothing_new_keeps_the_chosen_rows() -> None:
    rng = np.random.default_rng(5)
    model = ModelVectors.build(rows_of(unit(10, rng), rng))
    kept = model.merged(np.array([0, 4], np.int64), ModelVectors.build([]))
    assert kept.ids.tolist() == [1, 5]
    assert kept.matrix.shape == (2, DIM)


# -- words: the rarest first, within a budget (thatch_postgres.wordcounts) ----------


def analyzed(storage: PostgresStorage, server: Server, schema: str) -> PostgresStorage:
    """``storage`` after ANALYZE, as autovacuum would run it, with its statistics read afresh."""
    run_sql(server, schema, "ANALYZE memory_words")
    storage._word_counts = wordcounts.WordCounts()
    return storage


def test_a_word_too_common_to_afford_is_left_out(
    open_handle: Open, postgres_server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wordcounts, "MAX_POSTINGS", 5)
    storage = open_handle()
    write(storage, *(new(f"m{i}", f"common filler {i}") for i in range(10)))
    [rare] = write(storage, new("rare", "common and rare words"))
    analyzed(storage, postgres_server, schema_for(tmp_path))
    assert storage.text_search("common", scope(), 20) == []
    assert [hit.id for hit in storage.text_search("common rare", scope(), 20)] == [rare.id]
    # Stop words have no lexeme: nothing to search by.
    assert storage.text_search("the and of", scope(), 20) == []


def test_without_statistics_every_word_is_kept(
    open_handle: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wordcounts, "MAX_POSTINGS", 5)
    storage = open_handle()
    write(storage, *(new(f"m{i}", f"common filler {i}") for i in range(10)))
    # Never analyzed: the common word is searched by all the same.
    assert len(storage.text_search("common", scope(), 20)) == 10


def test_the_statistics_are_read_again_after_a_while(
    open_handle: Open, postgres_server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wordcounts, "MAX_POSTINGS", 5)
    storage = open_handle()
    write(storage, *(new(f"m{i}", f"common {i}") for i in range(3)))
    now = [0.0]
    storage._word_counts = wordcounts.WordCounts(clock=lambda: now[0])
    run_sql(postgres_server, schema_for(tmp_path), "ANALYZE memory_words")
    assert len(storage.text_search("common", scope(), 20)) == 3
    write(storage, *(new(f"n{i}", f"common {i}") for i in range(4)))
    run_sql(postgres_server, schema_for(tmp_path), "ANALYZE memory_words")
    # Seven memories hold the word now, but the counts read before stand until the refresh.
    assert len(storage.text_search("common", scope(), 20)) == 7
    now[0] += wordcounts.REFRESH_SECONDS
    assert storage.text_search("common", scope(), 20) == []
