"""Near-duplicate pairs within a store, minus the pairs a person judged different."""

from __future__ import annotations

from thatch.plugin.records import DuplicatePair
from thatch.plugin.storage import MemoryStorage

#: Rows compared per block: bounds memory to BLOCK × n floats at any store size.
BLOCK = 1024


def duplicate_pairs(
    storage: MemoryStorage, store: str, model: str, threshold: float
) -> list[DuplicatePair]:
    """Pairs of ``store`` to act on, closest first.

    These are the unreviewed pairs whose cosine is at least ``threshold``, and
    the pairs a person judged the same, whatever their cosine: they stay
    listed until someone merges them, which removes the pair.
    """
    import numpy as np

    ids, matrix = storage.store_matrix(store, model)
    if len(ids) < 2:
        return []
    verdicts = storage.review_verdicts(store)
    found: dict[tuple[int, int], float] = {}
    for start in range(0, len(ids), BLOCK):
        block = matrix[start : start + BLOCK] @ matrix.T
        rows, cols = np.nonzero(block >= threshold)
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            first = start + row
            if col <= first:
                continue  # each pair once, and never a memory with itself
            pair = (min(ids[first], ids[col]), max(ids[first], ids[col]))
            if pair not in verdicts:
                found[pair] = float(block[row, col])
    row_of = {memory_id: row for row, memory_id in enumerate(ids)}
    for (a, b), verdict in verdicts.items():
        if verdict == "same" and a in row_of and b in row_of:
            found[(a, b)] = float(matrix[row_of[a]] @ matrix[row_of[b]])
    ordered = sorted(found.items(), key=lambda item: -item[1])
    memories = storage.get_memories({memory_id for pair in found for memory_id in pair})
    return [
        DuplicatePair(first=memories[a], second=memories[b], cosine=round(cosine, 4))
        for (a, b), cosine in ordered
        if a in memories and b in memories
    ]


def pair_key(pair: DuplicatePair) -> tuple[int, int]:
    """The pair's ids as reviews are keyed: (smaller id, larger id)."""
    return min(pair.first.id, pair.second.id), max(pair.first.id, pair.second.id)
