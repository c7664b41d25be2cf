"""Secret redaction: replace credentials in text by ``[REDACTED:<kind>]``.

thatch keeps what it remembers on disk for a long time and feeds it back into
an agent's context in later sessions. A token pasted into a memory, or printed
by a tool the agent ran, would otherwise be copied into the database, into
exports and into every future prompt that recalls it. So every text is passed
through :func:`redact` *before* anything is stored or injected; what is never
written cannot leak later.

Design notes:

* Only the standard library and attrs; every pattern is compiled once, here.
* Each pattern is anchored on a literal (``ghp_``, ``://``, a keyword...) so
  the regex engine skips most of the text quickly, and every repetition is
  bounded or possessive, so no input makes matching slower than linear.
* Patterns are tried in priority order (private keys, then provider tokens,
  then URL passwords and ``Authorization`` headers, then generic
  ``NAME=value`` assignments). Where two matches overlap, the earlier rule
  wins, so ``GITHUB_TOKEN=ghp_...`` is reported once, as a ``github-token``.
* Redacting is idempotent: a marker never matches any pattern, values that
  already hold a marker are left alone, and :func:`redact` repeats its pass
  until nothing changes (a redaction can unblock a neighbour; see
  ``_MAX_PASSES``), so its own output always comes back unchanged.

The patterns, with example shapes and the rules against false positives, are
documented in ``docs/secrets.md``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

import attrs

__all__ = ["KINDS", "MARKER_PREFIX", "Redaction", "marker", "redact"]

#: Every redacted value becomes ``MARKER_PREFIX + kind + "]"``.
MARKER_PREFIX = "[REDACTED:"

#: Every kind :func:`redact` can report, in the order the rules are tried.
KINDS: tuple[str, ...] = (
    "private-key",
    "aws-access-key-id",
    "github-token",
    "gitlab-token",
    "slack-token",
    "slack-webhook",
    "stripe-key",
    "anthropic-api-key",
    "openai-api-key",
    "google-api-key",
    "npm-token",
    "pypi-token",
    "huggingface-token",
    "jwt",
    "url-password",
    "bearer-token",
    "basic-auth",
    "aws-secret-access-key",
    "secret-assignment",
)


@attrs.frozen
class Redaction:
    """The result of :func:`redact`."""

    #: The input with every secret replaced by ``[REDACTED:<kind>]``.
    text: str
    #: How many secrets were replaced.
    count: int
    #: The kind of each replaced secret, in the order they appear in the text.
    kinds: tuple[str, ...]


def marker(kind: str) -> str:
    """Return the text that replaces a secret of ``kind``."""
    return f"{MARKER_PREFIX}{kind}]"


# A hit is (start, end, kind): text[start:end] is replaced by marker(kind).
_Hit = tuple[int, int, str]
# A rule gets the text and its lowercase copy (same length, same offsets).
_Rule = Callable[[str, str], list[_Hit]]

# A token must not be the tail of a longer word: "task-..." is not "sk-...".
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _starts_word(text: str, start: int) -> bool:
    return start == 0 or text[start - 1] not in _WORD_CHARS


# ---------------------------------------------------------------------------
# Private keys: the whole PEM block, multi-line, also inside a JSON string
# where the line breaks are written "\n". The BEGIN line must be followed by
# key material, so prose that merely names the header is left alone. With no
# END line (a truncated `cat`), the block runs over the lines that look like
# base64 or a "Name: value" header.

_PRIVATE_KEY = re.compile(
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?=(?:[ \t\r\n]|\\[rn])*+(?:[A-Za-z0-9+/=]{16}|[A-Za-z-]{1,32}: ))"
    r"(?:"
    r"[^-]*+(?:-(?!----)[^-]*+)*+-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"|(?:(?:[ \t]*+(?:\r?\n|\\r?\\n)|[ \t]++)"
    r"(?:[A-Za-z0-9+/=]{1,256}+|[A-Za-z-]{1,32}: [^\r\n\\]{1,128}+))*+"
    r")"
)


def _private_keys(text: str, folded: str) -> list[_Hit]:
    if "PRIVATE KEY" not in text:
        return []
    return [(m.start(), m.end(), "private-key") for m in _PRIVATE_KEY.finditer(text)]


# ---------------------------------------------------------------------------
# Provider tokens, recognised by their shape alone. Each regex starts with a
# literal so the engine can jump between candidates; the left word boundary is
# checked in Python (a look-behind first would disable that jump).

_END = r"(?![A-Za-z0-9_-])"
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "aws-access-key-id",
        re.compile(r"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ),
    (
        "github-token",
        re.compile(
            r"gh[pousr]_[A-Za-z0-9]{36,255}" + _END + r"|github_pat_[A-Za-z0-9_]{22,255}" + _END
        ),
    ),
    (
        "gitlab-token",
        re.compile(
            r"gl(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_-]{20,255}(?:\.[A-Za-z0-9_-]{1,64}){0,4}" + _END
        ),
    ),
    ("slack-token", re.compile(r"xox[abeprs]-[A-Za-z0-9-]{10,255}" + _END)),
    (
        "slack-webhook",
        re.compile(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/"
            r"(?P<secret>[A-Za-z0-9_+/-]{8,255})"
        ),
    ),
    ("stripe-key", re.compile(r"sk_(?:live|test)_[A-Za-z0-9]{16,255}" + _END)),
    ("stripe-key", re.compile(r"rk_(?:live|test)_[A-Za-z0-9]{16,255}" + _END)),
    ("anthropic-api-key", re.compile(r"sk-ant-[A-Za-z0-9_-]{20,255}" + _END)),
    (
        "openai-api-key",
        re.compile(
            r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,255}|[A-Za-z0-9]{20,255})" + _END
        ),
    ),
    ("google-api-key", re.compile(r"AIza[A-Za-z0-9_-]{35}" + _END)),
    ("npm-token", re.compile(r"npm_[A-Za-z0-9]{36}" + _END)),
    ("pypi-token", re.compile(r"pypi-AgE[A-Za-z0-9_-]{50,2000}" + _END)),
    ("huggingface-token", re.compile(r"hf_[A-Za-z0-9]{30,255}" + _END)),
    # The look-behind after "eyJ" skips the "eyJ"s inside a longer run, so a
    # run of them is scanned once, not once per "eyJ".
    (
        "jwt",
        re.compile(
            r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+"
        ),
    ),
)


def _shape_rule(kind: str, pattern: re.Pattern[str]) -> _Rule:
    group = "secret" if "secret" in pattern.groupindex else 0

    def rule(text: str, folded: str) -> list[_Hit]:
        hits: list[_Hit] = []
        for match in pattern.finditer(text):
            if group == 0 and not _starts_word(text, match.start()):
                continue
            hits.append((match.start(group), match.end(group), kind))
        return hits

    return rule


# ---------------------------------------------------------------------------
# Placeholders: values that stand for a secret without being one. Used by the
# URL, header and assignment rules (never by the shape rules above: a value
# shaped like a GitHub token is redacted even if it reads "ghp_xxxx...").

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


def _is_placeholder(value: str) -> bool:
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
        word.lower().endswith(_NAMING_WORDS) for word in _NAME_WORD.findall(value)
    )


# ---------------------------------------------------------------------------
# Passwords in URLs: scheme://user:password@host keeps all but the password.
# Anchored on "://"; the scheme is checked in Python. The password may hold
# an unescaped "@": the last "@" before the host ends it.

_URL_USERINFO = re.compile(
    r"://[^\s:/?#@\[\]\"'<>]{0,256}+:(?P<password>[^\s/?#\"'<>]{1,256})@(?=[A-Za-z0-9\[_])"
)


def _url_passwords(text: str, folded: str) -> list[_Hit]:
    hits: list[_Hit] = []
    for match in _URL_USERINFO.finditer(text):
        start = match.start()
        if start == 0 or not text[start - 1].isalnum():
            continue  # no scheme before "://"
        if _is_placeholder(match["password"]):
            continue
        hits.append((match.start("password"), match.end("password"), "url-password"))
    return hits


# ---------------------------------------------------------------------------
# Authorization headers. After "Authorization:" a Bearer, Basic or Token
# credential of 8+ characters is redacted; a bare "Bearer <token>" elsewhere
# needs 16+ characters and a digit, so prose such as "bearer authentication"
# stays. Both regexes run on the lowercase copy and start with a literal.

_AUTH_HEADER = re.compile(
    r"authorization(?:\\?[\"'])?[ \t]*+[:=][ \t]*+(?:\\?[\"'])?[ \t]*+"
    r"(?P<scheme>bearer|basic|token)[ \t]++(?P<cred>[a-z0-9._~+/=-]{8,}+)"
)
_BEARER = re.compile(r"bearer[ \t]++(?P<cred>[a-z0-9._~+/=-]{16,}+)")
_DIGIT = re.compile(r"[0-9]")


def _authorization(text: str, folded: str) -> list[_Hit]:
    found: dict[int, _Hit] = {}
    for match in _AUTH_HEADER.finditer(folded):
        start, end = match.span("cred")
        if not _is_placeholder(text[start:end]):
            kind = "basic-auth" if match["scheme"] == "basic" else "bearer-token"
            found[start] = (start, end, kind)
    for match in _BEARER.finditer(folded):
        start, end = match.span("cred")
        cred = text[start:end]
        if (
            start not in found
            and _starts_word(folded, match.start())
            and _DIGIT.search(cred)
            and not _is_placeholder(cred)
        ):
            found[start] = (start, end, "bearer-token")
    return [found[start] for start in sorted(found)]


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

# Words of a name: snake, kebab, dotted and camelCase ("apiKey", "APIKey").
_NAME_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
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
    {"api", "access", "private", "secret", "session", "signing", "encryption", "master", "auth"}
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


@functools.lru_cache(maxsize=4096)
def _judge_name(name: str) -> str | None:
    """Return the kind a value of ``name`` would be, or None if not a secret name.

    Cached: code repeats the same few names (``key``, ``token``...) often.
    """
    if name in _NOT_SECRET_NAMES:
        return None
    words = [word.lower() for word in _NAME_WORD.findall(name)]
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


def _is_secret_value(value: str, quoted: bool) -> bool:
    if _is_placeholder(value):
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
    return not (_PLAIN_WORD.fullmatch(stripped) and not _DIGIT.search(stripped))


def _assignments(text: str, folded: str) -> list[_Hit]:
    found: dict[int, _Hit] = {}  # by value start: "secret_key" has two keywords
    for pattern in _ASSIGNMENTS:
        for match in pattern.finditer(folded):
            hit = _assignment_hit(text, match)
            if hit is not None:
                found[hit[0]] = hit
    return [found[start] for start in sorted(found)]


def _assignment_hit(text: str, match: re.Match[str]) -> _Hit | None:
    name_start = match.start()
    floor = max(0, name_start - _MAX_NAME)
    while name_start > floor and text[name_start - 1] in _NAME_CHARS:
        name_start -= 1
    kind = _judge_name(text[name_start : match.end("rest")])
    if kind is None or text.endswith(MARKER_PREFIX, 0, name_start):
        return None  # not a secret name, or the kind in "[REDACTED:github-token]"
    group = match.lastgroup or "bare"  # the value alternative that matched
    start, end = match.span(group)
    value = text[start:end]
    if MARKER_PREFIX in value:
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


# ---------------------------------------------------------------------------

_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}

_RULES: tuple[_Rule, ...] = (
    _private_keys,
    *(_shape_rule(kind, pattern) for kind, pattern in _SHAPES),
    _url_passwords,
    _authorization,
    _assignments,
)


def _merge(accepted: list[_Hit], new: Iterable[_Hit]) -> list[_Hit]:
    """Add the ``new`` hits that overlap no ``accepted`` hit; both are sorted."""
    merged: list[_Hit] = []
    old = iter(accepted)
    pending = next(old, None)
    last_end = 0
    for hit in new:
        start, end, _ = hit
        while pending is not None and pending[1] <= start:
            merged.append(pending)
            last_end = pending[1]
            pending = next(old, None)
        if start < last_end or (pending is not None and pending[0] < end):
            continue  # overlaps an earlier, higher-priority hit
        merged.append(hit)
        last_end = end
    if pending is not None:
        merged.append(pending)
        merged.extend(old)
    return merged


def _find(text: str) -> list[_Hit]:
    """One pass of every rule over ``text``: sorted, non-overlapping hits."""
    folded = text.lower()
    if len(folded) != len(text):  # "İ" lowercases to two characters
        folded = text.translate(_ASCII_LOWER)
    hits: list[_Hit] = []
    for rule in _RULES:
        found = rule(text, folded)
        if found:
            hits = _merge(hits, found) if hits else found
    return hits


def _apply(
    text: str, hits: list[_Hit], placed: list[tuple[int, str]]
) -> tuple[str, list[tuple[int, str]]]:
    """Replace ``hits`` in ``text``; move the ``placed`` markers' positions along.

    ``placed`` holds (position, kind) of the markers earlier passes inserted.
    """
    parts: list[str] = []
    moved: list[tuple[int, str]] = []
    earlier = iter(placed)
    pending = next(earlier, None)
    position = shift = 0
    for start, end, kind in hits:
        while pending is not None and pending[0] < end:
            at, old_kind = pending
            # A marker swallowed by a new hit (never seen in practice) keeps its
            # count and takes the new hit's position.
            inside = at + len(marker(old_kind)) > start
            moved.append(((start if inside else at) + shift, old_kind))
            pending = next(earlier, None)
        new_marker = marker(kind)
        parts.append(text[position:start])
        parts.append(new_marker)
        moved.append((start + shift, kind))
        shift += len(new_marker) - (end - start)
        position = end
    parts.append(text[position:])
    while pending is not None:
        moved.append((pending[0] + shift, pending[1]))
        pending = next(earlier, None)
    return "".join(parts), moved


# Redacting can make a neighbour match on a second pass: in "sk-...-----BEGIN
# PRIVATE KEY-----" the key's right edge is the PEM block's dash, so the key is
# seen only once the block is a marker; and a value rejected because it
# overlapped a provider token may have hidden another assignment. So passes
# repeat until one finds nothing. A second pass finds something only in such
# run-together text and a third has never been needed (fuzzed); the bound keeps
# the time linear whatever the input.
_MAX_PASSES = 4


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:<kind>]``.

    Runs in time linear in ``len(text)``. Idempotent: ``redact(redact(t).text)``
    changes nothing and counts 0. Markers already in ``text`` are not counted.
    """
    placed: list[tuple[int, str]] = []
    for _ in range(_MAX_PASSES):
        hits = _find(text)
        if not hits:
            break
        text, placed = _apply(text, hits, placed)
    return Redaction(text=text, count=len(placed), kinds=tuple(kind for _, kind in placed))
