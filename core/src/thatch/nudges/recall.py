"""The recall nudge: memories that may bear on the prompt the user just wrote."""

from __future__ import annotations

from collections.abc import Sequence

from thatch.nudges.framing import Framing, as_data, new_nonce
from thatch.plugin.nudge import Nudge
from thatch.plugin.records import RecallHit
from thatch.textfit import fit_entries, one_line

HEADER = "[thatch] Memories that may bear on this prompt"
#: Where the framed lines come from, as the framing's note says.
ORIGIN = "saved memories"
SOURCE = "recall"
TIER = 2
PRIORITY = 50
#: Content characters per memory in the short form (the agent can ``memory_show`` the rest).
SHORT_CONTENT = 60


def recall_nudge(
    hits: Sequence[RecallHit], *, max_chars: int, nonce: str | None = None
) -> Nudge | None:
    """A tier-2 nudge listing ``hits`` (best first) in at most ``max_chars`` characters.

    One line per memory: ``- label (store): content``, the content cut with
    an ellipsis so the whole fits. The lines are framed as data (see
    :mod:`thatch.nudges.framing`; ``nonce`` is drawn fresh unless given), and
    the framing counts against ``max_chars``. When not every memory fits,
    the last ones are left out. The short form shows the same memories with
    shorter content, so ``memory_ids`` holds for both. None when no hit fits.
    """
    framing = Framing(ORIGIN, nonce or new_nonce())
    header = framing.header(HEADER)
    room = max_chars - len(framing.footer)
    entries = [
        (as_data(f"- {hit.memory.label} ({hit.memory.store}): "), _content(hit)) for hit in hits
    ]
    text, shown = fit_entries(header, entries, room)
    if not shown:
        return None
    short, short_shown = fit_entries(header, entries[:shown], room, body_cap=SHORT_CONTENT)
    return Nudge(
        source=SOURCE,
        text=text + framing.footer,
        tier=TIER,
        priority=PRIORITY,
        short_text=short + framing.footer
        if short_shown == shown and len(short) < len(text)
        else None,
        memory_ids=tuple(hit.memory.id for hit in hits[:shown]),
    )


def _content(hit: RecallHit) -> str:
    # Escaped before it is cut, so the escapes count against the budget.
    return as_data(one_line(hit.memory.content))
