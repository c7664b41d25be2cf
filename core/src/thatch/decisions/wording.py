"""Whether two prediction statements say the same thing, beyond their cosine.

Sentence embeddings place a statement right beside its opposite: "Prefer
single quotes" and "Prefer double quotes" have a cosine of 0.97 with the
default model, "Indent with tabs" and "Indent with spaces" 0.80 (measured on
the opposite pairs of bench/data/decisions.jsonl). Merging such a pair would
turn the user's correction into a confirmation of what they rejected. So a
prediction is reused only when, besides clearing the dedup cosine, its
wording has the same polarity and nearly the same content words; a
rephrasing that fails this creates a second prediction, which the user can
see and delete, instead of silently corrupting the first.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "aren't",
        "won't",
        "shouldn't",
        "cannot",
        "can't",
        "avoid",
        "without",
        "stop",
        "nor",
        "none",
    ]
)
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "at",
        "by",
        "from",
        "as",
        "is",
        "are",
        "be",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "into",
        "than",
        "then",
        "so",
        "do",
        "does",
        "any",
        "every",
        "all",
        "each",
        "your",
        "you",
        "their",
    ]
)
#: Share of content words two statements must have in common (Jaccard).
MIN_OVERLAP = 0.8


def _stem(word: str) -> str:
    # Enough to equate "tests"/"test" and "handling"/"handle"; not a real stemmer.
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _words(text: str) -> tuple[bool, frozenset[str]]:
    words = _WORD.findall(text.lower())
    negated = any(word in NEGATIONS or word.endswith("n't") for word in words)
    content = frozenset(
        _stem(word) for word in words if word not in STOPWORDS and word not in NEGATIONS
    )
    return negated, content


def same_statement(first: str, second: str) -> bool:
    """True when the two statements agree in polarity and content words."""
    first_negated, first_words = _words(first)
    second_negated, second_words = _words(second)
    if first_negated != second_negated:
        return False
    union = first_words | second_words
    if not union:
        return first.strip().lower() == second.strip().lower()
    return len(first_words & second_words) / len(union) >= MIN_OVERLAP
