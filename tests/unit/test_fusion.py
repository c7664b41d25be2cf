from __future__ import annotations

import pytest
from thatch.memory.fusion import fuse


def test_first_in_both_lists_scores_one() -> None:
    fused = fuse([1, 2, 3], [1, 3])
    assert fused[0].id == 1
    assert fused[0].score == pytest.approx(1.0)
    assert (fused[0].vector_rank, fused[0].text_rank) == (1, 1)


def test_words_lift_a_lower_meaning_rank() -> None:
    fused = fuse([1, 2, 3, 4], [4])
    assert [item.id for item in fused][:2] == [4, 1]
    only_words = fuse([], [7])
    assert only_words[0].score == pytest.approx(0.5)
    assert only_words[0].vector_rank is None


def test_every_candidate_once_in_score_order() -> None:
    fused = fuse([5, 6, 7], [7, 8, 5])
    assert sorted(item.id for item in fused) == [5, 6, 7, 8]
    scores = [item.score for item in fused]
    assert scores == sorted(scores, reverse=True)


def test_empty_inputs() -> None:
    assert fuse([], []) == []
