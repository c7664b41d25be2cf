"""Whether two close prediction statements say the same thing or opposite things.

Sentence embeddings place a statement right beside its opposite: "Prefer
single quotes" and "Prefer double quotes" have a cosine of 0.97 with the
default model, "Indent with tabs" and "Indent with spaces" 0.80. Merging such
a pair would turn the user's correction into a confirmation of what they
rejected. Counting shared words does not tell them apart either: opposites
share most of their words, paraphrases often few ("handle" / "deal with").

So the cosine says whether two statements are about the same thing, and this
module says whether they take the same side. Two statements take opposite
sides when one is negated and the other is not, when one holds a word whose
antonym the other holds instead ("tabs" / "spaces", "before" / "after",
"squash" / "keep"), when their numbers differ, or when both order the same two
things the other way round ("X before Y" / "Y before X", "prefer X over Y" /
"prefer Y over X"). Below a very high cosine, the words one statement swaps
for the other's must also be close in meaning ("handle" / "deal with", not
"lint" / "test"). What fails is not merged: the engine names it instead.
Measured on bench/data/wording_pairs.jsonl by bench/prediction_wording.py
(docs/decision-model.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

#: Cosine of two statements from which one may restate the other (default model;
#: bench/prediction_wording.py): below it, paraphrases and other preferences of
#: the same topic cannot be told apart.
LINK_COSINE = 0.70
#: Cosine of the words only one statement has against those only the other has,
#: from which they are taken as synonyms ("handle" / "deal with") and not as two
#: different things ("lint" / "test").
CONTRAST_COSINE = 0.40
#: Cosine from which two statements of the same side restate each other whatever
#: words they swap: a single swapped word ("handle" / "deal with") embeds poorly alone.
SURE_COSINE = 0.90
_WORD = re.compile(r"[a-z0-9_]+(?:'[a-z]+)?")
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
        "mustn't",
        "cannot",
        "can't",
        "avoid",
        "without",
        "stop",
        "skip",
        "nor",
        "none",
    ]
)
#: Function words: they carry no preference (the whole list of the rule before this one).
FUNCTION_WORDS = frozenset(
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
#: Words too common to tell two statements apart: function words, and the words
#: every preference is stated with.
STOPWORDS = FUNCTION_WORDS | frozenset(
    [
        "i",
        "i'd",
        "me",
        "my",
        "please",
        "should",
        "must",
        "would",
        "could",
        "like",
        "want",
        "prefer",
        "use",
    ]
)
#: Words that, set against each other, make two statements take opposite sides.
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("always", "never"),
    ("before", "after"),
    ("first", "last"),
    ("first", "afterward"),
    ("early", "late"),
    ("tab", "space"),
    ("single", "double"),
    ("small", "large"),
    ("small", "big"),
    ("short", "long"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("async", "synchronous"),
    ("sync", "asynchronous"),
    ("absolute", "relative"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("dev", "runtime"),
    ("mutable", "immutable"),
    ("fast", "silent"),
    ("exact", "compatible"),
    ("next", "separate"),
    ("loud", "silent"),
    ("optimistic", "pessimistic"),
    ("strict", "lenient"),
    ("lowercase", "uppercase"),
    ("start", "end"),
    ("top", "bottom"),
    ("increase", "decrease"),
    ("lazy", "eager"),
    ("required", "optional"),
    ("light", "dark"),
    ("utc", "local"),
    ("inclusive", "exclusive"),
    ("public", "private"),
    ("minimum", "maximum"),
    ("ascending", "descending"),
    ("newest", "oldest"),
    ("latest", "oldest"),
    ("one", "many"),
    ("one", "several"),
    ("real", "mock"),
    ("staging", "production"),
    ("keep", "delete"),
    ("keep", "remove"),
    ("keep", "squash"),
    ("keep", "drop"),
    ("in", "out"),
    ("include", "exclude"),
    ("include", "omit"),
    ("add", "remove"),
    ("split", "merge"),
    ("snake_case", "camelcase"),
    ("debug", "info"),
    ("throw", "return"),
    ("raise", "return"),
    ("default", "customise"),
    ("default", "custom"),
    ("fix", "leave"),
    ("rename", "leave"),
)
#: Words that order two things: what comes before them is preferred or done first.
_ORDER = re.compile(r"\b(?:before|over|instead of|rather than|above|than|first)\b|,\s*not\b")
_PREFER_TO = re.compile(r"^\s*(?:prefer|favou?r)\b(.*?)\bto\b(.*)$")
_LEADING_BEFORE = re.compile(r"^\s*(?:before|over|instead of|rather than)\b([^,]*),(.*)$")
#: "X instead of Y" says "X, not Y": counted as a negation, so the two agree.
_INSTEAD = re.compile(r"\b(?:instead of|rather than)\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: "not even" is emphasis, not a second negation.
_NOT_EVEN = re.compile(r"\bnot even\b")


def stem(word: str) -> str:
    """A crude stem: "tests"/"test", "handling"/"handle", "committing"/"commit"."""
    for suffix in ("ing", "ies", "ed", "ly", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2]:
                word = word[:-1]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _words(text: str) -> list[str]:
    return _WORD.findall(_INSTEAD.sub(" not ", _NOT_EVEN.sub("even", text.lower())))


def negated(text: str) -> bool:
    """Whether the statement says not to do something (an odd count of negations)."""
    words = _words(text)
    count = sum(word in NEGATIONS or word.endswith("n't") for word in words)
    return count % 2 == 1


def antonym_clash(first: str, second: str) -> tuple[str, str] | None:
    """The antonym pair the two statements hold on opposite sides, if any."""
    one = {stem(word) for word in _words(first)}
    two = {stem(word) for word in _words(second)}
    for left, right in ANTONYMS:
        stems = stem(left), stem(right)
        for mine, theirs in ((one, two), (two, one)):
            if stems[0] in mine - theirs and stems[1] in theirs - mine:
                return left, right
    return None


def ordered_sides(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The content words of what the statement puts first and of what it puts second.

    "Handle errors before the happy path", "prefer X over Y", "X rather than
    Y", "X first, then Y" and "Before Y, X" all put X first. None when the
    statement orders nothing.
    """
    lowered = _NOT_EVEN.sub("even", text.lower())
    leading = _LEADING_BEFORE.match(lowered)
    if leading:
        return _content(leading.group(2)), _content(leading.group(1))
    prefer = _PREFER_TO.match(lowered)
    if prefer:
        return _content(prefer.group(1)), _content(prefer.group(2))
    found = _ORDER.search(lowered)
    if found is None:
        return None
    return _content(lowered[: found.start()]), _content(lowered[found.end() :])


def _content(text: str) -> frozenset[str]:
    return frozenset(stem(word) for word in _words(text) if len(word) > 2 and word not in NEGATIONS)


def order_reversed(first: str, second: str) -> bool:
    """Whether the statements order two same things the other way round."""
    one, two = ordered_sides(first), ordered_sides(second)
    if one is None or two is None:
        return False
    crossed_forward = (one[0] - one[1]) & (two[1] - two[0])
    crossed_back = (one[1] - one[0]) & (two[0] - two[1])
    return bool(crossed_forward and crossed_back)


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def opposition(first: str, second: str) -> str | None:
    """Why the two statements take opposite sides ("negation", "antonym x/y", "order"), or None."""
    if negated(first) != negated(second):
        return "negation"
    numbers = _numbers(first) ^ _numbers(second)
    if _numbers(first) - _numbers(second) and _numbers(second) - _numbers(first):
        return f"numbers {' / '.join(sorted(numbers))}"
    clash = antonym_clash(first, second)
    if clash:
        return f"antonym {clash[0]}/{clash[1]}"
    if order_reversed(first, second):
        return "order"
    return None


def same_statement(first: str, second: str) -> bool:
    """True when two statements, already close by cosine, take the same side."""
    return opposition(first, second) is None


def why_not_linked(
    first: str, second: str, cosine: float, similarity: Callable[[str, str], float]
) -> str | None:
    """None when ``second`` restates ``first``; otherwise why it does not, for the user.

    ``cosine`` is the two statements' cosine; ``similarity`` embeds two short
    texts and returns their cosine, for the contrast of the differing words
    (only called when each statement has words the other lacks).
    """
    if cosine < LINK_COSINE:
        return f"cosine {cosine:.3f} is below {LINK_COSINE}"
    opposed = opposition(first, second)
    if opposed:
        return f"opposite wording ({opposed})"
    if cosine >= SURE_COSINE:
        return None
    only_first, only_second = differing_words(first, second)
    if only_first and only_second:
        mine, theirs = " ".join(only_first), " ".join(only_second)
        contrast = similarity(mine, theirs)
        if contrast < CONTRAST_COSINE:
            return (
                f"different words ({mine!r} / {theirs!r}, "
                f"cosine {contrast:.3f} below {CONTRAST_COSINE})"
            )
    return None


def differing_words(first: str, second: str) -> tuple[list[str], list[str]]:
    """The content words only ``first`` has and those only ``second`` has, as written."""
    one = [word for word in _words(first) if word not in STOPWORDS | NEGATIONS]
    two = [word for word in _words(second) if word not in STOPWORDS | NEGATIONS]
    stems_one, stems_two = {stem(word) for word in one}, {stem(word) for word in two}
    return (
        [word for word in one if stem(word) not in stems_two],
        [word for word in two if stem(word) not in stems_one],
    )


def content_overlap(first: str, second: str, stopwords: Sequence[str] = ()) -> float:
    """Jaccard share of stemmed content words (the rule before the polarity check)."""
    skip = set(stopwords) | NEGATIONS
    one = {stem(word) for word in _words(first) if word not in skip}
    two = {stem(word) for word in _words(second) if word not in skip}
    union = one | two
    return len(one & two) / len(union) if union else 1.0
