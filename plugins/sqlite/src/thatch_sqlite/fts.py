"""Turning plain user text into a safe, affordable FTS5 query.

Safe: FTS5 has its own query language (``AND``, ``NEAR(...)``, ``col:``,
``*``, ``^``, quotes). User text must never reach it as syntax: a stray quote
or ``-`` would raise, and ``label:`` would change the meaning. So only word
tokens are kept, each is double-quoted (a quoted string is always a plain
term or phrase), and the terms are joined with ``OR`` so that any shared word
counts and bm25 ranks memories that share more, and rarer, words first.

Affordable: bm25 costs about a microsecond per matching row, and a prompt's
common words ("the", "use", the project's name) match most memories. So the
words are taken rarest first until their documents add up to
:data:`MAX_POSTINGS`. A word found in more documents than that alone is left
out; in a store of up to twice that size such a word is in over half the
memories, where FTS5's bm25 gives it no weight anyway.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence

from thatch.plugin import word_budget

# \w is Unicode-aware for str patterns: letters and digits of any script, plus
# "_". A token therefore never holds a double quote, so quoting it is safe.
_WORD = re.compile(r"\w+")

#: Most distinct words used from one query. Each costs a document count and
#: a posting-list cursor; the first words of a pasted wall of text carry its
#: topic well enough.
MAX_TERMS = 32

#: Most matching documents one search may score (see the module docstring):
#: about 4 ms at 100k memories.
MAX_POSTINGS = 5000


def words(text: str, max_terms: int = MAX_TERMS) -> list[str]:
    """The distinct words of ``text`` (case-insensitively), in order, at most ``max_terms``.

    >>> words('Tabs "vs" spaces -- NEAR(x) tabs')
    ['Tabs', 'vs', 'spaces', 'NEAR', 'x']
    """
    found: dict[str, str] = {}
    # NFC first: a decomposed "é" (e + combining accent) would otherwise split
    # the word, since combining marks are not \w.
    for word in _WORD.findall(unicodedata.normalize("NFC", text)):
        # FTS5 folds case itself; this only avoids counting a word twice.
        found.setdefault(word.casefold(), word)
        if len(found) >= max_terms:
            break
    return list(found.values())


def phrase(word: str) -> str:
    """``word`` as an FTS5 string: always a plain term, never an operator."""
    return f'"{word}"'


def affordable(counts: Mapping[str, int], budget: int | None = None) -> list[str]:
    """The rarest words whose document counts add up to at most ``budget``.

    ``budget`` defaults to :data:`MAX_POSTINGS`. The counts may be a little
    out of date (see :mod:`thatch_sqlite.cache`), so a word counted in no
    document is kept: it costs nothing if it is still in none. The choice
    itself is the one PostgreSQL makes too (:mod:`thatch.plugin.word_budget`).

    >>> affordable({"the": 90_000, "indent": 40, "python": 3000, "zzz": 0})
    ['zzz', 'indent', 'python']
    """
    return word_budget.affordable(counts, MAX_POSTINGS if budget is None else budget)


def adjacent_pairs(words: Sequence[str], chosen: Collection[str]) -> list[str]:
    """Neighbouring ``words`` that were both ``chosen``, as two-word phrases.

    Matched as phrases they add bm25 weight where the query's words stand
    together in a memory, as in a prose query for ``sync_charge_usage``
    ("the sync step for a charge usage"), which the tokenizer indexes as the
    words sync, charge, usage side by side. A phrase reads the posting lists of
    its two words, both already affordable, so the cost stays bounded.

    >>> adjacent_pairs(["the", "charge", "usage", "step"], ["charge", "usage", "step"])
    ['charge usage', 'usage step']
    """
    kept = set(chosen)
    return [
        f"{first} {second}"
        for first, second in itertools.pairwise(words)
        if first in kept and second in kept
    ]


def match_expression(chosen: Sequence[str], pairs: Sequence[str] = ()) -> str | None:
    """An FTS5 MATCH expression for any of ``chosen`` or ``pairs``, or None when there is none.

    >>> match_expression(["tabs", "NEAR"])
    '"tabs" OR "NEAR"'
    >>> match_expression(["tabs", "spaces"], ["tabs spaces"])
    '"tabs" OR "spaces" OR "tabs spaces"'
    """
    return " OR ".join(map(phrase, [*chosen, *pairs])) or None
