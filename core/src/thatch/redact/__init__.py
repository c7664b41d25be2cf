"""Secret redaction: replace credentials in text by ``[REDACTED:<kind>]``.

thatch keeps what it remembers on disk for a long time and feeds it back into
an agent's context in later sessions. A token pasted into a memory, or printed
by a tool the agent ran, would otherwise be copied into the database, into
exports and into every future prompt that recalls it. So every text is passed
through :func:`redact` *before* anything is stored or injected; what is never
written cannot leak later.

Design notes:

* Only the standard library and attrs; every pattern is compiled once, at
  import.
* Each pattern is anchored on a literal (``ghp_``, ``://``, a keyword...; a
  Discord token on one of three letters) so the regex engine skips most of
  the text quickly, and every repetition is bounded or possessive, so no
  input makes matching slower than linear.
* Patterns are tried in priority order (private keys, then provider tokens,
  then URL passwords and ``Authorization`` headers, then passwords given to
  commands and in ``.netrc``, then generic ``NAME=value`` assignments).
  Where two matches overlap, the earlier rule wins, so
  ``GITHUB_TOKEN=ghp_...`` is reported once, as a ``github-token``.
* Redacting is idempotent: a marker never matches any pattern, values that
  already hold a marker are left alone, and :func:`redact` repeats its pass
  until nothing changes (a redaction can unblock a neighbour; see
  ``_MAX_PASSES``), so its own output always comes back unchanged.

The patterns, with example shapes and the rules against false positives, are
documented in ``docs/secrets.md``.

Layout: this module holds the public API and the engine that runs the rules,
merges their hits and replaces them; the rules live in
:mod:`thatch.redact.tokens` (key, token, URL and header shapes),
:mod:`thatch.redact.commands` (``mysql -p``, ``curl -u``, ``.netrc``) and
:mod:`thatch.redact.assignments` (``NAME=value``); what both share, including
the placeholder test, is in :mod:`thatch.redact.common`.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from thatch.redact.assignments import secret_assignments
from thatch.redact.commands import command_passwords, netrc_passwords
from thatch.redact.common import MARKER_PREFIX, Hit, Rule
from thatch.redact.tokens import (
    SHAPE_RULES,
    authorization,
    discord_tokens,
    private_keys,
    sas_signatures,
    telegram_tokens,
    url_passwords,
)

__all__ = ["KINDS", "MARKER_PREFIX", "Redaction", "marker", "redact"]

# MARKER_PREFIX, imported above, is defined in .common with the rules, which
# must recognise markers, so that they need not import this module (a cycle).

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
    "sendgrid-api-key",
    "twilio-api-key",
    "mailgun-api-key",
    "shopify-token",
    "digitalocean-token",
    "databricks-token",
    "azure-storage-key",
    "jwt",
    "discord-bot-token",
    "telegram-bot-token",
    "azure-sas-signature",
    "url-password",
    "bearer-token",
    "basic-auth",
    "cli-password",
    "netrc-password",
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


# ---------------------------------------------------------------------------
# The engine: run every rule, keep the non-overlapping hits, replace them, and
# repeat until a pass finds nothing.

# Lowercases ASCII only, keeping offsets, for text that str.lower() lengthens.
_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}

# Every rule, in priority order (the order of KINDS): where hits overlap, the
# earlier rule's hit is kept.
_RULES: tuple[Rule, ...] = (
    private_keys,
    *SHAPE_RULES,
    discord_tokens,
    telegram_tokens,
    sas_signatures,
    url_passwords,
    authorization,
    command_passwords,
    netrc_passwords,
    secret_assignments,
)


def _merge(accepted: list[Hit], new: Iterable[Hit]) -> list[Hit]:
    """Add the ``new`` hits that overlap no ``accepted`` hit; both are sorted."""
    merged: list[Hit] = []
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


def _find(text: str) -> list[Hit]:
    """One pass of every rule over ``text``: sorted, non-overlapping hits."""
    folded = text.lower()
    if len(folded) != len(text):  # "İ" lowercases to two characters
        folded = text.translate(_ASCII_LOWER)
    hits: list[Hit] = []
    for rule in _RULES:
        found = rule(text, folded)
        if found:
            hits = _merge(hits, found) if hits else found
    return hits


def _apply(
    text: str, hits: list[Hit], placed: list[tuple[int, str]]
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
