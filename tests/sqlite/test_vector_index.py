"""Loading the vector index from sorted rows gives the same index as loading columns."""

from __future__ import annotations

import numpy as np
from thatch_sqlite.vectors import VectorIndex


def _rows(count: int, dim: int) -> list[tuple[int, str, str | None, bytes]]:
    rng = np.random.default_rng(7)
    rows = []
    for memory_id in range(1, count + 1):
        vector = rng.standard_normal(dim).astype("<f4")
        vector /= np.linalg.norm(vector)
        store = ("acme/web", "global", "team/api")[memory_id % 3]
        branch = "feature" if memory_id % 5 == 0 else None
        rows.append((memory_id, store, branch, vector.tobytes()))
    # One vector of another length, as a memory embedded by a wrong model would be.
    rows.append((count + 1, "global", None, np.ones(dim + 1, "<f4").tobytes()))
    return rows


def _results(index: VectorIndex, query: np.ndarray, store: str) -> list[tuple[int, float]]:
    ids, cosines = index._models["m"][store].scores(query, None)
    return sorted(zip(ids.tolist(), np.round(cosines, 6).tolist(), strict=True))


def test_streamed_load_matches_the_column_load() -> None:
    dim = 8
    rows = _rows(300, dim)
    by_columns = VectorIndex()
    ids, stores, branches, blobs = zip(*rows, strict=True)
    by_columns.load("m", ids, stores, branches, blobs)
    streamed = VectorIndex()
    ordered = sorted(rows, key=lambda row: row[1])
    streamed.load_sorted("m", iter(ordered), count=len(rows) - 1, dim=dim)

    query = np.asarray(np.frombuffer(rows[0][3], "<f4"), np.float32)
    for store in ("acme/web", "global", "team/api"):
        assert _results(streamed, query, store) == _results(by_columns, query, store)
    assert len(streamed._where) == len(rows) - 1  # the odd-length vector is left out
