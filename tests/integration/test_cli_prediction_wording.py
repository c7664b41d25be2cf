"""Paraphrases linked, opposites named: ``thatch predictions update`` with the real model."""

from __future__ import annotations

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
