"""The user decision model through the real command line and the real model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from integration.conftest import Runner, as_json

PARSER_SITUATION = "writing a function that parses input"
PARSER_PREFERENCE = "handle error cases before the happy path"


def _update(
    thatch: Runner, matcher: str, prediction: str, signal: str, *extra: str
) -> dict[str, object]:
    """``thatch predictions update ... --store global --json`` and its JSON answer."""
    completed = thatch(
        "predictions", "update", "--matcher", matcher, "--prediction", prediction,
        "--signal", signal, "--store", "global", "--json", *extra,
    )  # fmt: skip
    return as_json(completed)


def _create(thatch: Runner, matcher: str, prediction: str, *extra: str) -> dict[str, object]:
    return _update(thatch, matcher, prediction, "create", *extra)


def test_a_created_preference_fires_on_a_related_prompt_only(thatch: Runner) -> None:
    created = _create(thatch, PARSER_SITUATION, PARSER_PREFERENCE)
    assert created["outcome"] == "created"
    assert created["confidence"] == 0.5

    block = thatch("predictions", "query", "Write a function to parse a JSON config file").stdout
    assert block.splitlines()[0] == "[thatch] User decision model"
    assert "[0.50 conf, 0 tests]" in block
    assert 'you may prefer "handle error cases before the happy path"' in block
    hits = as_json(
        thatch("predictions", "query", "Write a function to parse a JSON config file", "--json")
    )
    assert [hit["statement"] for hit in hits] == [PARSER_PREFERENCE]
    assert hits[0]["tests"] == 0

    unrelated = thatch("predictions", "query", "What's the weather like in Lisbon?", "--json")
    assert as_json(unrelated) == []


def test_near_duplicate_wording_links_without_moving_confidence(thatch: Runner) -> None:
    first = _create(thatch, PARSER_SITUATION, PARSER_PREFERENCE)
    again = _create(
        thatch,
        "writing a parser function for user input",
        "handle the error cases before the happy path",
    )
    assert again["prediction"]["id"] == first["prediction"]["id"]
    assert again["outcome"] in ("linked", "unchanged")
    assert again["confidence"] == 0.5
    confirmed = _update(thatch, PARSER_SITUATION, PARSER_PREFERENCE, "confirm")
    assert confirmed["outcome"] == "reinforced"
    assert confirmed["confidence"] == pytest.approx(0.5833, abs=1e-4)
    block = thatch("predictions", "query", "Write a function to parse a JSON config file").stdout
    assert (
        "[0.58 conf, 1 test] When writing a function that parses input: you tend to choose" in block
    )


def test_delete_removes_links_and_provenance(thatch: Runner) -> None:
    created = _create(thatch, PARSER_SITUATION, PARSER_PREFERENCE)
    prediction_id = str(created["prediction"]["id"])  # type: ignore[index]
    shown = as_json(thatch("predictions", "show", prediction_id, "--json"))
    assert len(shown["matchers"]) == 1
    assert [entry["signal"] for entry in shown["provenance"]] == ["create"]

    thatch("predictions", "delete", prediction_id)
    assert as_json(thatch("predictions", "list", "--json")) == []
    assert as_json(thatch("predictions", "query", "parse a JSON config file", "--json")) == []
    missing = thatch("predictions", "delete", prediction_id, check=False)
    assert missing.returncode == 1
    assert f"no prediction with id {prediction_id}" in missing.stderr
    bad = thatch(
        "predictions",
        "update",
        "--matcher",
        "x",
        "--prediction",
        "y",
        "--signal",
        "maybe",
        check=False,
    )
    assert bad.returncode == 2
    assert "invalid choice: 'maybe'" in bad.stderr


def test_calibration_scores_showings_with_later_feedback(thatch: Runner, tmp_path: Path) -> None:
    _create(thatch, PARSER_SITUATION, PARSER_PREFERENCE)
    thatch(
        "predictions", "query", "Write a function to parse a JSON config file", "--session", "s1"
    )
    _update(thatch, PARSER_SITUATION, PARSER_PREFERENCE, "disconfirm", "--session", "s1")
    plot = tmp_path / "reliability.png"
    report = as_json(thatch("predictions", "calibration", "--json", "--plot", str(plot)))
    assert report["showings"] == 1
    assert report["scored"] == 1
    assert report["brier"] == pytest.approx((0.5 - 0.0) ** 2)
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_import_replays_update_calls_and_stdin_queries(thatch: Runner, tmp_path: Path) -> None:
    calls = tmp_path / "model.jsonl"
    calls.write_text(
        "\n".join(
            json.dumps(call)
            for call in (
                {
                    "matcher": PARSER_SITUATION,
                    "prediction": PARSER_PREFERENCE,
                    "signal": "create",
                    "store": "global",
                },
                {
                    "matcher": PARSER_SITUATION,
                    "prediction": PARSER_PREFERENCE,
                    "signal": "confirm",
                    "store": "global",
                },
                {
                    "matcher": "naming a new module",
                    "prediction": "use a short noun",
                    "signal": "create",
                    "store": "global",
                },
            )
        )
        + "\n"
    )
    imported = as_json(thatch("predictions", "import", str(calls), "--json"))
    assert imported == {"calls": 3, "created": 2, "reinforced": 1}
    queries = (
        "Write a function to parse a JSON config file\n"
        + json.dumps({"query": "name the new module"})
        + "\n"
    )
    lines = [
        json.loads(line)
        for line in thatch("predictions", "query", "-", input=queries).stdout.splitlines()
    ]
    assert [hit["statement"] for hit in lines[0]["results"]] == [PARSER_PREFERENCE]
    assert [hit["statement"] for hit in lines[1]["results"]] == ["use a short noun"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"matcher": "m", "prediction": "p", "signal": "nope"}\n')
    refused = thatch("predictions", "import", str(bad), check=False)
    assert refused.returncode == 2
    assert "line 1: signal 'nope'" in refused.stderr


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (
            {"matcher": "m", "prediction": "p", "signal": "create", "confidence": 0.9},
            'line 2: unknown key "confidence"; the keys are matcher, prediction, signal,',
        ),
        (
            {"matcher": 5, "prediction": "p", "signal": "create"},
            'line 2: "matcher" is a number; write it as text',
        ),
        (
            {"matcher": "m", "prediction": ["p"], "signal": "create"},
            'line 2: "prediction" is a list; write it as text',
        ),
        (
            {"matcher": "m", "prediction": "\u0000", "signal": "create"},
            "line 2: prediction text contains a NUL character",
        ),
        (
            {"matcher": "m", "prediction": "\u0001\u200b", "signal": "create"},
            "line 2: prediction text has only control characters",
        ),
        (
            {"matcher": "m", "prediction": "p", "prediction_id": 1, "signal": "confirm"},
            'line 2: "prediction" and "prediction_id" exclude each other',
        ),
        (
            {"matcher": "m", "prediction_id": "1", "signal": "confirm"},
            'line 2: "prediction_id" is text; write a prediction id',
        ),
        (
            {"matcher": "m", "prediction_id": 99, "signal": "confirm", "store": "global"},
            "call 2: no prediction with id 99",
        ),
    ],
)
def test_a_bad_import_line_is_named_and_imports_nothing(
    thatch: Runner, tmp_path: Path, line: dict[str, object], error: str
) -> None:
    good = {"matcher": "naming a new module", "prediction": "use a short noun", "signal": "create"}
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({**good, "store": "global"}) + "\n" + json.dumps(line) + "\n")
    refused = thatch("predictions", "import", str(calls), check=False)
    assert refused.returncode != 0
    assert error in refused.stderr
    assert as_json(thatch("predictions", "list", "all", "--json")) == []


def test_an_import_line_may_name_its_prediction_by_id(thatch: Runner, tmp_path: Path) -> None:
    args = [
        "predictions", "update", "--matcher", "naming a new module", "--prediction",
        "use a short noun", "--signal", "create", "--store", "global", "--json",
    ]  # fmt: skip
    first = as_json(thatch(*args))
    kept = first["prediction"]["id"]
    calls = tmp_path / "calls.jsonl"
    line = {"matcher": "naming a package", "prediction_id": kept, "signal": "confirm"}
    calls.write_text(json.dumps({**line, "store": "global"}) + "\n")
    assert as_json(thatch("predictions", "import", str(calls), "--json")) == {
        "calls": 1,
        "reinforced": 1,
    }
    (only,) = as_json(thatch("predictions", "list", "all", "--json"))
    assert (only["id"], only["confirm_count"]) == (kept, 1.0)
