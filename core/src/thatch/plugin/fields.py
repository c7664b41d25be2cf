"""Readers of a hook payload's fields, with errors that name the field.

A harness plugin reads its JSON with these so that every malformed payload
fails the same way: :class:`thatch.plugin.errors.InvalidInputError` naming
the field (``payload field 'tool_input.command' must be a string, got a
number``), never the value, which may hold a secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from thatch.plugin.errors import InvalidInputError


def text_field(
    data: Mapping[str, Any], key: str, *, allow_empty: bool = False, where: str = ""
) -> str:
    """``data[key]`` as a string; InvalidInputError naming ``where + key`` otherwise."""
    value = data.get(key)
    if not isinstance(value, str) or (not value and not allow_empty):
        wanted = "a string" if allow_empty else "a non-empty string"
        raise InvalidInputError(
            f"payload field '{where}{key}' must be {wanted}, got {describe_value(value)}"
        )
    return value


def optional_text(
    data: Mapping[str, Any], key: str, *, where: str = "", keep_empty: bool = False
) -> str | None:
    """``data[key]`` if it is a string; None when absent (or empty, unless ``keep_empty``)."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(
            f"payload field '{where}{key}' must be a string, got {describe_value(value)}"
        )
    return value if value or keep_empty else None


def optional_flag(data: Mapping[str, Any], key: str, *, where: str = "") -> bool:
    """``data[key]`` if it is true or false; False when absent."""
    value = data.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInputError(
            f"payload field '{where}{key}' must be true/false, got {describe_value(value)}"
        )
    return value


def describe_value(value: Any) -> str:
    """What a wrong value is, in words a user knows from JSON (never the value itself)."""
    if value is None:
        return "nothing (the field is missing)"
    if value == "":
        return "an empty string"
    kind = {
        str: "a string",
        bool: "true/false",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "an object",
    }
    return kind.get(type(value), f"a {type(value).__name__}")
