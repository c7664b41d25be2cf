from __future__ import annotations

import pytest
from thatch.memory.fusion import (
    CODE_WORDS_WEIGHT,
    PROSE_WORDS_WEIGHT,
    RUNNER_UP_PLACE,
    fuse,
    leaning_weight,
    peak,
    words_weight,
)


def test_first_in_both_lists_scores_one() -> None:
    fused = fuse(
        [(1, 0.9), (2, 0.5), (3, 0.4)],
        [(1, 8.0), (3, 2.0)],
        {1: 0.9, 2: 0.5, 3: 0.4},
        words_weight=0.3,
    )
    assert fused[0].id == 1
    assert fused[0].score == pytest.approx(1.0)
    assert (fused[0].vector_rank, fused[0].text_rank) == (1, 1)


def test_every_candidate_once_in_score_order() -> None:
    cosine = {5: 0.8, 6: 0.7, 7: 0.6, 8: 0.2}
    fused = fuse(
        [(5, 0.8), (6, 0.7), (7, 0.6)], [(7, 5.0), (8, 4.0), (5, 1.0)], cosine, words_weight=0.5
    )
    assert sorted(item.id for item in fused) == [5, 6, 7, 8]
    scores = [item.score for item in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= score <= 1.0 for score in scores)


def test_a_towering_words_match_outranks_closer_meanings() -> None:
    # One exact identifier match among weak word hits: the words list has a
    # clear peak, the meaning list has none, so the weight leans to words.
    meaning = [(1, 0.52), (2, 0.51), (3, 0.50), (4, 0.49), (9, 0.40)]
    words = [(9, 14.0), (1, 2.0), (2, 1.9)]
    cosine = dict(meaning)
    fused = fuse(meaning, words, cosine, words_weight=PROSE_WORDS_WEIGHT)
    assert fused[0].id == 9


def test_flat_word_matches_leave_meaning_in_charge() -> None:
    meaning = [(1, 0.80), (2, 0.45), (3, 0.44), (4, 0.43)]
    words = [(2, 3.1), (3, 3.0), (4, 2.9), (1, 2.8), (5, 2.8), (6, 2.7)]
    cosine = {**dict(meaning), 5: 0.3, 6: 0.3}
    fused = fuse(meaning, words, cosine, words_weight=PROSE_WORDS_WEIGHT)
    assert fused[0].id == 1


def test_single_list_weights_rank_by_that_list_alone() -> None:
    meaning = [(1, 0.9), (2, 0.8)]
    words = [(2, 9.0), (1, 1.0)]
    cosine = dict(meaning)
    assert [item.id for item in fuse(meaning, words, cosine, words_weight=0.0)] == [1, 2]
    assert [item.id for item in fuse(meaning, words, cosine, words_weight=1.0)] == [2, 1]
    only_words = fuse([], [(7, 3.0)], {7: 0.1}, words_weight=0.3)
    assert [(item.id, item.vector_rank, item.text_rank) for item in only_words] == [(7, None, 1)]


def test_candidates_without_a_cosine_are_left_out() -> None:
    fused = fuse([(1, 0.9)], [(2, 9.0), (1, 1.0)], {1: 0.9}, words_weight=0.5)
    assert [item.id for item in fused] == [1]


def test_empty_inputs() -> None:
    assert fuse([], [], {}, words_weight=0.3) == []


@pytest.mark.parametrize(
    "query",
    [
        "BIL-9086",
        "sync_charge_usage",
        "taxcalc.refund.max_backoff_ms",
        "ValueError in apply",
        "`make`",
    ],
)
def test_code_like_queries_start_with_more_words_weight(query: str) -> None:
    assert words_weight(query) == CODE_WORDS_WEIGHT


@pytest.mark.parametrize("query", ["who owns payouts these days?", "tabs or spaces"])
def test_prose_queries_start_with_less_words_weight(query: str) -> None:
    assert words_weight(query) == PROSE_WORDS_WEIGHT


def test_peak_of_a_lone_match_beats_a_flat_list() -> None:
    assert peak([5.0], floor=0.0) > peak([5.0, 4.9, 4.8, 4.7, 4.6, 4.5, 4.4, 4.3, 4.2, 4.1])
    assert peak([1.0, 1.0, 1.0]) == 0.0
    assert peak([0.7]) == 0.0


def test_leaning_weight_moves_towards_the_clearer_peak() -> None:
    assert leaning_weight(0.3, vector_peak=1.0, words_peak=3.0) > 0.3
    assert leaning_weight(0.3, vector_peak=3.0, words_peak=0.5) < 0.3
    assert leaning_weight(0.3, vector_peak=0.0, words_peak=0.0) == 0.3
    assert leaning_weight(0.0, vector_peak=1.0, words_peak=3.0) == 0.0
    assert leaning_weight(1.0, vector_peak=3.0, words_peak=1.0) == 1.0


@pytest.mark.parametrize("query", ["who is on-call for meter?", "the end-to-end checks"])
def test_a_hyphen_between_lower_case_words_is_prose(query: str) -> None:
    assert words_weight(query) == PROSE_WORDS_WEIGHT


@pytest.mark.parametrize("query", ["X-Request-Id header", "the BIL-X ticket"])
def test_a_hyphen_beside_a_capital_is_code(query: str) -> None:
    assert words_weight(query) == CODE_WORDS_WEIGHT


def _agreeing_lists() -> tuple[list[tuple[int, float]], list[tuple[int, float]], dict[int, float]]:
    # Memory 1 introduces the subject: first in both lists, its bm25 towering.
    # Memory 9 holds the words asked for (second by words) but is far in meaning.
    meaning = [(1, 0.60), (2, 0.50), (3, 0.49), (4, 0.48), (5, 0.47), (6, 0.46)]
    words = [(1, 35.0), (9, 9.0), (7, 8.5), (8, 8.0)]
    cosine = {**dict(meaning), 7: 0.2, 8: 0.2, 9: 0.25}
    return meaning, words, cosine


def test_words_runner_up_keeps_a_place_when_both_lists_agree_on_the_first() -> None:
    meaning, words, cosine = _agreeing_lists()
    fused = fuse(meaning, words, cosine, words_weight=PROSE_WORDS_WEIGHT)
    ids = [item.id for item in fused]
    assert ids[0] == 1
    assert ids.index(9) == RUNNER_UP_PLACE - 1
    # Moved up, it keeps its own score; everything else stays in score order.
    rest = [item.score for item in fused if item.id != 9]
    assert rest == sorted(rest, reverse=True)
    assert fused[RUNNER_UP_PLACE - 1].score < fused[RUNNER_UP_PLACE].score


def test_words_runner_up_is_not_moved_when_the_lists_disagree() -> None:
    meaning, words, cosine = _agreeing_lists()
    words = [(9, 35.0), (1, 9.0), (7, 8.5), (8, 8.0)]
    fused = fuse(meaning, words, cosine, words_weight=PROSE_WORDS_WEIGHT)
    scores = [item.score for item in fused]
    assert scores == sorted(scores, reverse=True)


def test_words_runner_up_already_high_stays_where_it_is() -> None:
    meaning = [(1, 0.9), (2, 0.5), (3, 0.4)]
    words = [(1, 8.0), (2, 7.0)]
    fused = fuse(meaning, words, dict(meaning), words_weight=PROSE_WORDS_WEIGHT)
    assert [item.id for item in fused] == [1, 2, 3]
