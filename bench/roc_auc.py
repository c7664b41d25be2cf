"""ROC AUC, exactly: how well a score ranks the positive cases above the negative ones."""

from __future__ import annotations

from collections.abc import Sequence


def roc_auc(scores: Sequence[float], positives: Sequence[bool]) -> float:
    """The area under the ROC curve of ``scores`` for telling ``positives`` apart.

    The Mann–Whitney statistic: over every (positive, negative) pair, the share
    where the positive scores higher, a tie counting half. 1.0 ranks every
    positive first, 0.0 every negative first, 0.5 is chance (or all tied).

    :raises ValueError: the lengths differ, or there is no positive or no negative case.
    """
    if len(scores) != len(positives):
        raise ValueError(f"{len(scores)} scores for {len(positives)} outcomes")
    high = [score for score, positive in zip(scores, positives, strict=True) if positive]
    low = [score for score, positive in zip(scores, positives, strict=True) if not positive]
    if not high or not low:
        raise ValueError("ROC AUC needs at least one positive and one negative case")
    wins = sum((h > lo) + 0.5 * (h == lo) for h in high for lo in low)
    return wins / (len(high) * len(low))
