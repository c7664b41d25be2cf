"""Text every boundary can store: lone UTF-16 surrogates made U+FFFD.

JavaScript harnesses cut strings by UTF-16 unit, so a truncated emoji
leaves half a surrogate pair (``"\\ud83c"``) in the JSON they send. Python
decodes it into a ``str`` that UTF-8 cannot encode: SQLite, the socket and
stdout all refuse it. Every place text enters thatch (the wire, hook stdin,
CLI arguments and files, MCP requests) passes it through :func:`scrub`, so
one bad character costs one replacement character, never the event.

Standard library only and nothing imported at load, so hook commands stay cheap.
"""

from __future__ import annotations

REPLACEMENT = "\ufffd"

# Not ``typing.TYPE_CHECKING``: importing typing costs every hook command ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_pattern = None


def scrub_text(text: str) -> str:
    """``text`` with every surrogate code point replaced by U+FFFD (unchanged if none)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    global _pattern
    if _pattern is None:
        import re

        _pattern = re.compile("[\ud800-\udfff]")
    return _pattern.sub(REPLACEMENT, text)


def scrub(value: Any) -> Any:
    """``value`` (JSON data) with :func:`scrub_text` applied to every string, keys included.

    Containers are rebuilt only where something changed, so clean data comes
    back as the same objects.
    """
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        changed = False
        cleaned = {}
        for key, item in value.items():
            new_key = scrub_text(key) if isinstance(key, str) else key
            new_item = scrub(item)
            changed = changed or new_key is not key or new_item is not item
            cleaned[new_key] = new_item
        return cleaned if changed else value
    if isinstance(value, list):
        items = [scrub(item) for item in value]
        if any(new is not old for new, old in zip(items, value, strict=True)):
            return items
        return value
    return value


def has_surrogate_escape(raw: bytes | str) -> bool:
    """Whether JSON text may decode to a lone surrogate (a ``\\uD800``–``\\uDFFF`` escape).

    A cheap test on the raw text, so the walk of :func:`scrub` is only paid
    when it can find something.
    """
    if isinstance(raw, str):
        lowered = raw
        return "\\ud" in lowered or "\\uD" in lowered
    return b"\\ud" in raw or b"\\uD" in raw
