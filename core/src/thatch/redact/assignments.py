"""The ``NAME=value`` rule: assignments of secret-looking names, and its judgement.

A value is redacted when its name reads as a secret's name (``API_KEY`` yes;
``TOKEN_LIMIT``, ``tokenizer`` no: :func:`_judge_name`) and the value looks
like a secret rather than a placeholder, a literal or a piece of code
(:func:`_is_secret_value`). It is the last, lowest-priority rule: a provider
token found by :mod:`thatch.redact.tokens` wins over it.
"""

from __future__ import annotations

import functools
import re

from thatch.redact.common import (
    DIGIT,
    MARKER_PREFIX,
    NAME_WORD,
    Hit,
    after_escape,
    is_placeholder,
)

__all__ = ["secret_assignments"]

# ---------------------------------------------------------------------------
# Assignments of secret-looking names: NAME=value, NAME: value, "name": "value",
# export NAME="value", name = 'value', ?token=value&... The regex is anchored
# on a keyword inside the name; the whole name is then read backwards and
# judged word by word in Python (so "tokenizer" or "author" do not count).
# The regex runs on the lowercase copy; values are read from the original.

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_MAX_NAME = 64

# Everything after the keyword; one regex per keyword so each starts with a
# literal and the engine can jump between candidates.
_AFTER_KEYWORD = r"""
    (?P<rest>[a-z0-9_.-]{0,64}+)            # rest of the name
    (?P<close>\\?["'`])?\]?                 # closing quote of "name" or name"]
    [ \t]*+
    (?::=|=>|={1,3}|:(?!//))(?![:=])        # =, :, :=, ==, =>; not "::", "://"
    [ \t]*+
    (?:
        \\"(?P<escaped>[^"\\\r\n]*+)\\"      # JSON inside a JSON string
      | "(?P<double>[^"\\\r\n]*+(?:\\.[^"\\\r\n]*+)*+)"
      | '(?P<single>[^'\\\r\n]*+(?:\\.[^'\\\r\n]*+)*+)'
      | `(?P<backtick>[^`\r\n]*+)`
      | (?P<bare>[^\s"'`,;&)\]}\\]++)
    )
"""
_ASSIGNMENTS = tuple(
    re.compile(keyword + _AFTER_KEYWORD, re.VERBOSE)
    for keyword in ("pass", "pwd", "secret", "token", "auth", "cred", "key")
)

# ---------------------------------------------------------------------------
# Names: which words make a name a secret's name, and which make it only
# describe one (a limit, a type, a file...).

_SECRET_WORDS = frozenset(
    {
        "auth",
        "authorization",
        "credential",
        "credentials",
        "creds",
        "pass",
        "passphrase",
        "passwd",
        "password",
        "passwords",
        "pwd",
        "secret",
        "secrets",
        "token",
    }
)
# A single lowercase word ending like this is a secret name: "githubtoken".
_SECRET_SUFFIXES = (
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "credentials",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
    "sessionkey",
    "signingkey",
)
# "<word> key" is a secret name for these words: API_KEY, accessKey, ...
_KEY_QUALIFIERS = frozenset(
    {
        "access",
        "account",  # Azure AccountKey
        "api",
        "app",  # Datadog DD_APP_KEY, Laravel APP_KEY
        "application",  # Datadog DD-APPLICATION-KEY
        "auth",
        "encryption",
        "master",
        "private",
        "secret",
        "session",
        "signing",
    }
)
# A name holding one of these words describes a secret, it is not one:
# TOKEN_LIMIT, password_min_length, token_type, SECRET_NAME, AUTH_HEADER...
_NOT_SECRET_WORDS = frozenset(
    {
        "age",
        "algo",
        "at",
        "algorithm",
        "budget",
        "cmd",
        "command",
        "count",
        "counts",
        "created",
        "date",
        "description",
        "dir",
        "directory",
        "encoding",
        "endpoint",
        "env",
        "error",
        "expiration",
        "expire",
        "expires",
        "expiry",
        "field",
        "fields",
        "file",
        "filename",
        "files",
        "format",
        "header",
        "help",
        "helper",
        "hint",
        "host",
        "ids",
        "idx",
        "index",
        "issued",
        "kind",
        "label",
        "len",
        "length",
        "lifetime",
        "limit",
        "limits",
        "max",
        "message",
        "method",
        "min",
        "mode",
        "msg",
        "name",
        "names",
        "offset",
        "path",
        "pattern",
        "placeholder",
        "policy",
        "port",
        "prefix",
        "prompt",
        "provider",
        "regex",
        "reset",
        "scope",
        "scopes",
        "server",
        "size",
        "sock",
        "socket",
        "str",
        "suffix",
        "text",
        "time",
        "timeout",
        "timestamp",
        "ttl",
        "type",
        "updated",
        "uri",
        "url",
        "usage",
    }
)
# Shell variables that are directories, not passwords.
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})

# A name ending in one of these words names an identifier of a secret (a key
# id, a token's hash), and ids, hashes and uuids are not secrets:
# api_key_id: 123456789012, token_id = <uuid>, last_token_sha=<git sha>. A
# password's or a secret's "id" may be one (Vault's secret_id), so those keep
# being redacted.
_ID_WORDS = frozenset({"checksum", "digest", "fingerprint", "guid", "hash", "id", "sha", "uuid"})
_ID_EXCEPT = frozenset({"pass", "passphrase", "passwd", "password", "pwd", "secret"})
_ID_VALUE = re.compile(
    r"[0-9]{1,40}|[0-9a-fA-F]{7,64}"
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


@functools.lru_cache(maxsize=4096)
def _names_an_id(name: str) -> bool:
    """Whether ``name`` reads as the id or hash of a secret (``token_id``, ``key_sha``)."""
    words = [word.lower() for word in NAME_WORD.findall(name)]
    while words and words[-1].isdigit():  # key_sha256
        words.pop()
    return len(words) > 1 and words[-1] in _ID_WORDS and _ID_EXCEPT.isdisjoint(words)


@functools.lru_cache(maxsize=4096)
def _judge_name(name: str) -> str | None:
    """Return the kind a value of ``name`` would be, or None if not a secret name.

    Cached: code repeats the same few names (``key``, ``token``...) often.
    """
    if name in _NOT_SECRET_NAMES:
        return None
    words = [word.lower() for word in NAME_WORD.findall(name)]
    if not words or any(word in _NOT_SECRET_WORDS for word in words):
        return None
    for index, word in enumerate(words):
        if (
            word in _SECRET_WORDS
            or word.endswith(_SECRET_SUFFIXES)
            or (word == "key" and index > 0 and words[index - 1] in _KEY_QUALIFIERS)
        ):
            break
    else:
        return None
    if ("aws" in words and "secret" in words) or "secretaccesskey" in "".join(words):
        return "aws-secret-access-key"
    return "secret-assignment"


# ---------------------------------------------------------------------------
# Values: a secret name is often followed by something that is not a secret,
# such as a literal, a short word, or code (a call, a variable, a type).

_SHORT_NUMBER = re.compile(r"[+-]?[0-9]{1,8}(?:\.[0-9]{1,8})?")
_LITERALS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "none", "nil", "~"})
_SHORT_WORD = re.compile(r"[A-Za-z]{1,24}")
_HEX_COLOR = re.compile(r"#[0-9A-Fa-f]{3,8}")
_PLAIN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_ATTRIBUTE_CHAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# Type names and algorithm ids that hold a digit: "token: int32", "alg: HS256".
_TYPE_LIKE = re.compile(
    r"u?int[0-9]+|b?float[0-9]+|utf-?[0-9]+|base[0-9]+|sha-?[0-9]+|md5"
    r"|[hre]s[0-9]{3}|oauth[0-9]?|v[0-9]+",
    re.IGNORECASE,
)
_CODE_CHARS = frozenset("()[]{}<>")
_CODE_STARTS = frozenset("$%&*!|>")
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+]{40}")


def _is_secret_value(value: str, quoted: bool) -> bool:
    """Whether ``value``, assigned to a secret name, is itself a secret.

    ``quoted`` values ("..." or '...') are data; bare and `backticked` ones are
    judged more strictly, as they are often code.
    """
    if is_placeholder(value):
        return False
    stripped = value.strip()
    if not quoted:
        stripped = stripped.rstrip(":")  # the end of "if token == other:"
    if stripped.lower() in _LITERALS or _SHORT_NUMBER.fullmatch(stripped):
        return False
    if not any(char.isalnum() for char in stripped):
        return False
    if _SHORT_WORD.fullmatch(stripped) or _HEX_COLOR.fullmatch(stripped):
        return False  # a word ("bold", "postgres") or a colour, quoted or not
    if quoted:
        # Four or more words are a sentence (a help text), not a secret.
        return len(stripped.split()) < 4
    # An unquoted (or `backticked`) value is often code: a call, a variable, a
    # type annotation.
    if any(char.isspace() for char in stripped):
        return False
    if stripped[0] in _CODE_STARTS or any(char in _CODE_CHARS for char in stripped):
        return False
    if _ATTRIBUTE_CHAIN.fullmatch(stripped) or _TYPE_LIKE.fullmatch(stripped):
        return False
    # A plain word without a digit reads as a name: "str", "pw", "re-exchanging".
    return not (_PLAIN_WORD.fullmatch(stripped) and not DIGIT.search(stripped))


# ---------------------------------------------------------------------------
# The rule.


def secret_assignments(text: str, folded: str) -> list[Hit]:
    """Find the values assigned to secret names."""
    found: dict[int, Hit] = {}  # by value start: "secret_key" has two keywords
    for pattern in _ASSIGNMENTS:
        for match in pattern.finditer(folded):
            hit = _assignment_hit(text, match)
            if hit is not None:
                found[hit[0]] = hit
    return [found[start] for start in sorted(found)]


def _assignment_hit(text: str, match: re.Match[str]) -> Hit | None:
    """Judge one keyword match: read the whole name backwards, then the value."""
    name_start = match.start()
    floor = max(0, name_start - _MAX_NAME)
    # In "\nPWD=" (JSON) the "n" belongs to the escaped line break, not the name.
    while (
        name_start > floor
        and text[name_start - 1] in _NAME_CHARS
        and not after_escape(text, name_start)
    ):
        name_start -= 1
    kind = _judge_name(text[name_start : match.end("rest")])
    if kind is None or text.endswith(MARKER_PREFIX, 0, name_start):
        return None  # not a secret name, or the kind in "[REDACTED:github-token]"
    group = match.lastgroup or "bare"  # the value alternative that matched
    start, end = match.span(group)
    value = text[start:end]
    if MARKER_PREFIX in value:
        return None
    if _ID_VALUE.fullmatch(value) and _names_an_id(text[name_start : match.end("rest")]):
        return None
    if (
        group != "bare"
        and match["close"] is None
        and name_start > 0
        and text[name_start - 1] == text[start - 1]
    ):
        return None  # 'password:', 'x' or `Authorization:` (...): the quote ends a string
    if kind == "aws-secret-access-key" and _AWS_SECRET_VALUE.fullmatch(value):
        return (start, end, kind)
    if _is_secret_value(value, quoted=group not in ("bare", "backtick")):
        return (start, end, "secret-assignment")
    return None
