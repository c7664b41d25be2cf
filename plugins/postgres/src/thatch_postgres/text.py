"""Full-text search on ``tsvector``: folding text the same way on both sides, safe queries.

Accents and case are folded here, in Python, before the text reaches
``to_tsvector``: the ``unaccent`` extension may be missing or not ours to
create on a shared server, and a server built with the C locale lower-cases
ASCII only. Stemming is left to PostgreSQL's ``english`` configuration.

User text never reaches ``to_tsquery`` as syntax: only word tokens are kept,
each is single-quoted (a token holds no quote or backslash, so it stays one
plain lexeme), and they are joined with ``|`` so any shared word counts and
ranking prefers memories that share more of them.
"""

from __future__ import annotations

import re
import unicodedata

from thatch.plugin import InvalidInputError

#: The text search configuration of both the stored vectors and the queries.
CONFIG = "english"

#: Most distinct words used from one query; a pasted wall of text keeps its topic in the first.
MAX_TERMS = 32

# PostgreSQL refuses a lexeme of 2 KiB or more in a query; such a "word" is
# noise (a hash, a minified line), never what someone searches for.
_MAX_WORD_BYTES = 2000

# \w is Unicode-aware: letters and digits of any script, and "_".
_WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """``text`` without accents, case-folded: "Crème Brûlée" → "creme brulee"."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    # NUL cannot be stored in PostgreSQL text; it separates words at most.
    return unicodedata.normalize("NFC", bare).casefold().replace("\x00", " ")


def stored_words(text: str) -> str:
    """``text`` folded and cut into the word tokens a query is cut into, for ``to_tsvector``.

    PostgreSQL's parser keeps ``taxcalc.charge.retry`` or ``src/app/main.py``
    as one word (a host, a file), while :func:`words` cuts a query at every
    character that is not a letter, digit or ``_``: stored the parser's way,
    a query could never match such a word nor its parts.

    >>> stored_words("Retry in taxcalc.charge.retry (see src/app/main.py)")
    'retry in taxcalc charge retry see src app main py'
    """
    return " ".join(_WORD.findall(fold(text)))


def words(query: str, max_terms: int = MAX_TERMS) -> list[str]:
    """The distinct folded words of ``query``, in order, at most ``max_terms``.

    >>> words('Tabs "vs" spaces -- NEAR(x) TABS')
    ['tabs', 'vs', 'spaces', 'near', 'x']
    """
    found: dict[str, None] = {}
    for word in _WORD.findall(fold(query)):
        if len(word.encode()) < _MAX_WORD_BYTES:
            found.setdefault(word)
            if len(found) >= max_terms:
                break
    return list(found)


def tsquery(words: list[str]) -> str | None:
    """A ``to_tsquery`` text matching any of ``words``; None when there are none.

    >>> tsquery(["tabs", "near"])
    "'tabs' | 'near'"
    """
    return " | ".join(f"'{word}'" for word in words) or None


def storable(value: str, what: str) -> str:
    """``value`` if PostgreSQL text can hold it; it cannot hold NUL, which SQLite keeps.

    :raises InvalidInputError: ``value`` holds a NUL character.
    """
    if "\x00" in value:
        raise InvalidInputError(
            f"{what} holds a NUL character (\\x00), which PostgreSQL cannot store; remove it"
        )
    return value
