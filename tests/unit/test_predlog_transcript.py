"""A transcript's rows: the Done-when scenarios, copies, unreadable blocks, and ids."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from predlog_scenarios import (
    NO_PREDICTION,
    SCENARIOS,
    Scenario,
    message,
    shape0,
    shape2,
    shape4,
    task_notification,
    unloadable,
)
from thatch.plugin import Candidate, InvalidInputError, LoggedPrediction
from thatch.predlog.blocks import MalformedPrediction, stated_confidence
from thatch.predlog.transcript import NoPredictions, prediction_id, require_rows, rows_of

SESSION = "s"
WHEN = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def _rows(*candidates: tuple[str, str]) -> list[LoggedPrediction]:
    return rows_of(Scenario("", candidates, (), (), ()).as_candidates(), SESSION, WHEN)


def _ids(*candidates: tuple[str, str]) -> list[str]:
    return [row.id for row in _rows(*candidates)]


# --- The Done-when items ------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
def test_each_done_when_item(scenario: Scenario) -> None:
    candidates = scenario.as_candidates()
    if scenario.exit == 2:
        with pytest.raises(MalformedPrediction, match=scenario.error):
            rows_of(candidates, SESSION, WHEN)
        return
    rows = rows_of(candidates, SESSION, WHEN)
    assert [row.id for row in rows] == scenario.ids_for(SESSION)
    assert tuple(row.confidence for row in rows) == scenario.confidences
    assert tuple(row.source for row in rows) == scenario.sources
    # Every run, and every prefix of the transcript, gives the same ids.
    for _run in range(scenario.runs):
        assert rows_of(candidates, SESSION, WHEN) == rows
    if scenario.exit == 1:
        with pytest.raises(NoPredictions, match=scenario.error):
            require_rows(rows, "t.jsonl")
    if scenario.last_confidence is not None:
        assert stated_confidence(scenario.candidates[-1][1]) == scenario.last_confidence


def test_rows_keep_each_prediction_s_own_text_and_fields() -> None:
    rows = _rows(("assistant", message(shape2([(60, "use sqlite"), (40, "write tests")]))))
    assert rows == [
        LoggedPrediction(
            id="s:1",
            session_id=SESSION,
            action="accept",
            toward="use sqlite",
            confidence=60,
            source="assistant",
            recorded_at=WHEN,
            fields={"triggers": ["review"]},
        ),
        LoggedPrediction(
            id="s:2:1",
            session_id=SESSION,
            action="accept",
            toward="write tests",
            confidence=40,
            source="assistant",
            recorded_at=WHEN,
            fields={"triggers": ["review"]},
        ),
    ]
    for row in rows:
        assert LoggedPrediction.from_json(row.to_json(), "here") == row


# --- Copies -------------------------------------------------------------------------


def test_a_copy_must_give_the_same_confidences_in_the_same_order() -> None:
    subagent = task_notification(message(shape0(70, "a"), shape0(60, "b")))
    assert _ids(
        ("task-notification", subagent), ("assistant", message(shape0(60, "b"), shape0(70, "a")))
    ) == [
        "s:1",
        "s:2:1",
        "s:3:1",
        "s:4:1",
    ]
    assert _ids(("task-notification", subagent), ("assistant", message(shape0(70, "a")))) == [
        "s:1",
        "s:2:1",
        "s:3:1",
    ]


def test_a_copy_is_of_the_nearest_earlier_message_that_gave_rows() -> None:
    subagent = ("task-notification", task_notification(message(shape0(70, "a"))))
    chat = ("assistant", "No Prediction here, just talk.")
    copy = ("assistant", message(shape0(70, "a, reworded")))
    other = ("assistant", message(shape0(30, "x")))
    # Messages without Predictions between them do not matter...
    assert _ids(subagent, chat, chat, copy) == ["s:1"]
    # ...one that gave rows does.
    assert _ids(subagent, other, copy) == ["s:1", "s:2:1", "s:3:1"]


def test_an_assistant_message_is_never_a_copy_of_another() -> None:
    first = ("assistant", message(shape0(70, "a")))
    assert _ids(first, first, first) == ["s:1", "s:2:1", "s:3:1"]


def test_a_task_notification_is_never_a_copy() -> None:
    subagent = ("task-notification", task_notification(message(shape0(70, "a"))))
    assert _ids(subagent, subagent) == ["s:1", "s:2:1"]
    assert _ids(("assistant", message(shape0(70, "a"))), subagent) == ["s:1", "s:2:1"]


def test_a_copy_keeps_the_sub_agent_s_rows_and_wording() -> None:
    rows = _rows(
        ("task-notification", task_notification(message(shape4([(65, "retry"), (35, "fail")])))),
        ("assistant", message(shape2([(65, "retry twice"), (35, "fail fast")]))),
    )
    assert [(row.toward, row.source) for row in rows] == [
        ("retry", "task-notification"),
        ("fail", "task-notification"),
    ]


def test_a_copy_of_a_partly_readable_result_matches_its_readable_predictions() -> None:
    subagent = task_notification(message(shape0(70, "a"), unloadable(), shape0("high", "b")))
    assert _ids(("task-notification", subagent), ("assistant", message(shape0(70, "a")))) == ["s:1"]


# --- Blocks that do not load --------------------------------------------------------


def test_an_unreadable_assistant_block_raises_naming_the_line() -> None:
    candidates = [
        Candidate(message(shape0(10, "a")), "assistant", 3),
        Candidate(message(unloadable()), "assistant", 7),
    ]
    with pytest.raises(
        MalformedPrediction, match=r"^line 7: Prediction block 1 is not valid YAML"
    ) as raised:
        rows_of(candidates, SESSION, WHEN)
    assert (raised.value.line, raised.value.problem.startswith("Prediction block 1")) == (7, True)


def test_a_bad_assistant_confidence_raises_naming_the_line_and_the_confidence() -> None:
    candidates = [Candidate(message(shape0("high", "a")), "assistant", 4)]
    with pytest.raises(
        MalformedPrediction, match="line 4: confidence 'high' is not a whole number"
    ):
        rows_of(candidates, SESSION, WHEN)


def test_an_unreadable_task_notification_block_gives_no_rows_and_no_error() -> None:
    subagent = task_notification(message(unloadable(), shape0(20, "ok"), shape0(101, "too sure")))
    assert _ids(("task-notification", subagent)) == ["s:1"]
    assert _ids(("task-notification", task_notification("Confidence: 150"))) == []


# --- Ids ----------------------------------------------------------------------------


def test_prediction_ids() -> None:
    assert [prediction_id("s", n) for n in (1, 2, 10)] == ["s:1", "s:2:1", "s:10:1"]
    assert [prediction_id("s", 1, "a"), prediction_id("s", 3, "b")] == ["s:a", "s:3:b"]


def test_a_lettered_message_is_one_prediction_with_a_row_per_ruling() -> None:
    lettered = "A) Keep the cache. Confidence: 70\nB) Drop the loop. Confidence: 55"
    assert _ids(("assistant", lettered)) == ["s:a", "s:b"]
    assert _ids(
        ("assistant", message(shape0(10, "x"))),
        ("assistant", lettered),
        ("assistant", "Ship it.\nConfidence: 80"),
        ("assistant", lettered),
    ) == ["s:1", "s:2:a", "s:2:b", "s:3:1", "s:4:a", "s:4:b"]


def test_a_lettered_copy_of_a_sub_agent_gives_no_rows() -> None:
    lettered = "A) Keep the cache. Confidence: 70\nB) Drop the loop. Confidence: 55"
    assert _ids(
        ("task-notification", task_notification(lettered)),
        ("assistant", message(shape0(70, "a"), shape0(55, "b"))),
    ) == ["s:a", "s:b"]


def test_a_later_prediction_never_renumbers_an_earlier_one() -> None:
    transcript = [
        ("task-notification", task_notification(message(shape0(70, "a")))),
        ("assistant", message(shape0(70, "a copy"))),
        ("assistant", message(shape2([(1, "b"), (2, "c")]))),
        ("task-notification", task_notification(message(unloadable()))),
        ("assistant", message(shape0(3, "d"))),
    ]
    full = _ids(*transcript)
    assert full == ["s:1", "s:2:1", "s:3:1", "s:4:1"]
    for end in range(len(transcript)):
        prefix = _ids(*transcript[:end])
        assert full[: len(prefix)] == prefix


def test_bad_session_ids_and_naive_times_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="session id"):
        rows_of([], "", WHEN)
    with pytest.raises(InvalidInputError, match="timezone"):
        rows_of([], SESSION, datetime(2026, 1, 1))


def test_no_rows_is_an_error_naming_the_path_with_exit_1() -> None:
    with pytest.raises(NoPredictions, match=f"^{NO_PREDICTION} in /tmp/t.jsonl$") as raised:
        require_rows([], "/tmp/t.jsonl")
    assert raised.value.exit_code == 1
    assert isinstance(raised.value, InvalidInputError)
    rows = _rows(("assistant", message(shape0(1, "a"))))
    assert require_rows(rows, "t") == rows
