"""Paraphrases linked, opposites named: ``thatch predictions update`` with the real model."""

from __future__ import annotations

from typing import Any

import pytest

from integration.conftest import Runner, as_json

SITUATION = "when writing parsing functions"


def _update(thatch: Runner, prediction: str, *extra: str) -> list[str]:
    return [
        "predictions", "update", "--matcher", SITUATION, "--prediction", prediction,
        "--signal", "create", "--store", "global", *extra,
    ]  # fmt: skip


def test_the_issue_s_paraphrase_links_to_the_existing_prediction(thatch: Runner) -> None:
    first = as_json(thatch(*_update(thatch, "handle error cases before the happy path", "--json")))
    again = as_json(
        thatch(*_update(thatch, "deal with the error cases before the happy path", "--json"))
    )
    assert again["prediction"]["id"] == first["prediction"]["id"]
    assert again["outcome"] == "unchanged"
    assert again["similar"] is None


def test_an_opposite_is_kept_apart_and_named(thatch: Runner) -> None:
    first = as_json(thatch(*_update(thatch, "Prefer single quotes for strings.", "--json")))
    said = thatch(*_update(thatch, "Prefer double quotes for strings.")).stdout
    lines = said.splitlines()
    assert lines[0].startswith("created: prediction 2 in global")
    assert lines[1].startswith(f"  similar: prediction {first['prediction']['id']} (cosine 0.9")
    assert "'Prefer single quotes for strings.', not linked: opposite wording" in lines[1]
    assert lines[2] == "  if the user meant that one, run again with --prediction-id 1"
    named = as_json(thatch(*_update(thatch, "Prefer double quotes in strings.", "--json")))
    assert named["outcome"] == "unchanged"
    assert named["similar"] is None


def test_an_explicit_prediction_id_links_and_an_unknown_one_changes_nothing(
    thatch: Runner,
) -> None:
    first = as_json(thatch(*_update(thatch, "Prefer single quotes for strings.", "--json")))
    kept = first["prediction"]["id"]
    confirm = [
        "predictions", "update", "--matcher", "formatting string literals",
        "--prediction-id", str(kept), "--signal", "confirm", "--store", "global", "--json",
    ]  # fmt: skip
    linked = as_json(thatch(*confirm))
    assert linked["prediction"]["id"] == kept
    unknown = thatch(
        "predictions", "update", "--matcher", "formatting string literals",
        "--prediction-id", "999", "--signal", "confirm", "--store", "global", check=False,
    )  # fmt: skip
    assert unknown.returncode != 0
    assert "999" in unknown.stderr
    # One prediction still, now confirmed once; the unknown id wrote nothing.
    (only,) = as_json(thatch("predictions", "list", "global", "--json"))
    assert only["id"] == kept
    assert only["confirm_count"] == 1.0


def _record(thatch: Runner, matcher: str, prediction: str, signal: str) -> dict[str, Any]:
    args = [
        "predictions", "update", "--matcher", matcher, "--prediction", prediction,
        "--signal", signal, "--store", "t/a", "--json",
    ]  # fmt: skip
    found: dict[str, Any] = as_json(thatch(*args))
    return found


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Write the code, then the tests", "Write the tests, then the code"),
        ("Deploy to staging, then production", "Deploy to production, then staging"),
        ("Run the tests before pushing", "Push, then run the tests"),
        ("Write the tests before the code", "Write the code, then the tests"),
        ("Write the test first", "Write the code first, then the test"),
        ("Fix it in this PR", "Fix it in a separate PR"),
    ],
)
def test_the_other_order_or_qualifier_is_never_a_confirm(
    thatch: Runner, first: str, second: str
) -> None:
    created = _record(thatch, "Tests", first, "create")
    corrected = _record(thatch, "Tests", second, "confirm")
    assert corrected["outcome"] == "created"
    assert corrected["prediction"]["id"] != created["prediction"]["id"]
    assert corrected["similar"]["prediction"]["id"] == created["prediction"]["id"]
    assert corrected["similar"]["reason"].startswith("opposite wording")
    listed = as_json(thatch("predictions", "list", "t/a", "--json"))
    (kept,) = [p for p in listed if p["statement"] == first]
    assert kept["confirm_count"] == 0.0


def test_a_statement_without_a_number_absorbs_no_numbered_one(thatch: Runner) -> None:
    plain = _record(thatch, "Indenting code", "Indent with spaces.", "create")
    four = _record(thatch, "Indenting code", "Use 4 spaces for indentation.", "create")
    two = _record(thatch, "Indenting code", "Use 2 spaces for indentation.", "create")
    ids = {plain["prediction"]["id"], four["prediction"]["id"], two["prediction"]["id"]}
    assert len(ids) == 3
    assert (four["outcome"], two["outcome"]) == ("created", "created")
    assert four["similar"]["prediction"]["id"] == plain["prediction"]["id"]
    assert four["similar"]["reason"] == "not safely the same (a number only one states: 4)"


def test_a_negated_situation_gets_its_own_matcher(thatch: Runner) -> None:
    touches = _record(
        thatch, "Reviewing a pull request that touches old tech debt",
        "Leave the old tech debt alone.", "create",
    )  # fmt: skip
    not_touching = _record(
        thatch, "Reviewing a pull request that does not touch old tech debt",
        "Review only the diff.", "create",
    )  # fmt: skip
    assert not_touching["matcher_created"]
    assert not_touching["matcher"]["id"] != touches["matcher"]["id"]
    # A paraphrase of the same situation still reuses its matcher.
    again = _record(
        thatch, "Reviewing a pull request which touches old tech debt",
        "Leave the old tech debt alone.", "confirm",
    )  # fmt: skip
    assert again["matcher"]["id"] == touches["matcher"]["id"]


def test_text_and_id_together_are_refused_and_change_nothing(thatch: Runner) -> None:
    first = _record(thatch, "Quoting strings", "Prefer single quotes for strings.", "create")
    kept = first["prediction"]["id"]
    args = [
        "predictions", "update", "--matcher", "Formatting strings", "--prediction",
        "Prefer double quotes for strings.", "--prediction-id", str(kept), "--signal", "confirm",
        "--store", "t/a",
    ]  # fmt: skip
    both = thatch(*args, check=False)
    assert both.returncode != 0
    assert f"--prediction and --prediction-id {kept} exclude each other" in both.stderr
    (only,) = as_json(thatch("predictions", "list", "t/a", "--json"))
    assert (only["id"], only["confirm_count"]) == (kept, 0.0)
