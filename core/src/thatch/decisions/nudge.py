"""The decision-model nudge: one line per prediction that fired, as much as fits the budget.

The block is descriptive, never directive: it says what the user tends to
decide, with the evidence, and leaves the call to the agent. How the agent
reads it is told once, in :mod:`thatch.instructions.agent`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from thatch.plugin.nudge import Nudge
from thatch.safetext import visible
from thatch.textfit import cut, take_lines

# For types only: the engine pulls in the storage and embedding layers, and
# the agent's instructions quote this block's format.
if TYPE_CHECKING:
    from thatch.decisions.engine import PredictionHit

HEADER = "[thatch] User decision model"
#: How a line introduces the choice once feedback has tested the prediction.
TESTED = "you tend to choose"
#: How it introduces a choice no feedback has tested yet.
UNTESTED = "you may prefer"


def line(confidence: float, tests: int, situation: str, statement: str) -> str:
    """One line: ``- [0.72 conf, 4 tests] When <situation>: you tend to choose "<statement>"``.

    The statement is quoted because it is the user's choice in their own
    words: a verb phrase ("write the test first"), a gerund, a file name.
    After "you tend to choose" or "you may prefer" only a quotation reads as
    a sentence whatever its form. Its own double quotes become single ones
    so the quotation stays one.
    """
    tendency = UNTESTED if tests == 0 else TESTED
    choice = _lower_first(statement.rstrip(".")).replace('"', "'")
    plural = "" if tests == 1 else "s"
    return (
        f"- [{confidence:.2f} conf, {tests} test{plural}] "
        f'When {_situation(situation)}: {tendency} "{choice}"'
    )


def _situation(text: str) -> str:
    """The matcher as it reads after "When": a "when" of its own dropped, no final stop."""
    text = text.rstrip(".")
    # Matchers are often written "when writing a parser": not "When when ...".
    if text[:5].casefold() == "when " and text[5:].strip():
        text = text[5:].lstrip()
    return _lower_first(text)


def format_line(hit: PredictionHit) -> str:
    """The line of one prediction that fired."""
    return line(
        hit.prediction.confidence, hit.tests, hit.matcher.description, hit.prediction.statement
    )


def format_block(hits: Sequence[PredictionHit]) -> str:
    """The whole block, or an empty string when nothing fired."""
    if not hits:
        return ""
    return "\n".join([HEADER, *(format_line(hit) for hit in hits)])


def _lower_first(text: str) -> str:
    # "Writing a parser" reads as "When writing a parser"; keep acronyms ("CI ...").
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


# -- the nudge --------------------------------------------------------------

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
    """A tier-2 nudge with the block of :func:`format_block`.

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
