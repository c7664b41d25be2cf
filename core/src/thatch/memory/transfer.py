"""JSON Lines export and import.

An export line is one memory: ``{"label", "content", "store", "branch",
"archived", "created_at", "updated_at"}``. An import line needs ``label``,
``content`` and ``store`` (``branch`` and ``archived`` are optional, other
keys are ignored), so an export can be imported again as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

import attrs

from thatch.jsonlines import check_optional_text, check_required_text, json_objects
from thatch.memory.names import validate_branch, validate_label, validate_store
from thatch.memory.writer import MemoryInput
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.records import Memory
from thatch.serialize import to_json_data

EXAMPLE = '{"label": "tabs", "content": "...", "store": "global"}'


@attrs.frozen
class ImportLine:
    """One parsed line of an import file."""

    memory: MemoryInput
    archived: bool = False


def export_line(memory: Memory) -> str:
    """One memory as a JSON line (no vector: vectors belong to a model, not to the fact)."""
    data = to_json_data(memory)
    keep = ("label", "content", "store", "branch", "archived", "created_at", "updated_at")
    return json.dumps({key: data[key] for key in keep}, ensure_ascii=False)


def parse_lines(lines: Iterable[str], source: str) -> Iterator[ImportLine]:
    """Parse and validate every line; errors name ``source`` and the line number."""
    for where, data in json_objects(lines, source, EXAMPLE):
        check_required_text(data, where, ("label", "store"))
        if not isinstance(data.get("content"), str):
            raise InvalidInputError(f'{where} has no "content" text; add it')
        check_optional_text(data, where, ("branch",))
        try:
            validate_store(data["store"])
            validate_label(data["label"])
            validate_branch(data.get("branch"))
        except InvalidInputError as exc:
            raise InvalidInputError(f"{where}: {exc}") from None
        yield ImportLine(
            memory=MemoryInput(
                label=data["label"],
                content=data["content"],
                store=data["store"],
                branch=data.get("branch"),
            ),
            archived=data.get("archived") is True,
        )
