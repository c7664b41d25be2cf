"""Checking a tool call's arguments against the tool's JSON Schema.

The agent reads the error and retries, so every message names the argument
and says what would be accepted::

    argument 'limit' must be an integer from 1 to 50, got 'x'
    unknown argument 'lable'; expected one of: label, content, store, branch

Only the subset :mod:`thatch.tools.schema` produces is understood: an
object of named properties (``required``, ``additionalProperties: false``)
whose values are strings, integers, numbers, booleans or arrays, with
``enum``, ``minimum``/``maximum`` and ``minLength``/``maxLength``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from thatch.plugin.errors import InvalidInputError

#: A string longer than this is described by its length, not quoted.
_QUOTE_LIMIT = 40


def validate_arguments(
    schema: Mapping[str, Any], arguments: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Check ``arguments`` against ``schema``; return them with defaults filled in.

    A null value for an optional argument counts as not given. Raises
    :class:`InvalidInputError` naming every bad argument, separated by ``; ``.
    """
    given: Mapping[str, Any] = {} if arguments is None else arguments
    if not isinstance(given, Mapping):
        raise InvalidInputError(
            f"arguments must be a JSON object of named values, got {_show(given)}"
        )
    properties: Mapping[str, Mapping[str, Any]] = schema.get("properties", {})
    required = tuple(schema.get("required", ()))
    closed = schema.get("additionalProperties", True) is False
    problems = [
        f"missing required argument {name!r}: pass {expected(properties.get(name, {}))}"
        for name in required
        if given.get(name) is None
    ]
    checked: dict[str, Any] = {}
    for name, value in given.items():
        if name not in properties:
            if closed:
                problems.append(_unknown(name, properties))
            else:
                checked[name] = value
            continue
        if value is None:
            continue
        problem, clean = check_value(name, properties[name], value)
        if problem:
            problems.append(problem)
        else:
            checked[name] = clean
    if problems:
        raise InvalidInputError("; ".join(problems))
    for name, prop in properties.items():
        if name not in checked and "default" in prop:
            checked[name] = prop["default"]
    return checked


def check_value(name: str, schema: Mapping[str, Any], value: Any) -> tuple[str | None, Any]:
    """One value against its property schema: (problem or None, the value to use).

    Integral floats (``5.0``) become ints, as JSON does not tell them apart.
    """
    wrong = f"argument {name!r} must be {expected(schema)}, got {_show(value)}"
    kind = schema.get("type")
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    if kind is not None and not _is_type(kind, value):
        return wrong, value
    if "enum" in schema and value not in schema["enum"]:
        return wrong, value
    if isinstance(value, str) and not _length_fits(schema, len(value)):
        return wrong, value
    if kind in ("integer", "number") and not _in_range(schema, value):
        return wrong, value
    if kind == "array" and "items" in schema:
        items = []
        for index, item in enumerate(value):
            problem, clean = check_value(f"{name}[{index}]", schema["items"], item)
            if problem:
                return problem, value
            items.append(clean)
        value = items
    return None, value


def expected(schema: Mapping[str, Any]) -> str:
    """What a property accepts, in words: 'an integer from 1 to 50'."""
    if "enum" in schema:
        return "one of (" + ", ".join(str(option) for option in schema["enum"]) + ")"
    kind = schema.get("type")
    if kind == "string":
        return _string_words(schema)
    if kind in ("integer", "number"):
        return ("an integer" if kind == "integer" else "a number") + _range_words(schema)
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        items = schema.get("items")
        return f"a list (each item {expected(items)})" if items else "a list"
    if kind == "object":
        return "an object"
    return "a value"


def _is_type(kind: str, value: Any) -> bool:
    # bool is an int in Python but never a number in JSON.
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list | tuple)
    if kind == "object":
        return isinstance(value, Mapping)
    return True


def _length_fits(schema: Mapping[str, Any], length: int) -> bool:
    shortest: int = schema.get("minLength", 0)
    longest: int = schema.get("maxLength", length)
    return shortest <= length <= longest


def _in_range(schema: Mapping[str, Any], number: float) -> bool:
    low, high = schema.get("minimum"), schema.get("maximum")
    return (low is None or number >= low) and (high is None or number <= high)


def _string_words(schema: Mapping[str, Any]) -> str:
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if low == 1:
        words = "a non-empty string"
    elif low > 1:
        words = f"a string of at least {low} characters"
    else:
        words = "a string"
    if high is not None:
        words += f"{' and' if low > 1 else ' of'} at most {high} characters"
    return words


def _range_words(schema: Mapping[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f" from {low} to {high}"
    if low is not None:
        return f" of at least {low}"
    if high is not None:
        return f" of at most {high}"
    return ""


def _unknown(name: str, properties: Mapping[str, Any]) -> str:
    if not properties:
        return f"unknown argument {name!r}; this tool takes no arguments"
    message = f"unknown argument {name!r}; expected one of: {', '.join(properties)}"
    close = difflib.get_close_matches(name, list(properties), n=1)
    return message + (f" (did you mean {close[0]!r}?)" if close else "")


def _show(value: Any) -> str:
    """A short rendering of what the agent sent."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        if len(value) > _QUOTE_LIMIT:
            return f"a string of {len(value)} characters"
        return repr(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} items"
    return type(value).__name__
