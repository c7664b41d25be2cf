"""Whether two close prediction statements say the same thing or opposite things.

Sentence embeddings place a statement right beside its opposite: "Prefer
single quotes" and "Prefer double quotes" have a cosine of 0.97 with the
default model, "Indent with tabs" and "Indent with spaces" 0.80. Merging such
a pair would turn the user's correction into a confirmation of what they
rejected. Counting shared words does not tell them apart either: opposites
share most of their words, paraphrases often few ("handle" / "deal with").

So the cosine only says whether two statements are about the same thing, and
this module says whether they take the same side. Both statements are first
written the same way (:func:`normalise`: "deal with" becomes "handle", "PRs"
"pr", "turn off" "not enable"). Two statements take opposite sides when one is
negated and the other is not, when one holds a word whose antonym the other
holds instead ("tabs" / "spaces", "before" / "after", "this" / "separate"),
when their numbers differ, or when both order the same two things the other
way round ("X before Y" / "Y, then X"; "X before Y" and "Y after X" are the
same order). What the words cannot decide is not linked either
(:func:`undecided`): a number only one gives, two orders that cannot be
compared, a qualifier ("separate") all one adds. :func:`conflict` is both
checks; the engine also keeps matchers apart with it. Then what the two
statements say differently decides:
nothing but a clause one of them adds is the same statement; a single word put
in place of another is a different choice ("British" / "American", "past" /
"present": an embedding cannot tell those from synonyms), so it is not linked;
a wider rewording is linked when the words swapped are close in meaning. What
fails is not merged: the engine names it instead. Measured on
bench/data/wording_pairs.jsonl and two held-out sets by
bench/prediction_wording.py (docs/decision-model.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

#: Cosine below which two statements are not taken to be about the same thing
#: (default model; bench/prediction_wording.py). The engine only checks the
#: existing predictions from this cosine on.
LINK_COSINE = 0.30
#: Cosine from which a statement that only adds words to the other (a clause
#: dropped, a "please" added) restates it.
SUBSET_COSINE = 0.60
#: Cosine from which a wider rewording may restate the other statement, when
#: its swapped words are also close (CONTRAST_COSINE).
SWAP_COSINE = 0.70
#: Cosine of the words only one statement has against those only the other has,
#: from which they are taken as synonyms ("composition" / "composing objects")
#: and not as two different things ("lint" / "test").
CONTRAST_COSINE = 0.40
_WORD = re.compile(r"[a-z0-9_]+(?:'[a-z]+)?")
NEGATIONS = frozenset(
    [
        "not",
        "no",
        "non",
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
#: Words too common to tell two statements apart: function words, the words
#: every preference is stated with, and the verbs a preference is framed with
#: ("keep functions small" / "functions should be small"). Antonyms and
#: negations are still read in every word.
STOPWORDS = FUNCTION_WORDS | frozenset(
    [
        "i",
        "i'd",
        "me",
        "my",
        "we",
        "our",
        "they",
        "them",
        "please",
        "should",
        "must",
        "would",
        "could",
        "can",
        "like",
        "want",
        "prefer",
        "use",
        "keep",
        "make",
        "sure",
        "let",
        "get",
        "have",
        "need",
        "needs",
        "go",
        "goes",
        "write",
        "add",
        "put",
        "give",
        "stay",
        "everywhere",
        "run",
        "code",
        # The markers of a rejected alternative: :func:`opposition` reads them.
        "instead",
        "rather",
    ]
)
#: Phrases said in several ways, each rewritten to one spelling before two
#: statements are compared. Only general equivalences of the coding domain:
#: a phrase that could mean something else in some preference stays out.
SYNONYMS: tuple[tuple[str, str], ...] = (
    # Formulas of politeness that hold a negation but negate nothing.
    (r"if you don't mind,?|would you mind|do me a favou?r and|don't forget to", ""),
    (r"pls|plz", "please"),
    (r"deal with|take care of|cope with", "handle"),
    # One word for each naming style, so that a style set against another is a swap.
    (r"snake[_ -]?case", "snakecase"),
    (r"kebab[_ -]?case", "kebabcase"),
    (r"camel[_ -]?case", "camelcase"),
    (r"pascal[_ -]?case", "pascalcase"),
    (r"leave (?:out|off)|omit(?:s|ted|ting)?", "not include"),
    (r"leave ((?:\w+ ){0,3}\w+) (?:out|off)(?: of)?", r"not include \1 in"),
    (r"first,? then", "first before"),
    (r"implementation", "code"),
    (r"combine (?:the )?commits into one", "squash commits"),
    (r"bring (\w+) up to date", r"update \1"),
    (r"(?:keep|make) (\w+(?: \w+)?) up to date", r"update \1"),
    (r"prior to|ahead of", "before"),
    (r"stay away from|steer clear of|refrain from", "avoid"),
    (r"pull requests?|prs?|merge requests?", "pr"),
    (r"right away|straight away|immediately|at once", "immediately"),
    (r"(?:turn|switch) off|disable[sd]?", "not enable"),
    (r"(?:turn|switch) (\w+) off", r"not enable \1"),
    (r"(?:turn|switch) on", "enable"),
    (r"hide[sn]?|hiding", "not show"),
    (r"rg", "ripgrep"),
    (r"stack ?traces?|tracebacks?|backtraces?", "traceback"),
    (r"little|tiny", "small"),
    (r"short(?:er)?", "small"),
    (r"big|huge", "large"),
    (r"favou?r(?:s|ed|ing)?|opt for|go with", "prefer"),
    (r"execut(?:e|es|ed|ing)", "run"),
    (r"repair(?:s|ed|ing)?", "fix"),
    (r"get rid of|eras(?:e|es|ed|ing)|delet(?:e|es|ed|ing)", "remove"),
    (r"check with me|consult me|get my ok|ask me", "ask"),
    # "Don't X without asking" asks first: the two negations make no opposite.
    (r"(?:don't|do not|never) (.+?) without ask(?:ing)?", r"ask before \1"),
    (r"linters?|linting", "lint"),
    (r"throw(?:s|n|ing)?", "raise"),
    (r"precise", "specific"),
    (r"meaningful|descriptively", "descriptive"),
    (r"credentials?|passwords?|api keys?", "secret"),
    (r"settings|configuration|config", "config"),
    (r"calls?", "request"),
    (r"repos?", "repository"),
    (r"deps", "dependencies"),
    (r"docs|documentation", "docs"),
    (r"env(?:ironment)? var(?:iable)?s?|env", "environment"),
    (r"(\w+) that (?:is|are) never used|dead (\w+)", r"unused \1\2"),
    (r"(?:cannot|can't|can not) be (?:mutated|changed|modified)", "immutable"),
    (r"lock(?:s|ed|ing)?", "pin"),
    (r"exceptions?", "error"),
    (r"exit(?:s|ed|ing)?", "return"),
    (r"(?:global|module[- ]level) (?:mutable )?(?:state|variables)", "global variables"),
    (r"annotat(?:e|es|ed|ing) (.+?) with types", r"add type hints to \1"),
    (r"type annotations?", "type hints"),
    (r"introduc(?:e|es|ed|ing)", "add"),
    (r"librar(?:y|ies)", "dependency"),
    (r"once(?= (?:they|it|the|you|we)\b)", "after"),
)
_SYNONYMS = tuple((re.compile(rf"\b(?:{left})\b"), right) for left, right in SYNONYMS)
#: Irregular forms the crude stem cannot join to their verb.
_LEMMAS = {
    "written": "write",
    "wrote": "write",
    "ran": "run",
    "got": "get",
    "made": "make",
    "kept": "keep",
    "done": "do",
    "did": "do",
    "gave": "give",
    "given": "give",
}
#: Words that, set against each other, make two statements take opposite sides
#: (as :func:`normalise` writes them: "short" is "small", "big" "large").
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("always", "never"),
    ("immediately", "wait"),
    ("immediately", "later"),
    ("before", "after"),
    ("first", "last"),
    ("first", "afterward"),
    ("early", "late"),
    ("tab", "space"),
    ("single", "double"),
    ("small", "large"),
    ("small", "long"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("async", "synchronous"),
    ("sync", "asynchronous"),
    ("absolute", "relative"),
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
    ("keep", "remove"),
    ("keep", "squash"),
    ("keep", "drop"),
    ("in", "out"),
    ("include", "exclude"),
    ("include", "omit"),
    ("add", "remove"),
    ("split", "merge"),
    ("snakecase", "camelcase"),
    ("debug", "info"),
    ("raise", "return"),
    ("default", "customise"),
    ("default", "custom"),
    ("fix", "leave"),
    ("rename", "leave"),
    # Qualifiers that pick one thing or another (QUALIFIERS).
    ("this", "separate"),
    ("this", "another"),
    ("this", "different"),
    ("same", "different"),
    ("same", "separate"),
    ("same", "another"),
    ("new", "existing"),
    ("new", "current"),
    ("new", "old"),
    ("existing", "separate"),
)
#: Words that order two things: what comes before them is preferred or done
#: first ("X before Y", "X, then Y", "X first"), except after "after" ("X
#: after Y" does Y first).
_ORDER = re.compile(
    r"\b(?:before|over|instead of|rather than|above|than|first|then|after)\b|,\s*not\b"
)
_PREFER_TO = re.compile(r"^\s*(?:prefer|favou?r)\b(.*?)\bto\b(.*)$")
_LEADING_BEFORE = re.compile(r"^\s*(?:before|over|instead of|rather than)\b([^,]*),(.*)$")
_LEADING_AFTER = re.compile(r"^\s*after\b([^,]*),(.*)$")
#: When the preference applies ("When a test fails, …", "… in tests"): the
#: context of the order, not one of the things ordered.
_LEADING_CONTEXT = re.compile(r"^\s*(?:when|whenever|if|while|in|for|on|during)\b[^,]*,")
_TRAILING_CONTEXT = re.compile(r"\b(?:when|whenever|if|while|unless)\b.*$")
#: Words of an order in time. Only between two such orders does a single
#: crossing leave the order unclear: "X instead of Y" orders a preference,
#: and a word both share ("rebase instead of merging main" / "rebase on main
#: rather than merging") crosses without reversing anything.
_TEMPORAL = re.compile(r"\b(?:before|after|then|first)\b")
#: The words that say the order: not part of what is ordered.
_ORDER_WORDS = frozenset(
    ["before", "after", "first", "then", "afterward", "afterwards", "later", "last", "next"]
)
#: Antonyms that only say an order: when both statements put the same things
#: in the same order, "X before Y" and "Y after X" hold them and agree.
_ORDER_ANTONYMS = frozenset([("before", "after"), ("first", "afterward")])
#: Qualifiers that set one thing against another ("Fix this bug in this PR" /
#: "Fix this bug in a separate PR"): when one is all a statement adds to the
#: other, the two may name different things, so they are not safely the same.
#: Set against each other ("this" / "separate", "new" / "existing") they are
#: antonyms (ANTONYMS).
QUALIFIERS = frozenset(["separate", "different", "another", "same"])
#: What a statement rejects: "X instead of Y", "X rather than Y", "X, not Y",
#: "prefer X over Y", "prefer X to Y", "rather X than Y". Each says "X, not Y",
#: so it counts as a negation, and the rejected alternative is what follows.
_REJECTION = re.compile(
    r"\b(?:instead of|rather than)\b"
    r"|^\s*(?:prefer|choose)\b.*?\b(?:over|to)\b"
    r"|\brather\b.*?\bthan\b"
)
#: Where a clause starts that a statement may drop: a rejected alternative
#: ("prefer X to Y" is found by _PREFER_TO) or the reason for the preference.
_CLAUSE = re.compile(
    r"\b(?:instead of|rather than|over|than)\b|,\s*not\b"
    r"|[,;]\s*(?:so|since|because|which|they|it|as)\b|\b(?:so that|because|since|to avoid)\b"
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: "not even" is emphasis, not a second negation.
_NOT_EVEN = re.compile(r"\bnot even\b")
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The statement in lower case with each phrase of :data:`SYNONYMS` in one spelling."""
    lowered = _NOT_EVEN.sub("even", text.lower())
    for pattern, spelling in _SYNONYMS:
        lowered = pattern.sub(spelling, lowered)
    return _SPACES.sub(" ", lowered).strip()


def stem(word: str) -> str:
    """A crude stem: "tests"/"test", "handling"/"handle", "docstrings"/"docstring"."""
    word = _LEMMAS.get(word, word)
    # The plural first, then the verb's or noun's ending: "strings" and "string"
    # come to the same stem, as do "indentations" and "indent".
    for suffixes in (("ies", "es", "s"), ("ations", "ation", "ing", "ed", "ly")):
        for suffix in suffixes:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
                word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
                if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2]:
                    word = word[:-1]
                break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _words(text: str) -> list[str]:
    words: list[str] = _WORD.findall(normalise(text))
    return words


def _negations(text: str) -> int:
    """Negation words and rejections ("X instead of Y") of an already normalised text."""
    words: list[str] = _WORD.findall(text)
    count = sum(word in NEGATIONS or word.endswith("n't") for word in words)
    return count + len(_REJECTION.findall(text))


def negated(text: str) -> bool:
    """Whether the statement says not to do something (an odd count of negations)."""
    return _negations(normalise(text)) % 2 == 1


def _prefix_negations(one: str, two: str) -> int:
    """Words of ``one`` negated by "un" that ``two`` holds bare ("unsorted" / "sort")."""
    bare = {stem(word) for word in _words(two)}
    return sum(
        word.startswith("un") and stem(word[2:]) in bare and stem(word) not in bare
        for word in _words(one)
    )


def _parity(one: str, two: str) -> int:
    return (_negations(normalise(one)) + _prefix_negations(one, two)) % 2


def _drops_a_clause(one: str, two: str) -> bool:
    """Whether ``one`` is ``two`` plus a clause whose words ``two`` never names.

    The clause is an alternative ``one`` rejects ("Return early instead of
    nesting ifs" / "Return early") or its reason ("Pin the version to avoid
    surprises" / "Pin the version"): its negation negates nothing ``two`` says.
    "Use pnpm" / "Use npm instead of pnpm" names the rejected word: opposite.
    """
    text = normalise(one)
    splits = [(found.start(), found.end()) for found in _CLAUSE.finditer(text)]
    prefer = _PREFER_TO.match(text)
    if prefer:
        splits.append((prefer.start(2) - len("to "), prefer.start(2)))
    other = normalise(two)
    return any(
        _negations(text[:start]) % 2 == _negations(other) % 2
        and not (_content(text[end:]) & _content(other))
        for start, end in splits
    )


def antonym_clash(
    first: str, second: str, skip: frozenset[tuple[str, str]] = frozenset()
) -> tuple[str, str] | None:
    """The antonym pair (not in ``skip``) the two statements hold on opposite sides, if any."""
    one = {stem(word) for word in _words(first)}
    two = {stem(word) for word in _words(second)}
    for left, right in ANTONYMS:
        if (left, right) in skip:
            continue
        stems = stem(left), stem(right)
        for mine, theirs in ((one, two), (two, one)):
            if stems[0] in mine - theirs and stems[1] in theirs - mine:
                return left, right
    return None


def ordered_sides(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The content words of what the statement puts first and of what it puts second.

    "Handle errors before the happy path", "prefer X over Y", "X rather than
    Y", "X first, then Y", "X, then Y", "Y after X", "After X, Y" and "Before
    Y, X" all put X first; "X first" puts X before anything else (the second
    side is empty). None when the statement orders nothing.
    """
    lowered = _TRAILING_CONTEXT.sub("", _LEADING_CONTEXT.sub("", normalise(text)))
    leading = _LEADING_BEFORE.match(lowered)
    if leading:
        return _sides(leading.group(2), leading.group(1))
    leading = _LEADING_AFTER.match(lowered)
    if leading:
        return _sides(leading.group(1), leading.group(2))
    prefer = _PREFER_TO.match(lowered)
    if prefer:
        return _sides(prefer.group(1), prefer.group(2))
    found = _ORDER.search(lowered)
    if found is None:
        return None
    before, after = lowered[: found.start()], lowered[found.end() :]
    if found.group() == "after":
        before, after = after, before
    return _sides(before, after)


def _sides(first: str, second: str) -> tuple[frozenset[str], frozenset[str]]:
    skip = {stem(word) for word in _ORDER_WORDS}
    return _content(first) - skip, _content(second) - skip


def _content(text: str) -> frozenset[str]:
    # Two letters are enough for a tool's name ("uv", "rg").
    return frozenset(
        stem(word)
        for word in _WORD.findall(text)
        if len(word) > 1 and word not in NEGATIONS | FUNCTION_WORDS
    )


def order_relation(first: str, second: str) -> str | None:
    """How the orders of the two statements compare: "reversed", "unclear", "same" or None.

    Each statement's order is what it puts first and what second
    (:func:`ordered_sides`). A thing first in one and second in the other
    "crosses". Two crossings the other way round ("code, then tests" /
    "tests, then code"), or one crossing against a statement that puts its
    thing before anything else ("Write the test first" / "Write the code
    first, then the test"), are reversed. A single crossing otherwise
    ("tests before docs" / "code, then tests") cannot be decided from the
    words: "unclear". "same" when both order the same
    things the same way; None when neither orders anything.
    """
    one, two = ordered_sides(first), ordered_sides(second)
    if one is None and two is None:
        return None
    if one is None or two is None:
        # One orders things, the other does not: the words they differ by decide.
        return None
    # A verb both start with governs both sides ("Write the code, then the
    # tests" / "Write the tests after the code"): it is not one of the things.
    verb = _leading_word(first)
    if verb is not None and verb == _leading_word(second):
        one = (one[0] - {verb}, one[1] - {verb})
        two = (two[0] - {verb}, two[1] - {verb})
    forward = (one[0] - one[1]) & (two[1] - two[0])
    back = (one[1] - one[0]) & (two[0] - two[1])
    if (forward and back) or (forward and not one[1]) or (back and not two[1]):
        return "reversed"
    if (
        (forward or back)
        and _TEMPORAL.search(normalise(first))
        and _TEMPORAL.search(normalise(second))
    ):
        return "unclear"
    agree = (one[0] & two[0]) and (one[1] & two[1])
    return "same" if agree else None


def _leading_word(text: str) -> str | None:
    words = _WORD.findall(normalise(text))
    return stem(words[0]) if words else None


def order_reversed(first: str, second: str) -> bool:
    """Whether the statements order two same things the other way round."""
    return order_relation(first, second) == "reversed"


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def opposition(first: str, second: str) -> str | None:
    """Why the two statements take opposite sides ("negation", "antonym x/y", "order"), or None."""
    if _parity(first, second) != _parity(second, first) and not (
        _drops_a_clause(first, second) or _drops_a_clause(second, first)
    ):
        return "negation"
    numbers = _numbers(first) ^ _numbers(second)
    if _numbers(first) - _numbers(second) and _numbers(second) - _numbers(first):
        return f"numbers {' / '.join(sorted(numbers))}"
    order = order_relation(first, second)
    # "Y after X" restates "X before Y": the order words then are no antonyms.
    clash = antonym_clash(first, second, _ORDER_ANTONYMS if order == "same" else frozenset())
    if clash:
        return f"antonym {clash[0]}/{clash[1]}"
    if order == "reversed":
        return "order"
    return None


def undecided(first: str, second: str) -> str | None:
    """Why the two statements, on no opposite sides, are still not safely the same, or None.

    What the words cannot decide is not decided for the user: a number only
    one statement gives ("Indent with spaces." / "Use 4 spaces for
    indentation."), an order that cannot be compared (:func:`order_relation`),
    or a qualifier that is all one adds ("Fix this bug in this PR" / "Fix
    this bug in a separate PR"). Such a pair is kept apart and named as similar.
    """
    numbers = _numbers(first) ^ _numbers(second)
    if numbers:
        return f"a number only one states: {', '.join(sorted(numbers))}"
    if order_relation(first, second) == "unclear":
        return "their orders cannot be compared"
    only_first, only_second = differing_words(first, second)
    added = only_first + only_second
    if len(added) == 1 and added[0] in QUALIFIERS:
        return f"a qualifier only one holds: {added[0]!r}"
    return None


def conflict(first: str, second: str) -> str | None:
    """Why two close texts are not the same one, from their words alone; None when they may be.

    Opposite sides (:func:`opposition`) or what the words cannot decide
    (:func:`undecided`). The same check keeps matchers (situations) and
    predictions (statements) apart.
    """
    opposed = opposition(first, second)
    if opposed:
        return f"opposite wording ({opposed})"
    unsure = undecided(first, second)
    if unsure:
        return f"not safely the same ({unsure})"
    return None


def same_statement(first: str, second: str) -> bool:
    """True when two statements, already close by cosine, take the same side."""
    return opposition(first, second) is None


def why_not_linked(
    first: str, second: str, cosine: float, similarity: Callable[[str, str], float]
) -> str | None:
    """None when ``second`` restates ``first``; otherwise why it does not, for the user.

    ``cosine`` is the two statements' cosine; ``similarity`` embeds two short
    texts and returns their cosine: of the two statements as :func:`normalise`
    writes them (when that changes one), and of the words they swap. A reason
    that gives the normalised statements' cosine says so, since the answer
    names the similar prediction with the statements' own cosine.
    """
    if cosine < LINK_COSINE:
        return f"cosine {cosine:.4f} is below {LINK_COSINE}"
    conflicted = conflict(first, second)
    if conflicted:
        return conflicted
    only_first, only_second = differing_words(first, second)
    if len(only_first) == 1 and len(only_second) == 1:
        return f"one word swapped ({only_first[0]!r} / {only_second[0]!r})"
    one, two = normalise(first), normalise(second)
    which = ""
    if (one, two) != (first.lower().strip(), second.lower().strip()):
        normalised = similarity(one, two)
        if normalised > cosine:
            # Say so: the answer also shows the statements' own cosine.
            cosine, which = normalised, " (of the statements as normalised)"
    floor = SWAP_COSINE if only_first and only_second else SUBSET_COSINE
    if cosine < floor:
        return f"cosine {cosine:.4f}{which} is below {floor}"
    if only_first and only_second:
        mine, theirs = " ".join(only_first), " ".join(only_second)
        contrast = similarity(mine, theirs)
        if contrast < CONTRAST_COSINE:
            return (
                f"different words ({mine!r} / {theirs!r}, "
                f"cosine {contrast:.4f} below {CONTRAST_COSINE})"
            )
    return None


def differing_words(first: str, second: str) -> tuple[list[str], list[str]]:
    """The content words only ``first`` has and those only ``second`` has, normalised."""
    one = [word for word in _words(first) if word not in STOPWORDS | NEGATIONS]
    two = [word for word in _words(second) if word not in STOPWORDS | NEGATIONS]
    stems_one, stems_two = {stem(word) for word in one}, {stem(word) for word in two}
    return (
        list(dict.fromkeys(word for word in one if stem(word) not in stems_two)),
        list(dict.fromkeys(word for word in two if stem(word) not in stems_one)),
    )


def content_overlap(first: str, second: str, stopwords: Sequence[str] = ()) -> float:
    """Jaccard share of stemmed content words (the rule before the polarity check)."""
    skip = set(stopwords) | NEGATIONS
    one = {stem(word) for word in _words(first) if word not in skip}
    two = {stem(word) for word in _words(second) if word not in skip}
    union = one | two
    return len(one & two) / len(union) if union else 1.0
