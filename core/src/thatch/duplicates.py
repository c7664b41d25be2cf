"""Near-duplicate pairs within a store, minus the pairs a person already reviewed."""

from __future__ import annotations

from thatch.models import DuplicatePair
from thatch.storage import Storage

#: Rows compared per block: bounds memory to BLOCK × n floats at any store size.
BLOCK = 1024


def duplicate_pairs(
    storage: Storage, store: str, model: str, threshold: float
) -> list[DuplicatePair]:
    """Unreviewed pairs of ``store`` whose cosine is at least ``threshold``, closest first."""
    import numpy as np

    ids, matrix = storage.store_matrix(store, model)
    if len(ids) < 2:
        return []
    reviewed = storage.reviewed_pairs(store)
    found: list[tuple[float, int, int]] = []
    for start in range(0, len(ids), BLOCK):
        block = matrix[start : start + BLOCK] @ matrix.T
        rows, cols = np.nonzero(block >= threshold)
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            first = start + row
            if col <= first:
                continue  # each pair once, and never a memory with itself
            pair = (min(ids[first], ids[col]), max(ids[first], ids[col]))
            if pair not in reviewed:
                found.append((float(block[row, col]), *pair))
    found.sort(key=lambda item: -item[0])
    memories = storage.get_memories({memory_id for _, a, b in found for memory_id in (a, b)})
    return [
        DuplicatePair(first=memories[a], second=memories[b], cosine=round(cosine, 4))
        for cosine, a, b in found
        if a in memories and b in memories
    ]
