"""A prediction-log row's JSON form: what a JSONL line holds, and every way a line is not a row."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from thatch.plugin import InvalidInputError, LoggedPrediction
from thatch.plugin.prediction_log import ROW_KEYS, check_score

WHERE = "log.jsonl:7"
SHOWN = datetime(2025, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)

ROW = LoggedPrediction(
    id="s1:2:1",
    session_id="s1",
    action="correct",
    toward="keep the parser strict",
    confidence=80,
    source="task-notification",
    recorded_at=SHOWN,
    fields={"triggers": ["parser"], "levers": {"depth": 2}},
    store="acme/app",
    actual="accept",
    scored_at=SHOWN + timedelta(hours=1),
)


def good() -> dict[str, Any]:
    return ROW.to_json()


def test_the_json_form_has_exactly_the_row_keys_in_order() -> None:
    data = ROW.to_json()
    assert tuple(data) == ROW_KEYS
    assert data["recorded_at"] == "2025-03-01T12:00:00.250000+00:00"
    assert data["scored_at"] == "2025-03-01T13:00:00.250000+00:00"
    assert json.loads(json.dumps(data)) == data


@pytest.mark.parametrize(
    "row",
    [
        ROW,
        LoggedPrediction(
            id="s1:1",
            session_id="s1",
            action="accept",
            toward="",
            confidence=0,
            source="assistant",
            recorded_at=datetime(2025, 3, 1, 14, 0, tzinfo=timezone(timedelta(hours=2))),
        ),
    ],
)
def test_from_json_reads_back_what_to_json_wrote(row: LoggedPrediction) -> None:
    again = LoggedPrediction.from_json(json.loads(json.dumps(row.to_json())), WHERE)
    assert again == row
    assert again.to_json() == row.to_json()  # offsets kept, not only the moment


def test_fields_are_kept_as_json_values() -> None:
    # YAML loads dates, sets and number keys; the row holds what JSON can.
    row = LoggedPrediction(
        id="s1:1",
        session_id="s1",
        action="accept",
        toward="t",
        confidence=5,
        source="assistant",
        recorded_at=SHOWN,
        fields={"due": date(2025, 4, 1), 3: {"b", "a"}, "pair": (1, 2)},
    )
    assert row.fields == {"due": "2025-04-01", "3": ["a", "b"], "pair": [1, 2]}
    assert LoggedPrediction.from_json(row.to_json(), WHERE) == row


def test_a_time_without_its_offset_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="recorded_at must be timezone-aware"):
        LoggedPrediction(
            id="s1:1",
            session_id="s1",
            action="accept",
            toward="t",
            confidence=5,
            source="assistant",
            recorded_at=datetime(2025, 3, 1),
        )


def changed(**values: Any) -> dict[str, Any]:
    return good() | values


def without(key: str) -> dict[str, Any]:
    data = good()
    del data[key]
    return data


BAD_ROWS: dict[str, tuple[Any, str]] = {
    "not an object": ([1, 2], "not a prediction-log row"),
    "a key missing": (without("toward"), "missing 'toward'"),
    "a key unknown": (changed(text="old"), "unknown key 'text'"),
    "an empty id": (changed(id=""), "'id' must be a non-empty string"),
    "a session not text": (changed(session_id=7), "'session_id' must be a non-empty string"),
    "an empty action": (changed(action=""), "'action' must be a non-empty string"),
    "a toward not text": (changed(toward=None), "'toward' must be a string"),
    "a confidence over 100": (changed(confidence=101), "'confidence' must be a whole number"),
    "a confidence below 0": (changed(confidence=-1), "'confidence' must be a whole number"),
    "a confidence as text": (changed(confidence="80"), "'confidence' must be a whole number"),
    "a confidence as a float": (changed(confidence=80.0), "'confidence' must be a whole number"),
    "a confidence as a bool": (changed(confidence=True), "'confidence' must be a whole number"),
    "an unknown source": (changed(source="user"), "'source' must be one of"),
    "a time without offset": (
        changed(recorded_at="2025-03-01T12:00:00"),
        "'recorded_at' must be an ISO 8601 time with its offset",
    ),
    "a time that is not one": (changed(recorded_at="soon"), "'recorded_at' must be an ISO 8601"),
    "a time as a number": (changed(recorded_at=1.5), "'recorded_at' must be an ISO 8601"),
    "fields not an object": (changed(fields=["a"]), "'fields' must be a JSON object"),
    "a store not text": (changed(store=None), "'store' must be a string"),
    "an unknown actual": (changed(actual="maybe"), "'actual' must be one of accept, correct"),
    "a bad score time": (changed(scored_at="later"), "'scored_at' must be an ISO 8601"),
    "a score without its time": (
        changed(scored_at=None),
        "'actual' and 'scored_at' are set together",
    ),
    "a score time without a score": (
        changed(actual=None),
        "'actual' and 'scored_at' are set together",
    ),
}


@pytest.mark.parametrize(("data", "problem"), list(BAD_ROWS.values()), ids=list(BAD_ROWS))
def test_a_bad_row_is_refused_naming_where_and_the_key(data: Any, problem: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        LoggedPrediction.from_json(data, WHERE)
    message = str(caught.value)
    assert message.startswith(f"{WHERE}: ")
    assert problem in message


def test_a_row_missing_keys_is_told_every_key_it_needs() -> None:
    with pytest.raises(InvalidInputError) as caught:
        LoggedPrediction.from_json({}, WHERE)
    assert ", ".join(ROW_KEYS) in str(caught.value)


@pytest.mark.parametrize(
    ("actual", "when", "problem"),
    [
        ("maybe", SHOWN, "one of accept, correct"),
        ("accept", datetime(2025, 3, 1), "timezone-aware"),
    ],
)
def test_a_score_no_storage_may_keep_is_refused(actual: str, when: datetime, problem: str) -> None:
    with pytest.raises(InvalidInputError, match=problem):
        check_score(actual, when)
    check_score("correct", SHOWN)
