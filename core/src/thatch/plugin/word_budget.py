"""Choosing a query's words within a budget of postings, rarest first.

A full-text backend ranks every memory that holds one of the query's words;
a word in a third of a large store makes it rank a third of the store. Both
built-in backends bound that cost the same way: they take the query's words
rarest first while the memories holding them add up to the budget, and
leave out the rest. How each counts a word's memories is its own (SQLite
reads its index, PostgreSQL the planner's statistics).
"""

from __future__ import annotations

from collections.abc import Mapping


def affordable(counts: Mapping[str, float], budget: float) -> list[str]:
    """The rarest words of ``counts`` whose memories add up to at most ``budget``, rarest first.

    Equally common words keep their order in ``counts`` (``sorted`` is stable).

    >>> affordable({"the": 90_000, "indent": 40, "python": 3000, "zzz": 0}, 5000)
    ['zzz', 'indent', 'python']
    """
    chosen: list[str] = []
    total = 0.0
    for word, count in sorted(counts.items(), key=lambda item: item[1]):
        if total + count > budget:
            break
        chosen.append(word)
        total += count
    return chosen
