"""Importing memories: every line checked against the file and the storage, then written.

The check reads the whole file before anything is written, so a bad line, a
file that contradicts itself or a label that holds other content changes
nothing. Without overwrite, an import is as careful as ``thatch remember``:
it never replaces what a memory says.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

import attrs

from thatch.memory.transfer import ImportLine
from thatch.memory.writer import MemoryInput, MemoryWriter, Prepared, prepare, replaces
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.records import ImportResult, Memory, RememberResult
from thatch.plugin.sql_rows import archived_memory
from thatch.plugin.storage import MemoryStorage

#: Lines written per call of the writer: an import holds this many results, whatever its size.
IMPORT_BATCH = 512
#: Lines in conflict a refusal names; it counts the others.
NAMED_CONFLICTS = 10
_LOW_64 = (1 << 64) - 1


@attrs.frozen
class ImportPlan:
    """What the check of an import found: every line sound, none in conflict."""

    #: How many lines hold a memory.
    lines: int
    #: Numbers of the lines that repeat an earlier line exactly: counted unchanged, not written.
    repeats: frozenset[int] = frozenset()

    @property
    def to_write(self) -> int:
        """How many lines the import writes (or finds unchanged)."""
        return self.lines - len(self.repeats)


def check_import(
    storage: MemoryStorage, lines: Iterable[ImportLine], *, overwrite: bool
) -> ImportPlan:
    """Check every line; raise :class:`InvalidInputError` naming the file and lines, or plan.

    A line is refused when its memory is not valid, when an earlier line
    gives the same store and label other fields (a line that repeats an
    earlier one exactly is counted once), when its label holds an archived
    memory with other content, or (without ``overwrite``) any memory with
    other content.
    """
    # Each (store, label) seen so far, as a 64-bit digest, to the line that gave
    # it and a digest of that line's fields packed in one int: a file of any
    # size is checked in little memory (a 50 MB file of 50,000 lines in ~5 MB).
    seen: dict[int, int] = {}
    repeats: set[int] = set()
    # The first conflicts, to name, and how many there are: a file of conflicts stays small.
    taken: list[tuple[ImportLine, Memory]] = []
    conflicts = 0
    count = 0
    for line in lines:
        count += 1
        prepared = _prepared(line)
        key = (line.memory.store, line.memory.label)
        name, fields = _digest(list(key)), _fingerprint(line)
        earlier = seen.get(name)
        if earlier is not None:
            if earlier & _LOW_64 != fields:
                raise InvalidInputError(
                    f"{line.source} lines {earlier >> 64} and {line.number} both give memory "
                    f"{key[1]!r} in store {key[0]}, with different fields: the file "
                    "contradicts itself; keep one of the two lines"
                )
            repeats.add(line.number)
            continue
        seen[name] = (line.number << 64) | fields
        stored = storage.get_memory(*key)
        if stored is None or not replaces(stored, prepared):
            continue
        if stored.archived:
            # Not even overwrite may replace it: say so before anything is written.
            raise InvalidInputError(f"{line.where}: {archived_memory(*key)}, or leave the line out")
        if not overwrite:
            conflicts += 1
            if len(taken) < NAMED_CONFLICTS:
                taken.append((line, stored))
    if conflicts:
        raise InvalidInputError(_taken_message(taken, conflicts))
    return ImportPlan(lines=count, repeats=frozenset(repeats))


def write_import(
    writer: MemoryWriter,
    storage: MemoryStorage,
    lines: Iterable[ImportLine],
    plan: ImportPlan,
    *,
    overwrite: bool,
    on_saved: Callable[[RememberResult], None] | None = None,
) -> ImportResult:
    """Write checked ``lines`` (``plan`` is their check) in batches; the totals.

    A line with ``archived: true`` archives its memory once the memory's batch
    is committed; archiving a memory that was not is an update.
    """
    counts: Counter[str] = Counter(unchanged=len(plan.repeats))
    pending: deque[ImportLine] = deque()

    def saved(result: RememberResult) -> None:
        # The writer reports each item in the order it was given.
        line = pending.popleft()
        if line.archived and not result.memory.archived:
            archived = storage.set_archived(result.memory.store, result.memory.label, True)
            action = "updated" if result.action == "unchanged" else result.action
            result = attrs.evolve(result, memory=archived or result.memory, action=action)
        counts[result.action] += 1
        counts["redactions"] += result.redactions
        if on_saved is not None:
            on_saved(result)

    def inputs(batch: Iterable[ImportLine]) -> Iterator[MemoryInput]:
        for line in batch:
            pending.append(line)
            yield line.memory

    fresh = (line for line in lines if line.number not in plan.repeats)
    while batch := list(islice(fresh, IMPORT_BATCH)):
        writer.remember_many(inputs(batch), overwrite=overwrite, on_saved=saved)
    return ImportResult(
        created=counts["created"],
        updated=counts["updated"],
        unchanged=counts["unchanged"],
        redactions=counts["redactions"],
    )


def _prepared(line: ImportLine) -> Prepared:
    """The line's memory validated and redacted; an error names the file and line."""
    try:
        return prepare(line.memory)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{line.where}: {exc}") from None


def _fingerprint(line: ImportLine) -> int:
    """A digest of everything a line says, to tell a repeated line from a contradicting one."""
    memory = line.memory
    return _digest(
        [
            memory.content,
            memory.branch,
            line.archived,
            None if memory.created_at is None else memory.created_at.isoformat(),
            None if memory.updated_at is None else memory.updated_at.isoformat(),
        ]
    )


def _digest(fields: list[Any]) -> int:
    """64 bits of a hash of ``fields``: two different ones agree once in 2**64."""
    encoded = json.dumps(fields).encode()
    return int.from_bytes(hashlib.blake2b(encoded, digest_size=8).digest(), "big")


def _taken_message(taken: list[tuple[ImportLine, Memory]], conflicts: int) -> str:
    """The refusal of ``conflicts`` lines in conflict, ``taken`` the first of them."""
    source = taken[0][0].source
    named = ", ".join(
        f"line {line.number} {stored.label!r} in {stored.store}" for line, stored in taken
    )
    more = conflicts - len(taken)
    if more > 0:
        named += f" and {more} more"
    lines, them = ("line", "it") if conflicts == 1 else ("lines", "them")
    return (
        f"{source}: {conflicts} {lines} would replace a memory that holds other content "
        f"({named}); nothing was imported; to replace {them}, import again with --overwrite "
        f"(overwrite=True in Python), or give the {lines} other labels"
    )
