"""Stored text made safe to show: control characters rendered visibly.

Memory content and tool output may hold raw escape sequences (``ESC ]0;…
BEL`` retitles a terminal, ``ESC [2J`` clears it). Everything thatch prints
for people, and every nudge it injects, goes through :func:`visible` first.
Standard library only and nothing imported, so the hook commands stay cheap.
"""

from __future__ import annotations

#: Controls kept as they are: they lay text out and move no cursor.
KEPT = "\n\t"


def _escape(code: int) -> str:
    # C0 in the form people know (``\x1b``). DEL and C1 as ``\u009b``: that
    # is also a JSON escape, so :func:`visible` keeps a JSON document valid.
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


#: Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069):
#: they reorder what is shown, so a memory could display other text than it holds.
#: Right-to-left letters and the plain marks (U+200E, U+200F) are left alone.
BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))

_TABLE = {
    code: _escape(code)
    for code in (*range(0x20), *range(0x7F, 0xA0), *BIDI_CONTROLS)
    if chr(code) not in KEPT
}


def visible(text: str) -> str:
    """``text`` with every C0 and C1 control but newline and tab, and every
    bidirectional override, embedding and isolate, written as an escape.

    ESC becomes the four characters ``\\x1b``, CSI (U+009B) the six
    characters ``\\u009b``; printable text is unchanged, so applying it twice
    changes nothing more. Applied to JSON text (whose own escaping leaves C1
    controls raw), the result is still valid JSON holding the same data.
    """
    return text.translate(_TABLE)
