"""The prediction log's Done-when scenarios (issue 14, items 1–14) as reusable data.

Each :class:`Scenario` is a transcript's candidates — ``(source, text)`` in
transcript order — with what reading it must give: the ids (without the
``<session>:`` prefix: :meth:`Scenario.ids_for` adds it), the confidences
and sources of the rows, and the exit status and error text of
``thatch predlog append``. The parser's and transcript model's tests run
them through ``rows_of``; the command's tests write them as transcript files.

The block builders (:func:`shape0` ... :func:`unloadable`) are shared with the
property-based tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from thatch.plugin import Candidate

#: A Prediction a builder writes: its confidence and its toward text.
Stated = tuple[int, str]


def fence(body: str, info: str = "yaml") -> str:
    """``body`` as a fenced block."""
    return f"```{info}\n{body.rstrip()}\n```"


def _fields(indent: str, confidence: int | str, toward: str, action: str = "accept") -> str:
    return (
        f"{indent}action: {action}\n"
        f'{indent}toward: "{toward}"\n'
        f"{indent}confidence: {confidence}\n"
        f"{indent}triggers: [review]\n"
    )


def shape0(confidence: int | str, toward: str) -> str:
    """A ``prediction:`` mapping."""
    return fence("prediction:\n" + _fields("  ", confidence, toward))


def shape1(confidence: int | str, toward: str) -> str:
    """Shape 0 with comment lines before ``prediction:``."""
    return fence(
        "# Prediction, before asking\n# (shape 1)\nprediction:\n"
        + _fields("  ", confidence, toward)
    )


def shape2(stated: Sequence[tuple[int | str, str]]) -> str:
    """A ``predictions:`` list of items with a ``decision`` and a ``prediction:`` each."""
    items = "".join(
        f"  - decision: which way {index}\n    prediction:\n"
        + _fields("      ", confidence, toward)
        for index, (confidence, toward) in enumerate(stated, 1)
    )
    return fence("predictions:\n" + items)


def shape3(stated: Sequence[Stated]) -> str:
    """Top-level ``decision_<n>:`` keys, each with a ``prediction:`` mapping."""
    keys = "".join(
        f"decision_{index}:\n  ruling: option {index}\n  prediction:\n"
        + _fields("    ", confidence, toward)
        for index, (confidence, toward) in enumerate(stated, 1)
    )
    return fence(keys)


def shape4(stated: Sequence[Stated]) -> str:
    """A ``predictions:`` mapping of ``decision_<n>:`` keys holding the fields directly."""
    keys = "".join(
        f"  decision_{index}:\n    choice: option {index}\n" + _fields("    ", confidence, toward)
        for index, (confidence, toward) in enumerate(stated, 1)
    )
    return fence("predictions:\n" + keys)


def shape5() -> str:
    """``decision_<n>:`` keys without a ``prediction:`` or an ``action``: not a Prediction block."""
    return fence(
        "decision_1:\n  choice: keep the cache\n  why: it is hot\ndecision_2:\n  choice: drop it\n"
    )


def plan_block() -> str:
    """A yaml block whose first key, after a comment, is ``plan:``: not a Prediction block."""
    return fence("# the plan\nplan:\n  - read the issue\n  - confidence: 80\n")


def unloadable() -> str:
    """A Prediction block whose YAML does not load."""
    return fence("prediction:\n  action: accept\n  toward: [unclosed\n  confidence: 70\n")


def task_notification(result: str, task: str = "a1") -> str:
    """A sub-agent's result as the session receives it (a user line's text)."""
    return (
        f"<task-notification>\n<task-id>{task}</task-id>\n<status>completed</status>\n"
        f"<summary>Agent finished</summary>\n<result>{result}\n</result>\n</task-notification>"
    )


def message(*parts: str) -> str:
    """An assistant message: prose around the given blocks."""
    return "\n\n".join(["Here is where I stand.", *parts, "Shall I go ahead?"])


@attrs.frozen
class Scenario:
    """One Done-when item: a transcript and what reading it must give."""

    name: str
    #: ``(source, text)`` in transcript order.
    candidates: tuple[tuple[str, str], ...]
    #: The rows' ids without the session prefix (``1``, ``2:1``...), in order.
    ids: tuple[str, ...]
    confidences: tuple[int, ...]
    sources: tuple[str, ...]
    #: The exit status of ``thatch predlog append`` over the transcript.
    exit: int = 0
    #: Text the error must contain when the command fails.
    error: str | None = None
    #: Ids the log already holds for the session before the command runs.
    logged_before: tuple[str, ...] = ()
    #: How many times the command runs; the log must hold ``ids`` after each.
    runs: int = 1
    #: What ``stated_confidence`` gives for the last candidate's text, if checked.
    last_confidence: int | None = None

    def ids_for(self, session: str) -> list[str]:
        return [f"{session}:{tail}" for tail in self.ids]

    def as_candidates(self) -> list[Candidate]:
        """The candidates, each on its own transcript line (1, 2, ...)."""
        return [
            Candidate(
                text=text,
                source="assistant" if source == "assistant" else "task-notification",
                line=line,
            )
            for line, (source, text) in enumerate(self.candidates, 1)
        ]


A, TN = "assistant", "task-notification"
BAD_CONFIDENCE = "confidence 'high' is not a whole number 0–100"
NO_PREDICTION = "no Prediction with a Confidence line"

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "1-shape1",
        ((A, message(shape1(70, "keep the cache per process"))),),
        ("1",),
        (70,),
        (A,),
    ),
    Scenario(
        "2-shape2-two-items",
        ((A, message(shape2([(60, "use sqlite"), (40, "write the test first")]))),),
        ("1", "2:1"),
        (60, 40),
        (A, A),
    ),
    Scenario(
        "3-shape3-two-keys",
        ((A, message(shape3([(55, "rename the flag"), (45, "keep the old name")]))),),
        ("1", "2:1"),
        (55, 45),
        (A, A),
    ),
    Scenario(
        "4-shape4-two-keys",
        ((A, message(shape4([(80, "split the module"), (30, "inline it")]))),),
        ("1", "2:1"),
        (80, 30),
        (A, A),
    ),
    Scenario(
        "5-shape4-subagent-then-shape5",
        (
            (TN, task_notification(message(shape4([(65, "retry twice"), (35, "fail fast")])))),
            (A, message(shape5())),
        ),
        ("1", "2:1"),
        (65, 35),
        (TN, TN),
    ),
    Scenario(
        "6-three-prediction-blocks",
        ((A, message(shape0(10, "first"), shape0(20, "second"), shape0(30, "third"))),),
        ("1", "2:1", "3:1"),
        (10, 20, 30),
        (A, A, A),
    ),
    Scenario(
        "7-subagent-and-its-copy",
        (
            (TN, task_notification(message(shape0(75, "ship the fix today")))),
            (A, message(shape0(75, "ship it today, as the agent found"))),
        ),
        ("1",),
        (75,),
        (TN,),
    ),
    Scenario(
        "8-already-logged",
        (
            (TN, task_notification(message(shape0(75, "ship the fix today")))),
            (A, message(shape0(75, "ship it today, as the agent found"))),
        ),
        ("1",),
        (75,),
        (TN,),
        logged_before=("1",),
    ),
    Scenario(
        "9-two-assistant-messages-same-confidence",
        (
            (A, message(shape0(50, "use tabs"))),
            (A, message(shape0(50, "use spaces"))),
        ),
        ("1", "2:1"),
        (50, 50),
        (A, A),
    ),
    Scenario(
        "10-unloadable-subagent-block",
        (
            (TN, task_notification(message(unloadable()))),
            (A, message(shape0(90, "merge after review"))),
        ),
        ("1",),
        (90,),
        (A,),
    ),
    Scenario(
        "11-two-subagents-each-copied",
        (
            (TN, task_notification(message(shape0(70, "a"), shape0(60, "b"), shape0(50, "c")))),
            (
                A,
                message(
                    shape0(70, "a, reworded"), shape0(60, "b, reworded"), shape0(50, "c, reworded")
                ),
            ),
            (TN, task_notification(message(shape1(40, "d")), task="a2")),
            (A, message(shape0(40, "d, reworded"))),
        ),
        ("1", "2:1", "3:1", "4:1"),
        (70, 60, 50, 40),
        (TN, TN, TN, TN),
        runs=2,
    ),
    Scenario(
        "12-plan-block-only",
        ((A, message(plan_block())),),
        (),
        (),
        (),
        exit=1,
        error=NO_PREDICTION,
    ),
    Scenario(
        "13-last-block-shape2",
        ((A, message(shape0(20, "first"), shape2([(30, "second"), (85, "third")]))),),
        ("1", "2:1", "3:1"),
        (20, 30, 85),
        (A, A, A),
        last_confidence=85,
    ),
    Scenario(
        "14-last-block-shape2-bad-confidence",
        ((A, message(shape0(20, "first"), shape2([(30, "second"), ("high", "third")]))),),
        (),
        (),
        (),
        exit=2,
        error=BAD_CONFIDENCE,
    ),
)
