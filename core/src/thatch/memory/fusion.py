"""Score fusion of the meaning and the words result lists.

Each list's scores are scaled to 0..1 over the candidates (cosine min-max,
bm25 divided by the best bm25, 0 for a memory the words did not match) and
mixed with a per-query words weight. The weight starts from the shape of the
query (code-like tokens trust the words more) and then leans towards the
ranker whose best score stands further above its runners-up: an exact
identifier match towers over the rest of the words list, while a paraphrase
gives the words list no clear winner. A memory first in both lists scores
1.0, and then the words list's runner-up keeps a place in the first
RUNNER_UP_PLACE (see :func:`fuse`). See bench/recall_quality.py for how the
weights and rules were chosen.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import attrs

#: Starting words weight for a query holding a code-like token, and for plain prose.
CODE_WORDS_WEIGHT = 0.7
PROSE_WORDS_WEIGHT = 0.3
#: How many of a list's best scores its peak is measured against.
PEAK_DEPTH = 10
#: When both lists put the same memory first, the words list's second hit is
#: placed no lower than this (1-based), whatever its fused score.
RUNNER_UP_PLACE = 5

# A word joined to another by "_", ".", "/" or ":" (snake_case, dotted.keys,
# paths, host:port), a hyphen beside a capital (BIL-9086, X-Request-Id), a
# lower-to-upper case change (camelCase, ValueError), a digit, a backtick or a
# double quote: the marks of identifiers and pasted errors, which the words
# search matches exactly and the embedding blurs. A hyphen between lower-case
# words ("on-call", "pre-production") is prose.
_CODE = re.compile(r"\w[_./:]\w|[A-Z]-\w|\w-[A-Z]|[a-z][A-Z]|\d|[`\"]")


@attrs.frozen
class Fused:
    """One candidate's fused score and its rank in each list (1-based, None if absent)."""

    id: int
    score: float
    vector_rank: int | None
    text_rank: int | None


def words_weight(query: str) -> float:
    """The starting weight of the words list for ``query``.

    >>> words_weight("BIL-9086"), words_weight("who owns payouts"), words_weight("on-call")
    (0.7, 0.3, 0.3)
    """
    return CODE_WORDS_WEIGHT if _CODE.search(query) else PROSE_WORDS_WEIGHT


def peak(scores: Sequence[float], floor: float | None = None) -> float:
    """How many standard deviations the best of the first PEAK_DEPTH scores stands above their mean.

    ``scores`` are best first. ``floor`` fills a list shorter than
    PEAK_DEPTH (bm25 is 0 for every memory the words did not match), so one
    lone match is a clear peak; without it a short list is measured as it is.
    """
    head = list(scores[:PEAK_DEPTH])
    if floor is not None:
        head += [floor] * (PEAK_DEPTH - len(head))
    if len(head) < 2:
        return 0.0
    mean = sum(head) / len(head)
    spread = math.sqrt(sum((score - mean) ** 2 for score in head) / len(head))
    return (head[0] - mean) / spread if spread > 0 else 0.0


def leaning_weight(base: float, vector_peak: float, words_peak: float) -> float:
    """``base`` moved towards the list with the clearer peak; ``base`` when neither has one."""
    words_side, vector_side = base * words_peak, (1 - base) * vector_peak
    total = words_side + vector_side
    return words_side / total if total > 0 else base


def fuse(
    by_meaning: Sequence[tuple[int, float]],
    by_words: Sequence[tuple[int, float]],
    cosine: Mapping[int, float],
    *,
    words_weight: float,
) -> list[Fused]:
    """Fuse ``(id, cosine)`` and ``(id, bm25)`` lists, both best first, into one ranking.

    ``cosine`` holds the cosine of every candidate that can be compared; the
    others are left out. ``words_weight`` is the starting weight (see
    :func:`words_weight`): 0 ranks by meaning alone, 1 by words alone. Ties go
    to the higher cosine.

    One rule overrides the scores: when both lists have the same first
    memory, the words list's second is moved up to RUNNER_UP_PLACE if it
    ranks lower. That shared first memory (often the one that introduces the
    subject) towers over the rest of the words list, so every other bm25
    becomes a small share of it while min-max keeps the meaning runners-up
    near 1; without the rule the second words hit, often the one holding the
    words asked for ("the retry limit of ..." against ``push.order.retry_limit``),
    loses every remaining place to memories that are merely about the same
    subject. The moved item keeps its own score. The rule does not depend on
    how many results are asked for, so a shorter ranking is a prefix of a
    longer one.
    """
    candidates = [
        memory_id
        for memory_id in dict.fromkeys([i for i, _ in by_meaning] + [i for i, _ in by_words])
        if memory_id in cosine
    ]
    if not candidates:
        return []
    weight = leaning_weight(
        words_weight,
        peak([score for _, score in by_meaning]),
        peak([score for _, score in by_words], floor=0.0),
    )
    bm25 = dict(by_words)
    lowest = min(cosine[i] for i in candidates)
    cosine_range = max(cosine[i] for i in candidates) - lowest or 1.0
    best_bm25 = max((bm25.get(i, 0.0) for i in candidates), default=0.0) or 1.0
    vector_rank = {memory_id: rank for rank, (memory_id, _) in enumerate(by_meaning, 1)}
    text_rank = {memory_id: rank for rank, (memory_id, _) in enumerate(by_words, 1)}
    fused = [
        Fused(
            memory_id,
            (1 - weight) * (cosine[memory_id] - lowest) / cosine_range
            + weight * bm25.get(memory_id, 0.0) / best_bm25,
            vector_rank.get(memory_id),
            text_rank.get(memory_id),
        )
        for memory_id in candidates
    ]
    fused.sort(key=lambda item: (-item.score, -cosine[item.id]))
    if len(by_words) > 1 and by_meaning and by_meaning[0][0] == by_words[0][0]:
        _keep_within(fused, by_words[1][0], RUNNER_UP_PLACE)
    return fused


def _keep_within(fused: list[Fused], memory_id: int, place: int) -> None:
    """Move ``memory_id`` up to ``place`` (1-based) in ``fused`` if it ranks lower; in place."""
    index = next((n for n, item in enumerate(fused) if item.id == memory_id), None)
    if index is not None and index >= place:
        fused.insert(place - 1, fused.pop(index))
