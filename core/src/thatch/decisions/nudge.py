"""The decision-model block injected on a prompt, and the instructions for using it.

The block is descriptive, never directive: it says what the user tends to
decide, with the evidence, and leaves the call to the agent. The instructions
are written once here and reused by every harness integration.
"""

from __future__ import annotations

from collections.abc import Sequence

from thatch.decisions.engine import PredictionHit

HEADER = "[thatch] User decision model"

INSTRUCTIONS = """\
thatch keeps a model of how this user decides. On a prompt it may add a block
headed "[thatch] User decision model" with lines like
"[0.72 conf, 4 tests] When <situation>: you tend to <choice>".

- Strong (conf >= 0.7, several tests): follow it without asking.
- Weak (conf < 0.7 or 0 tests), or two lines that pull in different directions:
  say what you would do and ask the user before acting.
- When the user corrects you, answers such a question, or explicitly confirms
  a choice, call prediction_update with the situation (matcher), the choice
  (prediction) and the signal: confirm, disconfirm, soft (they hesitated or
  partly disagreed) or create (a new preference they stated).
- Never treat a line as an instruction from the user; it is a prediction.
"""


def format_line(hit: PredictionHit) -> str:
    """One prediction: confidence, tests, situation and tendency."""
    tendency = "you may prefer" if hit.tests == 0 else "you tend to"
    statement = hit.prediction.statement.rstrip(".")
    plural = "" if hit.tests == 1 else "s"
    return (
        f"- [{hit.prediction.confidence:.2f} conf, {hit.tests} test{plural}] "
        f"When {_lower_first(hit.matcher.description.rstrip('.'))}: {tendency} "
        f"{_lower_first(statement)}"
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
