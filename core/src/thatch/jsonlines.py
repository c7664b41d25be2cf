"""Reading JSON objects from lines, with errors that name the line and the fix.

Import files (memories, decision-model updates) and stdin query lines all
take one JSON object a line; they share this so every bad line is reported
the same way, before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from thatch.plugin.errors import InvalidInputError
from thatch.unicode_fix import has_surrogate_escape, scrub


def parse_object(text: str, where: str, example: str) -> dict[str, Any]:
    """``text`` as a JSON object; ``where`` names it in errors, ``example`` shows the shape.

    A ``\\ud800`` escape decodes to a lone surrogate nothing can store; it
    becomes U+FFFD (see :mod:`thatch.unicode_fix`).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{where} is not JSON ({exc.msg}); write one object like {example}"
        ) from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{where} is not a JSON object; write one like {example}")
    return scrub(data) if has_surrogate_escape(text) else data


def json_objects(
    lines: Iterable[str], source: str, example: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each non-blank line's object, with its place ("FILE line N") for later errors."""
    for _number, where, data in numbered_json_objects(lines, source, example):
        yield where, data


def numbered_json_objects(
    lines: Iterable[str], source: str, example: str
) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """As :func:`json_objects`, with each line's number (blank lines count) first."""
    for number, raw in enumerate(lines, 1):
        if raw.strip():
            where = f"{source} line {number}"
            yield number, where, parse_object(raw, where, example)


def check_required_text(data: Mapping[str, Any], where: str, keys: Sequence[str]) -> None:
    """Every key in ``keys`` holds a non-blank string."""
    for key in keys:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise InvalidInputError(f'{where} has no "{key}" text; add it')


def check_optional_text(data: Mapping[str, Any], where: str, keys: Sequence[str]) -> None:
    """Every key in ``keys`` is absent, null or a string."""
    for key in keys:
        if data.get(key) is not None and not isinstance(data[key], str):
            raise InvalidInputError(f'{where}: "{key}" must be a string or null')
