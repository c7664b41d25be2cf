"""The decision-model nudge: what the user tends to decide in situations like the prompt's."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from thatch.decisions.engine import PredictionHit
from thatch.decisions.nudge import HEADER, format_line
from thatch.nudges.text import cut, take_lines
from thatch.plugin.nudge import Nudge
from thatch.safetext import visible

SOURCE = "decisions"
TIER = 2
PRIORITY = 60
#: A matcher or prediction may hold 2,000 characters; one line never takes more than this.
LINE_CAP = 400
#: The short form: this many lines, each at most SHORT_LINE_CAP characters.
SHORT_LINES = 2
SHORT_LINE_CAP = 160
#: Below this, a lone first line cut to fit says too little to be worth showing.
MIN_LINE = 40


@attrs.frozen
class DecisionNudge:
    """The nudge and the predictions its full text shows (for the fire log)."""

    nudge: Nudge
    shown: tuple[PredictionHit, ...]


def decision_nudge_from_hits(
    hits: Sequence[PredictionHit], *, max_chars: int
) -> DecisionNudge | None:
    """A tier-2 nudge with the block of :func:`thatch.decisions.nudge.format_block`.

    Whole lines, best first, as many as fit ``max_chars``; when not even the
    first fits, it is cut with an ellipsis. The short form keeps the first
    :data:`SHORT_LINES` lines, shortened. None when nothing can be shown.
    """
    # Situations and choices are stored text: escaped before they are measured.
    lines = [cut(visible(format_line(hit)), LINE_CAP) for hit in hits]
    text, count = take_lines(HEADER, lines, max_chars)
    if not count:
        room = max_chars - len(HEADER) - 1
        if not lines or room < MIN_LINE:
            return None
        text, count = f"{HEADER}\n{cut(lines[0], room)}", 1
    short_lines = [cut(line, SHORT_LINE_CAP) for line in lines[: min(count, SHORT_LINES)]]
    short = "\n".join([HEADER, *short_lines])
    nudge = Nudge(
        source=SOURCE,
        text=text,
        tier=TIER,
        priority=PRIORITY,
        short_text=short if len(short) < len(text) else None,
    )
    return DecisionNudge(nudge=nudge, shown=tuple(hits[:count]))
