"""Prediction blocks: found wherever they stand, told apart by their first key, read by shape."""

from __future__ import annotations

import json

import pytest
from predlog_scenarios import (
    fence,
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
from thatch.predlog.blocks import (
    MalformedPrediction,
    StatedPrediction,
    is_prediction_block,
    legacy_predictions,
    predictions_in,
    readable_predictions,
    stated_confidence,
    stated_toward,
    yaml_blocks,
)

SECRET = "ghp_Fake0Example1Value2For3Tests4Only5Fa"


def _confidences(text: str) -> list[int]:
    return [stated.confidence for stated in predictions_in(text)]


# --- Finding blocks -----------------------------------------------------------------


def test_yaml_and_yml_fences_with_info_strings_are_found_in_order() -> None:
    text = (
        'Intro\n```yaml\na: 1\n```\nthen\n```YML title="x"\nb: 2\n```\n'
        "```python\nc = 3\n```\n~~~yaml\nd: 4\n~~~\n"
    )
    assert yaml_blocks(text) == ["a: 1", "b: 2", "d: 4"]


def test_blocks_inside_list_items_quotes_and_other_fences_are_found() -> None:
    inside_list = "1. First\n   ```yaml\n   prediction:\n     confidence: 1\n   ```\n"
    wrapped = "````markdown\n" + shape0(2, "x") + "\n````"
    after_tag = (
        "<result>```yaml\nprediction: {action: accept, toward: t, confidence: 3}\n```</result>"
    )
    assert yaml_blocks(inside_list) == ["prediction:\n  confidence: 1"]
    assert _confidences(wrapped) == [2]
    assert _confidences(after_tag) == [3]


def test_a_fence_that_never_closes_runs_to_the_end() -> None:
    assert _confidences("```yaml\nprediction: {action: accept, toward: t, confidence: 4}\n") == [4]


def test_a_longer_fence_holds_a_shorter_one() -> None:
    text = "````yaml\nprediction:\n  action: accept\n  toward: |\n    ```\n  confidence: 5\n````"
    assert predictions_in(text)[0].toward == "```\n"


# --- Detection ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    [
        "prediction:\n  confidence: 1",
        "# a comment\n\n# another\nprediction:\n  confidence: 1",
        "predictions:\n  - prediction: {}",
        "decision_1:\n  prediction:\n    confidence: 1",
        "prediction: [does not load",
        "decision_1:\n  prediction: [does not load",
        "---\nprediction: {}",
    ],
)
def test_prediction_blocks_are_told_by_their_first_key(block: str) -> None:
    assert is_prediction_block(block)


@pytest.mark.parametrize(
    "block",
    [
        "plan:\n  - a",
        "# the plan\nplan:\n  - a\nprediction: {}",
        "decision_1:\n  choice: keep\ndecision_2:\n  choice: drop",
        "decisions:\n  - a",
        "  - prediction: {}",
        "",
        "# only a comment",
    ],
)
def test_other_blocks_and_shape5_are_not_prediction_blocks(block: str) -> None:
    assert not is_prediction_block(block)


# --- Shapes -------------------------------------------------------------------------


def test_shape0_is_one_prediction_with_its_fields() -> None:
    text = fence(
        "prediction:\n  action: correct\n  toward: keep the old flag\n  confidence: 35\n"
        "  triggers: [review, rename]\n  levers:\n    cost: low\n  decision: dropped\n"
        "  choice: dropped\n  ruling: dropped\n"
    )
    assert predictions_in(text) == [
        StatedPrediction(
            "correct",
            "keep the old flag",
            35,
            {"triggers": ["review", "rename"], "levers": {"cost": "low"}},
        )
    ]


def test_shape1_comments_before_the_key_change_nothing() -> None:
    assert predictions_in(shape1(70, "x")) == predictions_in(shape0(70, "x"))


def test_shape2_items_each_give_one_prediction() -> None:
    stated = predictions_in(shape2([(60, "first"), (40, "second")]))
    assert [(s.confidence, s.toward) for s in stated] == [(60, "first"), (40, "second")]
    assert all("decision" not in s.fields for s in stated)


def test_shape3_keys_each_give_one_prediction_in_the_order_shown() -> None:
    text = fence(
        "decision_2:\n  prediction: {action: accept, toward: b, confidence: 20}\n"
        "decision_1:\n  prediction: {action: accept, toward: a, confidence: 10}\n"
    )
    assert _confidences(text) == [20, 10]
    assert _confidences(shape3([(55, "x"), (45, "y")])) == [55, 45]


def test_shape3_keys_without_a_prediction_give_nothing_beside_those_with_one() -> None:
    text = fence(
        "decision_1:\n  choice: skip\ndecision_2:\n"
        "  prediction: {action: accept, toward: b, confidence: 20}\n"
    )
    assert _confidences(text) == [20]


def test_shape4_keys_hold_the_fields_directly_and_choice_is_not_a_field() -> None:
    stated = predictions_in(shape4([(80, "split"), (30, "inline")]))
    assert [(s.confidence, s.toward) for s in stated] == [(80, "split"), (30, "inline")]
    assert stated[0].fields == {"triggers": ["review"]}


def test_shape5_and_plan_blocks_give_nothing_and_no_error() -> None:
    assert predictions_in(message(shape5())) == []
    assert predictions_in(message(plan_block())) == []


def test_several_blocks_give_their_predictions_block_by_block() -> None:
    text = message(shape2([(1, "a"), (2, "b")]), shape5(), shape0(3, "c"), shape4([(4, "d")]))
    assert _confidences(text) == [1, 2, 3, 4]


def test_fields_are_json_able() -> None:
    text = fence(
        "prediction:\n  action: accept\n  toward: t\n  confidence: 50\n  due: 2026-12-01\n"
        "  at: 2026-12-01 10:00:00\n  tags: !!set {b: null, a: null}\n  blob: !!binary aGk=\n"
        "  ratio: .nan\n  1: one\n"
    )
    fields = predictions_in(text)[0].fields
    assert fields == {
        "due": "2026-12-01",
        "at": "2026-12-01T10:00:00",
        "tags": ["a", "b"],
        "blob": "aGk=",
        "ratio": "nan",
        "1": "one",
    }
    json.dumps(fields, allow_nan=False)


def test_secrets_in_toward_and_fields_are_redacted() -> None:
    text = fence(
        f'prediction:\n  action: accept\n  toward: "push with {SECRET}"\n  confidence: 50\n'
        f"  levers: [{SECRET}]\n"
    )
    stated = predictions_in(text)[0]
    assert SECRET not in stated.toward
    assert "REDACTED" in stated.toward
    assert SECRET not in json.dumps(stated.fields)


def test_a_toward_that_is_not_text_is_kept_as_text() -> None:
    text = fence("prediction:\n  action: accept\n  toward: [a, b]\n  confidence: 50\n")
    assert predictions_in(text)[0].toward == '["a", "b"]'


# --- Errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [("high", "'high'"), ("101", "101"), ("-1", "-1"), ("70.5", "70.5"), ("true", "True")],
)
def test_a_confidence_that_is_not_a_whole_number_0_to_100_is_named(value: str, shown: str) -> None:
    with pytest.raises(
        MalformedPrediction, match=rf"confidence {shown} is not a whole number 0–100"
    ):
        predictions_in(shape0(value, "x"))


def test_every_shape_checks_its_confidence_the_same_way() -> None:
    for text in (
        shape1("high", "x"),
        shape2([(1, "a"), ("high", "b")]),
        shape3([("high", "a")]),
        shape4([(1, "a"), ("high", "b")]),
    ):
        with pytest.raises(MalformedPrediction, match="confidence 'high' is not a whole number"):
            predictions_in(text)


@pytest.mark.parametrize(
    ("action", "shown"), [("maybe", "'maybe'"), ("[accept]", "['accept']"), ("7", "7")]
)
def test_an_action_other_than_accept_or_correct_is_refused(action: str, shown: str) -> None:
    body = f"prediction:\n  action: {action}\n  toward: t\n  confidence: 5\n"
    with pytest.raises(MalformedPrediction, match="is not accept or correct") as raised:
        predictions_in(fence(body))
    assert f"action {shown} " in str(raised.value)
    assert "write action: accept or action: correct" in str(raised.value)


def test_an_action_is_read_in_any_case() -> None:
    body = "prediction:\n  action: Correct\n  toward: t\n  confidence: 5\n"
    assert [stated.action for stated in predictions_in(fence(body))] == ["correct"]


def test_a_missing_confidence_or_action_is_named() -> None:
    with pytest.raises(MalformedPrediction, match="has no confidence"):
        predictions_in(fence("prediction:\n  action: accept\n  toward: t\n"))
    with pytest.raises(MalformedPrediction, match="has no action"):
        predictions_in(fence("prediction:\n  toward: t\n  confidence: 5\n"))


@pytest.mark.parametrize(
    "body",
    [
        "prediction:\n  toward: [unclosed\n",
        "prediction: 70",
        "prediction:",
        "predictions: 3",
        "predictions:\n  - decision: x\n    prediction: just text",
        "predictions:\n  - just text",
        "decision_1:\n  prediction: [a, b]",
        "prediction:\n- a\n- b",
    ],
)
def test_a_block_that_does_not_load_or_whose_prediction_is_not_a_mapping_raises(body: str) -> None:
    block = fence(body)
    assert is_prediction_block(yaml_blocks(block)[0])
    with pytest.raises(MalformedPrediction, match="Prediction block 1"):
        predictions_in(block)


def test_an_alias_bomb_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [*a{n - 1}, *a{n - 1}, *a{n - 1}, *a{n - 1}]" for n in range(1, 9)]
    body = "prediction:\n  action: accept\n  toward: t\n  confidence: 1\n"
    anchors = "".join(f"  {line}\n" for line in lines)
    with pytest.raises(MalformedPrediction, match="too large"):
        predictions_in(fence(body + anchors + "  bomb: *a8\n"))


def test_readable_predictions_skip_only_the_blocks_that_cannot_be_read() -> None:
    text = message(shape0(1, "a"), unloadable(), shape0("high", "b"), shape0(2, "c"))
    assert [s.confidence for s in readable_predictions(text)] == [1, 2]
    assert readable_predictions("Confidence: 150") == []


# --- The last Prediction (items 13, 14) ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "confidence", "toward"),
    [
        (shape0(10, "zero"), 10, "zero"),
        (shape1(11, "one"), 11, "one"),
        (message(shape0(1, "x"), shape2([(30, "a"), (85, "last item")])), 85, "last item"),
        (shape3([(1, "a"), (13, "last key")]), 13, "last key"),
        (shape4([(1, "a"), (14, "last key")]), 14, "last key"),
        (message(shape2([(1, "a")]), shape0(15, "last block"), shape5()), 15, "last block"),
        ("We should ship.\nConfidence: 16", 16, "We should ship"),
    ],
)
def test_stated_confidence_and_toward_use_the_last_prediction(
    text: str, confidence: int, toward: str
) -> None:
    assert stated_confidence(text) == confidence
    assert stated_toward(text) == toward


def test_a_bad_last_item_confidence_raises_exactly_as_for_shape0() -> None:
    shape0_error = pytest.raises(MalformedPrediction, match="confidence 'high' is not a whole")
    with shape0_error:
        stated_confidence(shape0("high", "x"))
    with pytest.raises(MalformedPrediction, match="confidence 'high' is not a whole"):
        stated_confidence(message(shape0(1, "x"), shape2([(30, "a"), ("high", "b")])))
    with pytest.raises(MalformedPrediction, match="confidence 'high' is not a whole"):
        stated_toward(shape2([("high", "b")]))


def test_a_text_without_a_prediction_has_no_stated_confidence() -> None:
    with pytest.raises(MalformedPrediction, match="states no Prediction"):
        stated_confidence(message(plan_block()))


# --- Legacy messages ----------------------------------------------------------------


def test_a_confidence_line_without_a_block_is_one_legacy_prediction() -> None:
    text = "I will keep the cache per process.\n**Confidence:** 70%\n"
    assert legacy_predictions(text) == [
        StatedPrediction("accept", "I will keep the cache per process", 70, {})
    ]
    assert predictions_in(text) == legacy_predictions(text)


def test_the_last_confidence_line_counts_and_its_paragraph_is_the_toward() -> None:
    text = "First idea. Confidence: 20\n\nBetter: drop the retry loop.\n\nConfidence: 60."
    assert legacy_predictions(text) == [
        StatedPrediction("accept", "Better: drop the retry loop", 60, {})
    ]


def test_lettered_rulings_each_give_a_legacy_prediction() -> None:
    text = (
        "Three rulings:\n\n"
        "A) Keep the cache per process. Confidence: 70\n"
        "(b) Drop the retry loop\n   Confidence: 55%\n"
        "- **Ruling C:** rename the flag\n  confidence: 40\n"
        "Ruling D: no confidence here\n"
    )
    assert predictions_in(text) == [
        StatedPrediction("accept", "Keep the cache per process", 70, {}, "a"),
        StatedPrediction("accept", "Drop the retry loop", 55, {}, "b"),
        StatedPrediction("accept", "rename the flag", 40, {}, "c"),
    ]


def test_a_ruling_ends_at_a_blank_line() -> None:
    text = "A) Keep the cache.\n\nConfidence: 70"
    assert legacy_predictions(text) == [StatedPrediction("accept", "A) Keep the cache", 70, {})]


def test_two_rulings_with_one_letter_raise() -> None:
    with pytest.raises(MalformedPrediction, match="ruling A appears twice"):
        legacy_predictions("A) x. Confidence: 1\na) y. Confidence: 2")


def test_a_legacy_confidence_gets_the_same_check() -> None:
    with pytest.raises(MalformedPrediction, match="confidence 150 is not a whole number 0–100"):
        legacy_predictions("Ship it. Confidence: 150")
    with pytest.raises(MalformedPrediction, match=r"confidence 0\.7 is not a whole number 0–100"):
        legacy_predictions("A) Ship it. Confidence: 0.7")


def test_prose_and_fenced_text_are_not_legacy_predictions() -> None:
    assert legacy_predictions("Confidence: high, as before.") == []
    assert legacy_predictions(message(plan_block())) == []
    assert legacy_predictions("```text\nConfidence: 80\n```") == []


def test_a_prediction_block_wins_over_confidence_lines() -> None:
    text = message("Confidence: 10", shape0(90, "x"))
    assert _confidences(text) == [90]
    # A block that is not a Prediction block leaves the legacy line its say.
    assert _confidences(message("Confidence: 10", shape5())) == [10]
    # A Prediction block that does not load is still one: no legacy fallback.
    assert readable_predictions(message("Confidence: 10", unloadable())) == []


def test_a_task_notification_s_text_reads_like_any_other() -> None:
    assert _confidences(task_notification(message(shape4([(65, "a"), (35, "b")])))) == [65, 35]


def test_a_field_that_holds_itself_is_refused() -> None:
    body = "prediction:\n  action: accept\n  toward: t\n  confidence: 1\n  loop: &loop [*loop]\n"
    with pytest.raises(MalformedPrediction, match="nest too deeply"):
        predictions_in(fence(body))
