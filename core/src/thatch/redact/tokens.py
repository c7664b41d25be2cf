"""Rules that know a secret by its shape, or by its place in a URL or a header.

PEM private keys, provider tokens (AWS, GitHub, Slack, OpenAI...), JWTs,
passwords in URLs and ``Authorization`` credentials. Each rule is a
:data:`~thatch.redact.common.Rule`; the engine in :mod:`thatch.redact` runs
them, in priority order, before the ``NAME=value`` rule, so a token assigned to
a name is reported by its provider (``github-token``), not as an assignment.
"""

from __future__ import annotations

import base64
import re

from thatch.redact.common import DIGIT, Hit, Rule, is_placeholder, starts_word

__all__ = [
    "SHAPE_RULES",
    "authorization",
    "discord_tokens",
    "private_keys",
    "sas_signatures",
    "telegram_tokens",
    "url_passwords",
]

# ---------------------------------------------------------------------------
# Private keys: the whole PEM block, multi-line, also inside a JSON string
# where the line breaks are written "\n" (or "\\n" once that JSON is itself
# quoted, as in a tool's input). The BEGIN line must be followed by key
# material, so prose that merely names the header is left alone. With no END
# line (a truncated `cat`, a cut tool output) nothing after BEGIN can be told
# apart from key material, so the block runs to the closing quote of the
# string it is in, or else to the end of the text.

_PEM_LABEL = r"[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PRIVATE_KEY = re.compile(
    r"-----BEGIN"
    + _PEM_LABEL
    + r"(?=(?:[ \t\r\n]|\\{1,8}[rn])*+(?:[A-Za-z0-9+/=]{16}|[A-Za-z-]{1,32}: ))"
    r"(?:"
    r"[^-]*+(?:-(?!----)[^-]*+)*+-----END"
    + _PEM_LABEL
    # In a string (the line break is an escape): up to the backslashes, if
    # any, that escape its closing quote, so the JSON stays valid.
    + r"|(?=[ \t]*+\\)(?:[^\"\\]++|\\++(?!\"))*+"
    r"|[\s\S]*+"
    r")"
)


def private_keys(text: str, folded: str) -> list[Hit]:
    """Find PEM private key blocks."""
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
    ("sendgrid-api-key", re.compile(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _END)),
    # Twilio API key SIDs; account SIDs ("AC...") are ids, not keys.
    ("twilio-api-key", re.compile(r"SK[0-9a-fA-F]{32}" + _END)),
    # Mailgun keys are base36: a digit and a letter past "f" keep "key-<md5>" out.
    (
        "mailgun-api-key",
        re.compile(r"key-(?=[a-z]{0,31}[0-9])(?=[0-9a-f]{0,31}[g-z])[0-9a-z]{32}" + _END),
    ),
    ("shopify-token", re.compile(r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}" + _END)),
    ("digitalocean-token", re.compile(r"do[opr]_v1_[a-f0-9]{64}" + _END)),
    ("databricks-token", re.compile(r"dapi[a-f0-9]{32}(?:-[0-9]{1,3})?" + _END)),
    # The key of an Azure storage connection string (the names before it stay).
    (
        "azure-storage-key",
        re.compile(r"AccountKey=(?P<secret>[A-Za-z0-9+/]{40,120}={0,2})(?![A-Za-z0-9+/=])"),
    ),
    # The look-behind after "eyJ" skips the "eyJ"s inside a longer run, so a
    # run of them is scanned once, not once per "eyJ".
    (
        "jwt",
        re.compile(
            r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+"
        ),
    ),
)


def _shape_rule(kind: str, pattern: re.Pattern[str]) -> Rule:
    # A pattern with a "secret" group redacts only that group (the Slack
    # webhook keeps its host); others redact the whole match.
    group = "secret" if "secret" in pattern.groupindex else 0

    def rule(text: str, folded: str) -> list[Hit]:
        hits: list[Hit] = []
        for match in pattern.finditer(text):
            if group == 0 and not starts_word(text, match.start()):
                continue
            hits.append((match.start(group), match.end(group), kind))
        return hits

    return rule


#: One rule per provider shape, in the order of ``_SHAPES`` (their priority).
SHAPE_RULES: tuple[Rule, ...] = tuple(_shape_rule(kind, pattern) for kind, pattern in _SHAPES)


# ---------------------------------------------------------------------------
# Shapes that need a check in Python: too plain for a regex alone.

# Discord bot token: base64url(user id).<6-7>.<27+>; the first part must
# decode to the digits of a user id, which keeps other dotted base64 out. An
# id's first digit encodes to "M", "N" or "O"; the look-behind after it does
# the left word edge (see starts_word) without losing the jump between
# candidates.
_DISCORD = re.compile(
    r"[MNO](?:(?<![A-Za-z0-9_-][MNO])|(?<=\\[nrt][MNO]))(?P<id>[A-Za-z0-9_-]{22,27}+)"
    r"\.[A-Za-z0-9_-]{6,7}+\.[A-Za-z0-9_-]{27,45}+" + _END
)
_USER_ID = re.compile(rb"[1-9][0-9]{16,19}")


def discord_tokens(text: str, folded: str) -> list[Hit]:
    """Find Discord bot tokens."""
    hits: list[Hit] = []
    for match in _DISCORD.finditer(text):
        head = match.group()[: match.end("id") - match.start()]
        try:
            decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        except ValueError:  # binascii.Error: bad padding
            continue
        if _USER_ID.fullmatch(decoded):
            hits.append((match.start(), match.end(), "discord-bot-token"))
    return hits


# Telegram bot token: <bot id>:AA<33>. Anchored on ":AA"; the 8-10 digit bot
# id before it is read in Python, also after "/bot" in an API URL.
_TELEGRAM = re.compile(r":AA[A-Za-z0-9_-]{33}" + _END)


def telegram_tokens(text: str, folded: str) -> list[Hit]:
    """Find Telegram bot tokens, bot id included."""
    hits: list[Hit] = []
    for match in _TELEGRAM.finditer(text):
        floor = max(0, match.start() - 11)
        start = match.start()
        while start > floor and text[start - 1].isascii() and text[start - 1].isdigit():
            start -= 1
        if not 8 <= match.start() - start <= 10:
            continue
        if starts_word(text, start) or text.endswith("/bot", 0, start):
            hits.append((start, match.end(), "telegram-bot-token"))
    return hits


# Azure shared access signature: the "sig" parameter of a SAS URL or
# connection string (base64, often percent-encoded). The other parameters
# (expiry, permissions) stay.
_SAS_SIGNATURE = re.compile(r"sig=(?P<sig>[A-Za-z0-9%+/=_-]{20,200}+)")


def sas_signatures(text: str, folded: str) -> list[Hit]:
    """Find the signature of Azure SAS tokens."""
    hits: list[Hit] = []
    for match in _SAS_SIGNATURE.finditer(text):
        start = match.start()
        if start > 0 and text[start - 1] not in "?&;":
            continue  # "xsig=" is another parameter
        if not is_placeholder(match["sig"]):
            hits.append((match.start("sig"), match.end("sig"), "azure-sas-signature"))
    return hits


# ---------------------------------------------------------------------------
# Passwords in URLs: scheme://user:password@host keeps all but the password.
# Anchored on "://"; the scheme is checked in Python. The password may hold
# an unescaped "@": the last "@" before the host ends it.

_URL_USERINFO = re.compile(
    r"://[^\s:/?#@\[\]\"'<>]{0,256}+:(?P<password>[^\s/?#\"'<>]{1,256})@(?=[A-Za-z0-9\[_])"
)


def url_passwords(text: str, folded: str) -> list[Hit]:
    """Find the password of ``scheme://user:password@host``."""
    hits: list[Hit] = []
    for match in _URL_USERINFO.finditer(text):
        start = match.start()
        if start == 0 or not text[start - 1].isalnum():
            continue  # no scheme before "://"
        if is_placeholder(match["password"]):
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


def authorization(text: str, folded: str) -> list[Hit]:
    """Find ``Authorization:`` credentials and bare ``Bearer`` tokens."""
    found: dict[int, Hit] = {}
    for match in _AUTH_HEADER.finditer(folded):
        start, end = match.span("cred")
        if not is_placeholder(text[start:end]):
            kind = "basic-auth" if match["scheme"] == "basic" else "bearer-token"
            found[start] = (start, end, kind)
    for match in _BEARER.finditer(folded):
        start, end = match.span("cred")
        cred = text[start:end]
        if (
            start not in found
            and starts_word(folded, match.start())
            and DIGIT.search(cred)
            and not is_placeholder(cred)
        ):
            found[start] = (start, end, "bearer-token")
    return [found[start] for start in sorted(found)]
