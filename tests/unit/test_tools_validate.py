"""Tool arguments checked against their schemas: every message names the argument."""

from __future__ import annotations

from typing import Any

import pytest
from thatch.plugin.errors import InvalidInputError
from thatch.tools.schema import arguments, boolean, integer, string
from thatch.tools.validate import expected, validate_arguments

SCHEMA = arguments(
    {
        "label": string("label", max_length=10),
        "content": string("content"),
        "limit": integer("limit", minimum=1, maximum=50, default=5),
        "signal": string("signal", enum=("create", "confirm")),
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "archived": boolean("archived"),
        "tags": {"type": "array", "items": string("tag")},
    },
    "label",
)


def _error(arguments: Any, schema: dict[str, Any] = SCHEMA) -> str:
    with pytest.raises(InvalidInputError) as caught:
        validate_arguments(schema, arguments)
    return str(caught.value)


def test_missing_required_argument_is_named_with_what_to_pass() -> None:
    assert _error({"content": "x"}) == (
        "missing required argument 'label': pass a non-empty string of at most 10 characters"
    )


def test_null_counts_as_missing_for_a_required_argument() -> None:
    assert "missing required argument 'label'" in _error({"label": None})


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("x", "argument 'limit' must be an integer from 1 to 50, got 'x'"),
        (0, "argument 'limit' must be an integer from 1 to 50, got 0"),
        (51, "argument 'limit' must be an integer from 1 to 50, got 51"),
        (2.5, "argument 'limit' must be an integer from 1 to 50, got 2.5"),
        (True, "argument 'limit' must be an integer from 1 to 50, got true"),
        ([1], "argument 'limit' must be an integer from 1 to 50, got a list of 1 items"),
    ],
)
def test_wrong_integer_names_the_argument_and_the_range(given: Any, message: str) -> None:
    assert _error({"label": "a", "limit": given}) == message


def test_below_minimum_without_maximum() -> None:
    schema = arguments({"days": integer("days", minimum=1)})
    assert (
        _error({"days": -3}, schema) == "argument 'days' must be an integer of at least 1, got -3"
    )


def test_enum_lists_the_choices() -> None:
    assert _error({"label": "a", "signal": "yes"}) == (
        "argument 'signal' must be one of (create, confirm), got 'yes'"
    )


def test_unknown_argument_lists_the_expected_ones_and_the_closest() -> None:
    assert _error({"label": "a", "lable": "b"}) == (
        "unknown argument 'lable'; expected one of: label, content, limit, signal, ratio, "
        "archived, tags (did you mean 'label'?)"
    )


def test_unknown_argument_of_a_tool_without_arguments() -> None:
    assert _error({"store": "x"}, arguments({})) == (
        "unknown argument 'store'; this tool takes no arguments"
    )


def test_strings_empty_and_too_long() -> None:
    assert _error({"label": ""}) == (
        "argument 'label' must be a non-empty string of at most 10 characters, got ''"
    )
    long = "y" * 500
    assert _error({"label": long}) == (
        "argument 'label' must be a non-empty string of at most 10 characters, "
        "got a string of 500 characters"
    )


def test_other_types() -> None:
    assert _error({"label": 3}).endswith("got 3")
    assert _error({"label": "a", "archived": "yes"}) == (
        "argument 'archived' must be true or false, got 'yes'"
    )
    assert _error({"label": "a", "ratio": 2}) == (
        "argument 'ratio' must be a number from 0 to 1, got 2"
    )
    assert _error({"label": "a", "tags": ["ok", 7]}) == (
        "argument 'tags[1]' must be a non-empty string, got 7"
    )
    assert _error({"label": "a", "tags": "ok"}) == (
        "argument 'tags' must be a list (each item a non-empty string), got 'ok'"
    )


def test_every_problem_is_reported_at_once() -> None:
    message = _error({"limit": "x", "extra": 1})
    assert message.split("; ")[0].startswith("missing required argument 'label'")
    assert "argument 'limit' must be" in message
    assert "unknown argument 'extra'" in message


def test_arguments_must_be_an_object() -> None:
    assert (
        _error(["label"])
        == "arguments must be a JSON object of named values, got a list of 1 items"
    )


def test_defaults_are_filled_and_nulls_dropped() -> None:
    given = {"label": "a", "content": None, "limit": 7.0}
    checked = validate_arguments(SCHEMA, given)
    assert checked == {"label": "a", "limit": 7, "archived": False}
    assert isinstance(checked["limit"], int)
    assert given == {"label": "a", "content": None, "limit": 7.0}


def test_no_arguments_at_all_is_an_empty_object() -> None:
    assert validate_arguments(arguments({"flag": boolean("f")}), None) == {"flag": False}


def test_open_schemas_pass_unknown_arguments_through() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert validate_arguments(schema, {"a": "x", "b": 1}) == {"a": "x", "b": 1}


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        (string("s", min_length=0), "a string"),
        (
            string("s", min_length=3, max_length=9),
            "a string of at least 3 characters and at most 9 characters",
        ),
        (integer("i"), "an integer"),
        (integer("i", maximum=4), "an integer of at most 4"),
        ({"type": "object"}, "an object"),
        ({}, "a value"),
    ],
)
def test_expected_in_words(schema: dict[str, Any], words: str) -> None:
    assert expected(schema) == words


def test_schema_builder_refuses_a_required_argument_it_does_not_define() -> None:
    with pytest.raises(ValueError, match="label"):
        arguments({"content": string("c")}, "label")
