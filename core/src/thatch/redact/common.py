"""What the redaction rules share: the hit type, word edges, the placeholder test.

The rule modules (:mod:`thatch.redact.tokens`, :mod:`thatch.redact.assignments`)
and the engine in :mod:`thatch.redact` import from here, and this module imports
none of them, so there is no import cycle. ``MARKER_PREFIX`` is defined here for
the same reason (the rules must recognise markers); :mod:`thatch.redact`
re-exports it as part of the public API.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: Every redacted value becomes ``MARKER_PREFIX + kind + "]"``.
MARKER_PREFIX = "[REDACTED:"

# A hit is (start, end, kind): text[start:end] is replaced by marker(kind).
Hit = tuple[int, int, str]
# A rule gets the text and its lowercase copy (same length, same offsets).
Rule = Callable[[str, str], list[Hit]]

# A token must not be the tail of a longer word: "task-..." is not "sk-...".
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def starts_word(text: str, start: int) -> bool:
    """Whether ``text[start]`` begins a word (no word character just before it).

    A line break or tab written as an escape (``\\n`` in JSON: tool output
    is queued as JSON) ends the word before it too.
    """
    return start == 0 or text[start - 1] not in _WORD_CHARS or after_escape(text, start)


def after_escape(text: str, start: int) -> bool:
    """Whether ``text[start]`` follows an escaped line break or tab (``\\n``, ``\\r``, ``\\t``)."""
    return start >= 2 and text[start - 1] in "nrt" and text[start - 2] == "\\"


# Words of a name: snake, kebab, dotted and camelCase ("apiKey", "APIKey").
NAME_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
DIGIT = re.compile(r"[0-9]")


# ---------------------------------------------------------------------------
# Placeholders: values that stand for a secret without being one. Used by the
# URL, header and assignment rules (never by the shape rules: a value shaped
# like a GitHub token is redacted even if it reads "ghp_xxxx...").

_PLACEHOLDER = re.compile(
    r"""
    (?:
        <[^<>]*>                                 # <your-token>
      | \$\{[^{}]*\}                             # ${VAR}, ${VAR:-default}
      | \$\([^()]*\)                             # $(command)
      | \$[A-Za-z_][A-Za-z0-9_]*                 # $VAR
      | %[A-Za-z_][A-Za-z0-9_]*%                 # %VAR%
      | %\([A-Za-z_][A-Za-z0-9_]*\)[sdr]         # %(name)s
      | \{\{.*\}\}                               # {{ template }}
      | \{[A-Za-z_][A-Za-z0-9_.]*\}              # {name}
      | \#\{[^{}]*\}                             # #{ruby}
      | \[[^\[\]]*\]                             # [MASK], [your token]
      | (?:your|insert|enter|replace|put|paste)[-_ .].*   # your-api-key
      | .*[-_ .](?:here|goes[-_ .]here)          # token_here
      | (.)\1{2,}                                # xxx, ****, 000
      | [x*•.…_-]+                               # x-x-x, ..., ***
    )
    """,
    re.VERBOSE | re.IGNORECASE | re.DOTALL,
)
_PLACEHOLDER_WORDS = frozenset(
    {
        "api-key",
        "api_key",
        "apikey",
        "bar",
        "baz",
        "change-me",
        "change_me",
        "changeit",
        "changeme",
        "dummy",
        "empty",
        "example",
        "fake",
        "fixme",
        "foo",
        "foobar",
        "hidden",
        "masked",
        "nil",
        "none",
        "not-set",
        "notset",
        "null",
        "pass",
        "passwd",
        "password",
        "placeholder",
        "pwd",
        "qux",
        "redacted",
        "removed",
        "replace-me",
        "replace_me",
        "replaceme",
        "sample",
        "secret",
        "tbd",
        "test",
        "todo",
        "token",
        "undefined",
        "unset",
    }
)


# A template slot inside a longer value: "Basic <username>:<password>",
# "Bearer {token}", "Bearer ${TOKEN}", "{{ secret }}-suffix".
_SLOT = re.compile(r"<[A-Za-z_][^<>]*>|\{\{[^{}]*\}\}|\$?\{[A-Za-z_][A-Za-z0-9_.:-]*\}")
# Letters and separators only, e.g. "my_token", "fal-ai-api-key".
_WORDY = re.compile(r"[A-Za-z][A-Za-z_ .-]*")
# A wordy value with a word ending like this names a secret, it is not one.
_NAMING_WORDS = (
    "auth",
    "authorization",
    "credential",
    "credentials",
    "creds",
    "key",
    "pass",
    "passwd",
    "password",
    "pwd",
    "secret",
    "token",
)


def is_placeholder(value: str) -> bool:
    """Whether ``value`` stands for a secret (``<token>``, ``$VAR``, ``xxx``...)."""
    value = value.strip()
    if (
        not value
        or MARKER_PREFIX in value
        or value.lower() in _PLACEHOLDER_WORDS
        or "..." in value  # truncated in an example: "sk-...", "hf_..."
        or "…" in value
        or "***" in value  # already masked: "hf_***"
        or _SLOT.search(value)
        or _PLACEHOLDER.fullmatch(value)
    ):
        return True
    # "my_token", "current_token", "secret_value": a name, not a secret.
    return _WORDY.fullmatch(value) is not None and any(
        word.lower().endswith(_NAMING_WORDS) for word in NAME_WORD.findall(value)
    )
