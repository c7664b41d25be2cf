"""English function words, and a query without them (a variant the recall scripts measure)."""

from __future__ import annotations

import re

#: English function words, dropped from the words query in the "no stop words" variants.
#: The full-text query ORs every word, so without this a memory that merely shares
#: "the" or "how" with the query enters the words list and gains a fused score.
STOP_WORDS = frozenset(
    " ".join(
        (
            "a about after all also am an and any are as at be been before but by can could",
            "did do does doing for from had has have how i if in into is it its itself just",
            "may me might must my no not of on once only or our out own should so some such",
            "than that the their them then there these they this those to too under up us",
            "very was we were what when where which while who whom why will with would you",
            "your",
        )
    ).split()
)


def without_stop_words(text: str) -> str:
    """``text`` minus English function words (all of it when nothing else is left)."""
    kept = [word for word in re.findall(r"\w+", text) if word.casefold() not in STOP_WORDS]
    return " ".join(kept) or text
