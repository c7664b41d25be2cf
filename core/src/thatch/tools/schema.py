"""Small builders for the JSON Schemas of tool arguments.

Only the subset :mod:`thatch.tools.validate` checks is produced, so every
schema a tool publishes is one thatch enforces itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def arguments(properties: Mapping[str, Mapping[str, Any]], *required: str) -> dict[str, Any]:
    """An object schema with these properties; no other argument is accepted."""
    unknown = [name for name in required if name not in properties]
    if unknown:
        raise ValueError(f"required arguments {unknown} are not among the properties")
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: dict(prop) for name, prop in properties.items()},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


def string(
    description: str,
    *,
    min_length: int = 1,
    max_length: int | None = None,
    enum: Sequence[str] | None = None,
) -> dict[str, Any]:
    """A string argument (non-empty unless ``min_length=0``)."""
    schema: dict[str, Any] = {"type": "string", "description": description}
    if enum is not None:
        schema["enum"] = list(enum)
        return schema
    if min_length:
        schema["minLength"] = min_length
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


def integer(
    description: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    default: int | None = None,
) -> dict[str, Any]:
    """An integer argument, optionally bounded and with a default."""
    schema: dict[str, Any] = {"type": "integer", "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    if default is not None:
        schema["default"] = default
    return schema


def boolean(description: str, *, default: bool = False) -> dict[str, Any]:
    """A true/false argument."""
    return {"type": "boolean", "description": description, "default": default}
