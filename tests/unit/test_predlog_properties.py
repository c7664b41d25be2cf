"""Random transcripts: every shape, copies and unreadable sub-agent blocks mixed.

Each generated message knows the Predictions it means to state; the rows
``rows_of`` reads from the rendered texts must be exactly those, numbered in
order, with copies of a sub-agent's result left out — never a row lost or
doubled — and the same ids on every run and for every prefix.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from predlog_scenarios import (
    message,
    plan_block,
    shape0,
    shape1,
    shape2,
    shape3,
    shape4,
    shape5,
    task_notification,
    unloadable,
)
from thatch.plugin import Candidate, LoggedPrediction
from thatch.predlog.transcript import prediction_id, rows_of

SESSION = "sess"
WHEN = datetime(2026, 12, 1, tzinfo=UTC)
#: Few confidences, so copies and chance matches between messages are common.
CONFIDENCES = st.sampled_from([0, 40, 70, 100]) | st.integers(0, 100)
#: Derandomized: CI sees the same examples every run, in a few seconds.
PROPERTY_SETTINGS = settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@attrs.frozen
class Block:
    """A Prediction block of one shape stating ``confidences``."""

    shape: int
    confidences: tuple[int, ...]


@attrs.frozen
class Noise:
    """A part that states nothing: prose, shape 5, a plan, or (sub-agents only) a bad block."""

    kind: str


@attrs.frozen
class Legacy:
    """A message of ``Confidence: N`` lines: one per ruling when lettered, else the last counts."""

    confidences: tuple[int, ...]
    lettered: bool


@attrs.frozen
class Copy:
    """The session showing the last sub-agent result's Predictions again, reworded."""

    as_one_list: bool


@attrs.frozen
class Message:
    source: str
    parts: tuple[Block | Noise, ...] | Legacy | Copy


def _blocks(noise: Sequence[str]) -> st.SearchStrategy[tuple[Block | Noise, ...]]:
    one = st.builds(Block, st.sampled_from([0, 1]), st.tuples(CONFIDENCES))
    many = st.builds(
        Block, st.sampled_from([2, 3, 4]), st.lists(CONFIDENCES, min_size=1, max_size=3).map(tuple)
    )
    part: st.SearchStrategy[Block | Noise] = one | many | st.builds(Noise, st.sampled_from(noise))
    return st.lists(part, max_size=4).map(tuple)


LEGACY = st.builds(Legacy, st.lists(CONFIDENCES, min_size=1, max_size=3).map(tuple), st.booleans())
SUBAGENT = st.builds(
    Message,
    st.just("task-notification"),
    _blocks(["prose", "shape5", "plan", "unloadable", "bad-confidence"]) | LEGACY,
)
ASSISTANT = st.builds(
    Message,
    st.just("assistant"),
    _blocks(["prose", "shape5", "plan"]) | LEGACY | st.builds(Copy, st.booleans()),
)
TRANSCRIPTS = st.lists(SUBAGENT | ASSISTANT, max_size=8)


@attrs.frozen
class Expected:
    """What the transcript means: each message's Predictions (confidence, letter)."""

    candidates: list[Candidate]
    stated: list[list[tuple[int, str | None]]]


def _render(messages: Sequence[Message]) -> Expected:
    towards = (f"toward {n}" for n in itertools.count(1))
    candidates: list[Candidate] = []
    stated: list[list[tuple[int, str | None]]] = []
    last_subagent: list[tuple[int, str | None]] = []
    for line, msg in enumerate(messages, 1):
        parts = msg.parts
        if isinstance(parts, Copy):
            parts = _copy_of(last_subagent, parts.as_one_list)
        if isinstance(parts, Legacy):
            text, meant = _legacy(parts, towards)
        else:
            text = message(*(_part(part, towards) for part in parts))
            meant = [
                (c, None) for part in parts if isinstance(part, Block) for c in part.confidences
            ]
        if msg.source == "task-notification":
            text = task_notification(text, task=f"t{line}")
            if meant:
                last_subagent = meant
        candidates.append(
            Candidate(text, "assistant" if msg.source == "assistant" else "task-notification", line)
        )
        stated.append(meant)
    return Expected(candidates, stated)


def _copy_of(stated: list[tuple[int, str | None]], as_one_list: bool) -> tuple[Block, ...]:
    confidences = tuple(confidence for confidence, _letter in stated)
    if as_one_list and confidences:
        return (Block(2, confidences),)
    return tuple(Block(0, (confidence,)) for confidence in confidences)


def _part(part: Block | Noise, towards: Iterator[str]) -> str:
    if isinstance(part, Noise):
        return {
            "prose": "Some thoughts, no Prediction. Confidence is high.",
            "shape5": shape5(),
            "plan": plan_block(),
            "unloadable": unloadable(),
            "bad-confidence": shape2([(50, "fine"), ("high", "not a number")]),
        }[part.kind]
    stated = [(confidence, next(towards)) for confidence in part.confidences]
    if part.shape == 0:
        return shape0(*stated[0])
    if part.shape == 1:
        return shape1(*stated[0])
    return {2: shape2, 3: shape3, 4: shape4}[part.shape](stated)


def _legacy(legacy: Legacy, towards: Iterator[str]) -> tuple[str, list[tuple[int, str | None]]]:
    if legacy.lettered:
        letters = "abc"[: len(legacy.confidences)]
        lines = [
            f"{letter.upper()}) {next(towards)}. Confidence: {confidence}"
            for letter, confidence in zip(letters, legacy.confidences, strict=True)
        ]
        return "Rulings:\n\n" + "\n".join(lines), list(
            zip(legacy.confidences, letters, strict=True)
        )
    paragraphs = [f"{next(towards)}.\nConfidence: {c}%" for c in legacy.confidences]
    return "\n\n".join(paragraphs), [(legacy.confidences[-1], None)]


def _expected_rows(expected: Expected) -> list[tuple[str, int, str]]:
    """(id, confidence, source) of every row the reading rules keep."""
    rows: list[tuple[str, int, str]] = []
    number = 0
    last_giver: tuple[str, tuple[int, ...]] | None = None
    for candidate, meant in zip(expected.candidates, expected.stated, strict=True):
        confidences = tuple(confidence for confidence, _letter in meant)
        if not meant:
            continue
        if candidate.source == "assistant" and last_giver == ("task-notification", confidences):
            continue
        last_giver = (candidate.source, confidences)
        lettered = meant[0][1] is not None
        number += 1 if lettered else 0
        for confidence, letter in meant:
            number += 0 if lettered else 1
            rows.append(
                (prediction_id(SESSION, number, letter or "1"), confidence, candidate.source)
            )
    return rows


def _summary(rows: Sequence[LoggedPrediction]) -> list[tuple[str, int, str]]:
    return [(row.id, row.confidence, row.source) for row in rows]


@PROPERTY_SETTINGS
@given(TRANSCRIPTS)
def test_no_row_is_lost_or_doubled(messages: list[Message]) -> None:
    expected = _render(messages)
    rows = rows_of(expected.candidates, SESSION, WHEN)
    assert _summary(rows) == _expected_rows(expected)
    assert len({row.id for row in rows}) == len(rows)


@PROPERTY_SETTINGS
@given(TRANSCRIPTS)
def test_ids_are_stable_across_runs_and_prefixes(messages: list[Message]) -> None:
    candidates = _render(messages).candidates
    rows = rows_of(candidates, SESSION, WHEN)
    assert rows_of(candidates, SESSION, WHEN) == rows
    for end in range(len(candidates)):
        prefix = rows_of(candidates[:end], SESSION, WHEN)
        assert rows[: len(prefix)] == prefix
