"""JSON Lines export and import.

An export line is one memory: ``{"label", "content", "store", "branch",
"archived", "created_at", "updated_at"}``. An import line needs ``label``,
``content`` and ``store``; the other keys of an export are optional, and any
other key is an error (a typo such as ``"brnach"`` would otherwise be lost
without a word), so an export can be imported again as it is.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from thatch.jsonlines import check_optional_text, check_required_text, numbered_json_objects
from thatch.memory.names import validate_branch, validate_label, validate_store
from thatch.memory.writer import MemoryInput
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.records import Memory
from thatch.serialize import to_json_data

EXAMPLE = '{"label": "tabs", "content": "...", "store": "global"}'
#: The keys of an export line, in the order it writes them.
EXPORT_KEYS = ("label", "content", "store", "branch", "archived", "created_at", "updated_at")
#: How far in the future a line's time may be: another machine's clock may run ahead.
CLOCK_SKEW = timedelta(minutes=5)
_TIME_EXAMPLE = "2025-03-01T12:00:00+00:00"


@attrs.frozen
class ImportLine:
    """One parsed line of an import file."""

    memory: MemoryInput
    #: True archives the memory; False or absent leaves its archived state as it is.
    archived: bool = False
    #: The file as errors name it ("stdin" for stdin), and the line's number in it.
    source: str = "the import"
    number: int = 0

    @property
    def where(self) -> str:
        """The line as errors name it: ``FILE line N``."""
        return f"{self.source} line {self.number}"


class ParsedLines:
    """The lines of an import source, parsed afresh each time they are read.

    An import reads its file twice, to check it and then to write it, and
    holds one batch at a time whatever the file's size. ``read`` gives the
    raw lines from the first each time it is called.
    """

    def __init__(self, read: Callable[[], Iterable[str]], source: str) -> None:
        self._read = read
        self._source = source
        # One clock for both readings: a line's time is judged the same way twice.
        self._now = datetime.now(UTC)

    def __iter__(self) -> Iterator[ImportLine]:
        return parse_lines(self._read(), self._source, now=self._now)


def export_line(memory: Memory) -> str:
    """One memory as a JSON line (no vector: vectors belong to a model, not to the fact)."""
    data = to_json_data(memory)
    return json.dumps({key: data[key] for key in EXPORT_KEYS}, ensure_ascii=False)


def parse_lines(
    lines: Iterable[str], source: str, *, now: datetime | None = None
) -> Iterator[ImportLine]:
    """Parse and validate every line; errors name ``source`` and the line number.

    ``now`` (default: the clock) is what a line's time may not be after, give
    or take :data:`CLOCK_SKEW`.
    """
    latest = (now or datetime.now(UTC)) + CLOCK_SKEW
    for number, where, data in numbered_json_objects(lines, source, EXAMPLE):
        _check_keys(data, where)
        check_required_text(data, where, ("label", "store"))
        if not isinstance(data.get("content"), str):
            raise InvalidInputError(f'{where} has no "content" text; add it')
        check_optional_text(data, where, ("branch",))
        archived = data.get("archived")
        if archived is not None and not isinstance(archived, bool):
            raise InvalidInputError(
                f'{where}: "archived" must be true or false, not {json.dumps(archived)}'
            )
        try:
            validate_store(data["store"])
            validate_label(data["label"])
            validate_branch(data.get("branch"))
        except InvalidInputError as exc:
            raise InvalidInputError(f"{where}: {exc}") from None
        created, updated = (_time(data, key, where, latest) for key in ("created_at", "updated_at"))
        if created is not None and updated is not None and updated < created:
            raise InvalidInputError(
                f'{where}: "updated_at" {data["updated_at"]} is before "created_at" '
                f"{data['created_at']}; a memory is updated after it is made"
            )
        yield ImportLine(
            memory=MemoryInput(
                label=data["label"],
                content=data["content"],
                store=data["store"],
                branch=data.get("branch"),
                # A line with only the time of its last change was made then at the latest.
                created_at=created or updated,
                updated_at=updated,
            ),
            archived=archived is True,
            source=source,
            number=number,
        )


def _check_keys(data: Mapping[str, Any], where: str) -> None:
    for key in data:
        if key not in EXPORT_KEYS:
            close = difflib.get_close_matches(key, EXPORT_KEYS, n=1)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            raise InvalidInputError(
                f"{where}: unknown key {json.dumps(key)}; {hint}"
                f"the keys are: {', '.join(EXPORT_KEYS)}"
            )


def _time(data: Mapping[str, Any], key: str, where: str, latest: datetime) -> datetime | None:
    """The time under ``key`` (absent or null: None), as an aware UTC datetime."""
    value = data.get(key)
    if value is None:
        return None
    fix = f"write an ISO 8601 time with its offset, as exports do, e.g. {_TIME_EXAMPLE}"
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise InvalidInputError(f'{where}: "{key}" {json.dumps(value)} is not a time; {fix}')
    if moment.tzinfo is None:
        raise InvalidInputError(f'{where}: "{key}" {value} has no time zone offset; {fix}')
    if moment > latest:
        raise InvalidInputError(
            f'{where}: "{key}" {value} is in the future; give the time the memory was '
            "saved, or leave the key out for the time of the import"
        )
    return moment.astimezone(UTC)
