"""Fitting the nudges of every plugin into one prompt's character budget."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from thatch.plugin.nudge import Nudge
from thatch.safetext import visible

#: Tiers that make the tier-3 fallback unnecessary once one of their nudges is taken.
PRIMARY_TIERS = (1, 2)


def compose(nudges: Iterable[Nudge], budget: int, separator: str = "\n\n") -> list[Nudge]:
    """The nudges to deliver, in order, whose texts joined by ``separator`` fit ``budget``.

    Nudges are ordered by tier (1 first), then priority (higher first), then
    the order given. Each is taken whole if its text fits what is left of
    the budget (with the separator before it), else as its ``short_text``
    if that fits (the returned nudge carries the short text as ``text``),
    else skipped. Tier-3 nudges are taken only when no tier-1 or tier-2
    nudge was. Nudges with blank text are never taken. Control characters
    are escaped (:func:`thatch.safetext.visible`) before a text is measured:
    the built-in nudges have none left, a plugin's may.
    """
    ordered = sorted(nudges, key=lambda nudge: (nudge.tier, -nudge.priority))
    chosen: list[Nudge] = []
    used = 0
    for nudge in ordered:
        if nudge.tier not in PRIMARY_TIERS and any(n.tier in PRIMARY_TIERS for n in chosen):
            continue
        cost = len(separator) if chosen else 0
        for raw in (nudge.text, nudge.short_text):
            text = None if raw is None else visible(raw)
            if text is None or not text.strip() or used + cost + len(text) > budget:
                continue
            chosen.append(nudge if text == nudge.text else attrs.evolve(nudge, text=text))
            used += cost + len(text)
            break
    return chosen
