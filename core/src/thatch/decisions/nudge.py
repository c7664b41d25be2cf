"""The decision-model block injected on a prompt: one line per prediction that fired.

The block is descriptive, never directive: it says what the user tends to
decide, with the evidence, and leaves the call to the agent. How the agent
reads it is told once, in :mod:`thatch.agent_instructions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# For types only: ``thatch mcp`` imports this module (the instructions quote
# the block's format) before it answers ``initialize``, and the engine pulls
# in the storage and embedding layers.
if TYPE_CHECKING:
    from collections.abc import Sequence

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
        f'When {_lower_first(situation.rstrip("."))}: {tendency} "{choice}"'
    )


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
