"""A store past QUANTIZE_AT is scanned as int8 codes and answers as the exact search does.

Its candidates are scored again from the float32 vectors in the file, so the
cosines are the exact ones; a memory deleted or archived, by this handle or
another, is never returned; and the whole storage contract holds when every
store is quantized.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from thatch.plugin.records import NewMemory, Scope
from thatch.testing.contracts import MemoryStorageContract
from thatch_sqlite import vectors
from thatch_sqlite.storage import SQLiteStorage
from thatch_sqlite.vectors import VectorIndex

STORE = "acme/app"
DIM = 32
COUNT = 600


@pytest.fixture(autouse=True)
def _small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    # Storage opened after this keeps int8 codes for stores of 100 memories or more.
    monkeypatch.setattr(vectors, "QUANTIZE_AT", 100)


def _unit(rng: np.random.Generator, count: int) -> np.ndarray:
    matrix = rng.standard_normal((count, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def _memories(matrix: np.ndarray, *, store: str = STORE, prefix: str = "m") -> list[NewMemory]:
    return [
        NewMemory(store, f"{prefix}-{i}", f"fact {prefix} {i}", None, "model", matrix[i])
        for i in range(len(matrix))
    ]


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[tuple[SQLiteStorage, np.ndarray, list[int]]]:
    """A storage handle on a store of COUNT memories, their vectors and ids."""
    matrix = _unit(np.random.default_rng(3), COUNT)
    with SQLiteStorage(tmp_path / "thatch.db") as storage:
        ids = [result.memory.id for result in storage.write_memories(_memories(matrix))]
        yield storage, matrix, ids


def _exact(matrix: np.ndarray, ids: list[int], query: np.ndarray, limit: int) -> list[int]:
    scores = matrix @ query
    order = np.lexsort((np.asarray(ids), -scores))[:limit]
    return [ids[row] for row in order]


def _block(storage: SQLiteStorage, store: str = STORE) -> Any:
    return storage._cache.vectors("model")._models["model"][store]


def test_a_large_store_is_quantized_and_finds_the_exact_best(
    filled: tuple[SQLiteStorage, np.ndarray, list[int]],
) -> None:
    storage, matrix, ids = filled
    queries = _unit(np.random.default_rng(4), 30)
    for query in queries:
        hits = storage.vector_search(query, "model", Scope((STORE,)), 10)
        assert [hit.id for hit in hits] == _exact(matrix, ids, query, 10)
        row_of = {memory_id: row for row, memory_id in enumerate(ids)}
        for hit in hits:
            # Exact cosines, from the stored float32 vectors, not the codes.
            assert hit.score == pytest.approx(float(matrix[row_of[hit.id]] @ query), abs=1e-6)
    block = _block(storage)
    assert block.quantized
    assert block.matrix is None  # the float32 copy is gone: a quarter of the memory


def test_a_deleted_or_archived_memory_is_never_returned(
    filled: tuple[SQLiteStorage, np.ndarray, list[int]], tmp_path: Path
) -> None:
    storage, matrix, ids = filled
    query = matrix[7]
    assert storage.vector_search(query, "model", Scope((STORE,)), 1)[0].id == ids[7]
    assert storage.delete_memory(STORE, "m-7")
    storage.set_archived(STORE, "m-8", True)
    # And one deleted by another handle, as another process would.
    with SQLiteStorage(tmp_path / "thatch.db") as other:
        assert other.delete_memory(STORE, "m-9")
    for row in (7, 8, 9):
        found = [hit.id for hit in storage.vector_search(matrix[row], "model", Scope((STORE,)), 5)]
        assert not {ids[7], ids[8], ids[9]} & set(found)


def test_the_re_scoring_leaves_out_what_the_file_no_longer_has() -> None:
    # The index has not caught up with a delete yet: the stored vectors decide.
    matrix = _unit(np.random.default_rng(5), 200)
    kept = set(range(1, 201)) - {1}

    def stored(model: str, ids: Any, dim: int) -> tuple[np.ndarray, np.ndarray]:
        found = np.asarray([i for i in ids if i in kept], np.int64)
        return found, matrix[found - 1].reshape(len(found), dim)

    index = VectorIndex(stored)
    rows = [(i + 1, STORE, None, matrix[i].astype("<f4").tobytes()) for i in range(200)]
    index.load_sorted("model", iter(rows), 200, DIM)
    assert index._models["model"][STORE].quantized
    hits = index.search(matrix[0], "model", [STORE], None, 3)
    assert 1 not in [memory_id for memory_id, _ in hits]
    assert len(hits) == 3


def test_writes_after_quantizing_are_searchable_and_scoped_by_branch(
    filled: tuple[SQLiteStorage, np.ndarray, list[int]],
) -> None:
    storage = filled[0]
    assert _block(storage).quantized
    extra = _unit(np.random.default_rng(6), 3)
    written = storage.write_memories(
        [
            NewMemory(STORE, "new-any", "any branch", None, "model", extra[0]),
            NewMemory(STORE, "new-feature", "feature only", "feature", "model", extra[1]),
        ]
    )
    any_id, feature_id = (result.memory.id for result in written)
    assert storage.vector_search(extra[0], "model", Scope((STORE,)), 1)[0].id == any_id
    on_main = storage.vector_search(extra[1], "model", Scope((STORE,), branch="main"), 3)
    assert feature_id not in [hit.id for hit in on_main]
    on_feature = storage.vector_search(extra[1], "model", Scope((STORE,), branch="feature"), 1)
    assert on_feature[0].id == feature_id
    assert on_feature[0].score == pytest.approx(1.0, abs=1e-6)
    # An update replaces the memory's codes in place.
    storage.write_memories([NewMemory(STORE, "new-any", "changed", None, "model", extra[2])])
    assert storage.vector_search(extra[2], "model", Scope((STORE,)), 1)[0].id == any_id


def test_a_store_crossing_the_threshold_is_quantized_in_place(tmp_path: Path) -> None:
    matrix = _unit(np.random.default_rng(8), 150)
    with SQLiteStorage(tmp_path / "thatch.db") as storage:
        ids = [r.memory.id for r in storage.write_memories(_memories(matrix[:50]))]
        assert storage.vector_search(matrix[0], "model", Scope((STORE,)), 1)[0].id == ids[0]
        assert not _block(storage).quantized
        ids += [r.memory.id for r in storage.write_memories(_memories(matrix[50:], prefix="n"))]
        for row in (0, 75, 149):
            hits = storage.vector_search(matrix[row], "model", Scope((STORE,)), 5)
            assert [hit.id for hit in hits] == _exact(matrix, ids, matrix[row], 5)
        assert _block(storage).quantized


def test_many_deletes_compact_a_quantized_block(
    filled: tuple[SQLiteStorage, np.ndarray, list[int]],
) -> None:
    storage, matrix, ids = filled
    for i in range(0, COUNT, 2):
        storage.delete_memory(STORE, f"m-{i}")
    live = ids[1::2]
    block = _block(storage)
    assert block.quantized
    assert block.size < COUNT  # compacted: dead rows are gone
    query = matrix[1]
    hits = storage.vector_search(query, "model", Scope((STORE,)), 10)
    assert [hit.id for hit in hits] == _exact(matrix[1::2], live, query, 10)


def test_store_matrix_of_a_quantized_store_is_the_stored_float32(
    filled: tuple[SQLiteStorage, np.ndarray, list[int]],
) -> None:
    storage, matrix, ids = filled
    storage.delete_memory(STORE, "m-3")
    got_ids, got = storage.store_matrix(STORE, "model")
    keep = [row for row in range(COUNT) if row != 3]
    assert got_ids == [ids[row] for row in keep]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, matrix[keep])


def test_a_small_store_beside_a_quantized_one_stays_exact(tmp_path: Path) -> None:
    matrix = _unit(np.random.default_rng(9), 230)
    with SQLiteStorage(tmp_path / "thatch.db") as storage:
        storage.write_memories(_memories(matrix[:200]))
        storage.write_memories(_memories(matrix[200:], store="global", prefix="g"))
        storage.vector_search(matrix[0], "model", Scope((STORE, "global")), 1)
        storage._cache.clear()  # the next search loads both stores in one go
        hits = storage.vector_search(matrix[210], "model", Scope((STORE, "global")), 1)
        assert hits[0].score == pytest.approx(1.0, abs=1e-6)
        small = _block(storage, "global")
        assert not small.quantized
        # The float32 held is the small store's alone: the large one was coded as it loaded.
        held = small.matrix if small.matrix.base is None else small.matrix.base
        assert held.shape[0] == 30
        assert _block(storage).quantized


class TestEveryStoreQuantized(MemoryStorageContract):
    """The memory storage contract with every store kept as int8 codes."""

    @pytest.fixture(autouse=True)
    def _quantize_everything(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(vectors, "QUANTIZE_AT", 1)

    def open_backend(self, directory: Path) -> Any:
        return SQLiteStorage(directory / "thatch.db")


def test_a_scan_split_between_threads_gives_every_rows_product(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from thatch.plugin import quantized

    rng = np.random.default_rng(11)
    matrix = _unit(rng, 1001)  # odd, so the halves differ in size
    scale = quantized.scale_for(matrix)
    codes = quantized.encode(matrix, scale)
    query = quantized.encode(_unit(rng, 1)[0], scale)
    expected = codes.astype(np.int64) @ query.astype(np.int64)
    monkeypatch.setattr(quantized, "SPLIT_AT", 10)
    split = quantized.dots(query, codes)
    monkeypatch.setattr(quantized, "SPLIT_AT", 10**9)
    whole = quantized.dots(query, codes)
    assert split.shape == whole.shape == (1001,)
    np.testing.assert_array_equal(split, expected)
    np.testing.assert_array_equal(whole, expected)
