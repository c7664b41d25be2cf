"""Reciprocal-rank fusion of the meaning and the words result lists.

Ranks, not raw scores, are fused: cosine and bm25 live on different scales and
bm25's scale moves with the corpus. The fused score is normalised so that a
memory ranked first in both lists scores 1.0 and one ranked first in a single
list scores 0.5, which keeps scores comparable across queries.
See bench/recall_quality.py for how the constant and weights were chosen.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

#: Damps the head of each list; 60 is the value RRF is usually run with and
#: did as well as any other on bench/data (see docs/thresholds.md).
RRF_K = 60


@attrs.frozen
class Fused:
    """One candidate's fused score and its rank in each list (1-based, None if absent)."""

    id: int
    score: float
    vector_rank: int | None
    text_rank: int | None


def fuse(
    vector_ids: Sequence[int],
    text_ids: Sequence[int],
    *,
    vector_weight: float = 1.0,
    text_weight: float = 1.0,
    k: int = RRF_K,
) -> list[Fused]:
    """Fuse two ranked id lists, best first; ties keep the meaning order."""
    vector_rank = {memory_id: rank for rank, memory_id in enumerate(vector_ids, 1)}
    text_rank = {memory_id: rank for rank, memory_id in enumerate(text_ids, 1)}
    best = (vector_weight + text_weight) / (k + 1)
    if best <= 0:
        return []
    fused = []
    for memory_id in dict.fromkeys([*vector_ids, *text_ids]):
        v_rank, t_rank = vector_rank.get(memory_id), text_rank.get(memory_id)
        total = (vector_weight / (k + v_rank) if v_rank else 0.0) + (
            text_weight / (k + t_rank) if t_rank else 0.0
        )
        fused.append(Fused(memory_id, total / best, v_rank, t_rank))
    fused.sort(key=lambda item: -item.score)
    return fused
