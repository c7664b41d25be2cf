"""Planning: from the changes a harness wants to the exact new text of each file.

:func:`plan` reads files but writes nothing. Given what an earlier setup
installed (its :class:`~thatch.setup.manifest.Installation`), it also takes
back what is no longer wanted — with no changes at all, that is uninstall.
Every :class:`FileEdit` carries the manifest record the file will have
afterwards, so applying a plan and recording it are one step.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from thatch.plugin import blocks, jsonc
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.setup import (
    Change,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    RetiredBlock,
    RetiredEntry,
    RetiredFile,
    RetiredItem,
    TextBlock,
)
from thatch.setup import edits, files
from thatch.setup.manifest import (
    BlockRecord,
    EntryRecord,
    FileRecord,
    Installation,
    ItemRecord,
    KeyPath,
    OwnedRecord,
    canonical,
)


@attrs.frozen
class FileEdit:
    """What happens to one file: its text before and after (None: no file)."""

    path: Path
    old: str | None
    new: str | None
    old_mode: int | None = None
    #: The permission bits wanted after the write (None: keep the file's own).
    mode: int | None = None
    #: What thatch has in the file before this edit, and after it (None: nothing).
    before: FileRecord | None = None
    record: FileRecord | None = None
    #: Folders to create first (outermost first) and to remove after, if empty (deepest first).
    make_dirs: tuple[Path, ...] = ()
    remove_dirs: tuple[Path, ...] = ()
    #: The file existed before thatch and has no backup yet: copy it before changing it.
    backup_first: bool = False
    #: What was left alone, and why (user changes thatch will not undo).
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether applying this edit changes anything on disk."""
        if self.new != self.old:
            return True
        return self.new is not None and self.mode is not None and self.mode != self.old_mode


def plan(
    changes: Sequence[Change],
    installed: Installation | None = None,
    *,
    inside: Path | None = None,
) -> list[FileEdit]:
    """One edit per file that ``changes`` or ``installed`` touch, in the order first named.

    :param inside: for a project setup, the project folder: a file in it that
        a symbolic link sends outside it is refused (a cloned repository could
        otherwise plant ``CLAUDE.md -> ~/notes.md`` and have setup write there).
    Raises :class:`~thatch.plugin.errors.InvalidInputError` (nothing written) when a
    file cannot be read as what it should be, naming the file and the place,
    or leaves ``inside`` through a link.
    """
    wanted: dict[Path, list[Change]] = {}
    for change in changes:
        wanted.setdefault(_absolute(change.path), []).append(change)
    before = {_absolute(record.path): record for record in installed.files} if installed else {}
    if inside is not None:
        for path in [*wanted, *before]:
            _refuse_escape(path, inside)
    # Whole files other installations own too: given up, not taken back.
    shared = installed.co_owners if installed else {}
    order = [*wanted, *(path for path in before if path not in wanted)]
    return [
        _plan_file(path, wanted.get(path, []), before.get(path), shared.get(path, ()))
        for path in order
    ]


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


def _refuse_escape(path: Path, folder: Path) -> None:
    """Refuse ``path`` when it lies in ``folder`` but a symbolic link takes it elsewhere."""
    root = _absolute(folder)
    if not path.is_relative_to(root):
        return  # user-level files (skills, ~/.claude.json) are not the project's to guard
    real_root = root.resolve()
    real = path.resolve()
    if real.is_relative_to(real_root):
        return
    link = next(
        (p for p in [path, *path.parents] if p.is_relative_to(root) and p.is_symlink()), path
    )
    raise InvalidInputError(
        f"{link} is a symbolic link to {link.resolve()}, outside the project {root}: thatch "
        f"setup will not write {path.name} there (nothing was changed). Replace the link with "
        "a file of its own, or set thatch up with --global"
    )


def _plan_file(
    path: Path, changes: list[Change], before: FileRecord | None, co_owners: tuple[str, ...]
) -> FileEdit:
    kinds = {_KIND[type(change)] for change in changes}
    if before is not None:
        kinds |= _recorded_kinds(before)
    if len(kinds) > 1:
        raise InvalidInputError(
            f"setup asks for {' and '.join(sorted(kinds))} changes in {path}; "
            "a file takes one kind (a harness plugin bug: report it)"
        )
    current = files.read(path)
    kind = kinds.pop()
    if kind == "JSON":
        return _plan_json(path, changes, before, current)
    if kind == "text block":
        return _plan_text(path, changes, before, current)
    return _plan_owned(path, changes, before, current, co_owners)


_KIND = {
    JsonEntry: "JSON",
    JsonListItem: "JSON",
    RetiredItem: "JSON",
    RetiredEntry: "JSON",
    TextBlock: "text block",
    RetiredBlock: "text block",
    OwnedFile: "whole-file",
    RetiredFile: "whole-file",
}


def _recorded_kinds(record: FileRecord) -> set[str]:
    kinds = set()
    if record.entries or record.items or record.created_keys:
        kinds.add("JSON")
    if record.blocks:
        kinds.add("text block")
    if record.owned:
        kinds.add("whole-file")
    return kinds or {"JSON"}


# -- JSON -----------------------------------------------------------------------------------


def _plan_json(
    path: Path, changes: list[Change], before: FileRecord | None, current: files.Current
) -> FileEdit:
    source = str(path)
    text = current.text or ""
    _refuse_broken(text, source, changes)
    _refuse_lenient(text, source, changes)
    created: list[KeyPath] = list(before.created_keys) if before else []
    old_entries = {record.keys: record for record in before.entries} if before else {}
    old_items = {(r.keys, canonical(r.item)): r for r in before.items} if before else {}
    entries: dict[KeyPath, EntryRecord] = {}
    items: dict[tuple[KeyPath, str], ItemRecord] = {}
    notes: list[str] = []
    # What an older setup left goes first, so what replaces it replaces nothing of the user's.
    for change in changes:
        if isinstance(change, RetiredItem | RetiredEntry):
            text = _retire_json(text, change, source, notes)
    for change in changes:
        if isinstance(change, RetiredItem | RetiredEntry):
            continue
        assert isinstance(change, JsonEntry | JsonListItem)
        node = jsonc.find(jsonc.parse(text, source), change.keys)
        if isinstance(change, JsonEntry):
            old = old_entries.get(change.keys)
            if node is not None and canonical(node.data) == canonical(change.value):
                if old is not None:  # ours already; otherwise the user's own and not ours to remove
                    entries[change.keys] = old
                continue
            previous = None if node is None else text[node.start : node.end]
            if old is not None:
                previous = old.previous
            text, made = edits.set_value(text, change.keys, change.value, source)
            created += made
            entries[change.keys] = EntryRecord(change.keys, change.value, previous)
        else:
            key = (change.keys, canonical(change.item))
            if node is not None and node.kind == "array" and _index_of(node, key[1]) is not None:
                if key in old_items:
                    items[key] = old_items[key]
                continue
            text, made = edits.append_item(text, change.keys, change.item, source)
            created += made
            items[key] = ItemRecord(change.keys, change.item)
    # What an earlier setup added and this one no longer wants goes, newest first.
    for key, item_record in reversed(list(old_items.items())):
        if key not in items:
            text = _undo_item(text, item_record, source, notes)
    for keys, entry_record in reversed(list(old_entries.items())):
        if keys not in entries:
            text = _undo_entry(text, entry_record, source, notes)
    text = edits.prune(text, created, source)
    root = jsonc.parse(text, source)
    still = tuple(dict.fromkeys(keys for keys in created if jsonc.find(root, keys) is not None))
    bare = text.strip("\ufeff \t\r\n")
    empty = not bare or (root is not None and root.data == {} and bare == "{}")
    return _finish(
        path,
        current,
        text,
        before,
        notes,
        deletable=empty,
        entries=tuple(entries.values()),
        items=tuple(items.values()),
        created_keys=still,
    )


def _strict_readers(changes: list[Change]) -> list[str]:
    """The harnesses that read the file of ``changes`` as strict JSON."""
    return [
        change.strict_for
        for change in changes
        if isinstance(change, JsonEntry | JsonListItem | RetiredItem | RetiredEntry)
        and change.strict_for
    ]


def _refuse_broken(text: str, source: str, changes: list[Change]) -> None:
    """Refuse a file that does not parse, before anything else is planned."""
    try:
        jsonc.parse(text, source)
    except jsonc.JsoncError as error:
        readers = _strict_readers(changes)
        if readers:
            raise error.for_strict_reader(readers[0]) from None
        raise


def _refuse_lenient(text: str, source: str, changes: list[Change]) -> None:
    """Refuse to edit a file its reader ignores for its comments or trailing commas.

    Editing it would report success while the harness still reads nothing
    from it, thatch's entries and the user's own alike.
    """
    readers = _strict_readers(changes)
    found = jsonc.leniencies(text, source) if readers else []
    if found:
        raise jsonc.StrictJsonError(source, found, readers[0])


def _retire_json(
    text: str, change: RetiredItem | RetiredEntry, source: str, notes: list[str]
) -> str:
    """``text`` without what an older setup left there (unchanged when it is gone already)."""
    node = jsonc.find(jsonc.parse(text, source), change.keys)
    if isinstance(change, RetiredEntry):
        if node is None or canonical(node.data) != canonical(change.value):
            return text
        notes.append(f"{source}: {change.reason}")
        return edits.remove_member(text, change.keys, source)
    index = (
        None if node is None or node.kind != "array" else _index_of(node, canonical(change.item))
    )
    if index is None:
        return text
    notes.append(f"{source}: {change.reason}")
    if change.keep is not None:
        return edits.replace_item(text, change.keys, index, change.keep, source)
    text = edits.remove_item(text, change.keys, index, source)
    # A list the older setup's entries alone filled goes with them (so does its object).
    return edits.prune(
        text, [change.keys[:size] for size in range(1, len(change.keys) + 1)], source
    )


def _index_of(node: jsonc.Node, wanted: str) -> int | None:
    """The last item of the list ``node`` equal to the canonical value ``wanted``."""
    found = None
    for index, element in enumerate(node.elements):
        if canonical(element.value.data) == wanted:
            found = index
    return found


def _undo_entry(text: str, record: EntryRecord, source: str, notes: list[str]) -> str:
    node = jsonc.find(jsonc.parse(text, source), record.keys)
    if node is None:
        return text
    if canonical(node.data) != canonical(record.value):
        notes.append(f"{source}: kept {_dotted(record.keys)}, changed since thatch set it")
        return text
    if record.previous is not None:
        return edits.replace_raw(text, record.keys, record.previous, source)
    return edits.remove_member(text, record.keys, source)


def _undo_item(text: str, record: ItemRecord, source: str, notes: list[str]) -> str:
    node = jsonc.find(jsonc.parse(text, source), record.keys)
    index = (
        None if node is None or node.kind != "array" else _index_of(node, canonical(record.item))
    )
    if index is None:
        notes.append(
            f"{source}: the entry thatch added to {_dotted(record.keys)} is no longer there "
            "as thatch wrote it; left the rest as it is"
        )
        return text
    return edits.remove_item(text, record.keys, index, source)


def _dotted(keys: KeyPath) -> str:
    return ".".join(keys)


# -- Markdown blocks --------------------------------------------------------------------------


def _plan_text(
    path: Path, changes: list[Change], before: FileRecord | None, current: files.Current
) -> FileEdit:
    source = str(path)
    text = current.text or ""
    old_blocks = {record.name: record for record in before.blocks} if before else {}
    records: dict[str, BlockRecord] = {}
    notes: list[str] = []
    # Where a block of an older setup was: today's block takes its place.
    place: int | None = None
    for change in changes:
        if isinstance(change, RetiredBlock):
            text, at = blocks.cut(text, change.begin, change.end)
            if at is not None:
                notes.append(f"{source}: {change.reason}")
                place = at if place is None else min(place, at)
    for change in changes:
        if isinstance(change, RetiredBlock):
            continue
        assert isinstance(change, TextBlock)
        if blocks.unclosed(text, change.name):
            text, note = blocks.close(text, change.name, change.text, source)
            notes.append(note)
        there = blocks.find(text, change.name, source) is not None
        if not there and place is not None:
            text = text[:place] + blocks.render(change.name, change.text) + text[place:]
            place, there = None, True
        else:
            text, separator = blocks.put(text, change.name, change.text, source)
        if there:
            old = old_blocks.get(change.name)
            separator = old.separator if old else ""
        records[change.name] = BlockRecord(change.name, separator)
    for name, record in reversed(list(old_blocks.items())):
        if name not in records:
            text = blocks.remove(text, name, record.separator, source)
    return _finish(
        path,
        current,
        text,
        before,
        notes,
        deletable=not text.strip(),
        blocks=tuple(records.values()),
    )


# -- whole files ----------------------------------------------------------------------------


def _plan_owned(
    path: Path,
    changes: list[Change],
    before: FileRecord | None,
    current: files.Current,
    co_owners: tuple[str, ...] = (),
) -> FileEdit:
    retired = [change for change in changes if isinstance(change, RetiredFile)]
    changes = [change for change in changes if isinstance(change, OwnedFile)]
    if retired and not changes and not (before and before.owned):
        return _retire_file(path, retired[0], current)
    contents = {change.content for change in changes if isinstance(change, OwnedFile)}
    if len(contents) > 1:
        raise InvalidInputError(f"setup asks for {path} with two different contents (a plugin bug)")
    if changes:
        change = changes[-1]
        assert isinstance(change, OwnedFile)
        if current.mode is None:
            mode = files.default_mode(change.executable)
        else:
            mode = files.with_execute(current.mode) if change.executable else current.mode
        replaced = before.owned.replaced if before and before.owned else current.text is not None
        owned = OwnedRecord(files.sha256(change.content), change.executable, replaced)
        return _finish(path, current, change.content, before, [], mode=mode, owned=owned)
    if co_owners:
        return _release(path, before, current, co_owners)
    return _undo_owned(path, before, current)


def _retire_file(path: Path, change: RetiredFile, current: files.Current) -> FileEdit:
    """Delete a file an older setup wrote, while it holds what was seen (else keep it)."""
    if current.text is None or current.text != change.content:
        return _finish(path, current, current.text, None, [])
    edit = _finish(path, current, None, None, [f"{path}: {change.reason}"])
    return attrs.evolve(edit, remove_dirs=(path.parent,))


def _release(
    path: Path, before: FileRecord | None, current: files.Current, co_owners: tuple[str, ...]
) -> FileEdit:
    """Give up this installation's claim on a file others still own: it stays as it is."""
    return FileEdit(
        path=path,
        old=current.text,
        new=current.text,
        old_mode=current.mode,
        before=before,
        record=None,
        notes=(f"{path}: kept, still used by {', '.join(co_owners)}",),
    )


def _undo_owned(path: Path, before: FileRecord | None, current: files.Current) -> FileEdit:
    """Delete a file thatch wrote, or put back the one it replaced; keep one the user edited."""
    record = before.owned if before else None
    if current.text is None or record is None:
        return _finish(path, current, None, before, [])
    if files.sha256(current.text) != record.sha256:
        return _finish(
            path, current, current.text, before, [f"{path}: kept, changed since thatch wrote it"]
        )
    if not record.replaced:
        return _finish(path, current, None, before, [])
    saved = files.read(before.backup) if before and before.backup else files.Current(None, None)
    if saved.text is None:
        note = f"{path}: kept, the copy of what was there before thatch is gone"
        return _finish(path, current, current.text, before, [note])
    return _finish(path, current, saved.text, before, [], mode=saved.mode)


# -- common ---------------------------------------------------------------------------------


def _finish(
    path: Path,
    current: files.Current,
    new: str | None,
    before: FileRecord | None,
    notes: Iterable[str],
    *,
    mode: int | None = None,
    deletable: bool = False,
    entries: tuple[EntryRecord, ...] = (),
    items: tuple[ItemRecord, ...] = (),
    blocks: tuple[BlockRecord, ...] = (),
    owned: OwnedRecord | None = None,
    created_keys: tuple[KeyPath, ...] = (),
) -> FileEdit:
    """The edit for ``path``, with the record of what thatch has in it afterwards."""
    created = current.text is None or (before is not None and before.created)
    make_dirs = _missing_dirs(path) if current.text is None and new is not None else ()
    dirs = tuple(dict.fromkeys([*(before.created_dirs if before else ()), *make_dirs]))
    record: FileRecord | None = FileRecord(
        path=path,
        created=created,
        created_dirs=dirs,
        backup=before.backup if before else None,
        entries=entries,
        items=items,
        blocks=blocks,
        owned=owned,
        created_keys=created_keys,
    )
    remove_dirs: tuple[Path, ...] = ()
    if record is not None and not record.holds_anything:
        record = None
        if current.text is None or (created and deletable):
            # Nothing of ours is left: a file thatch created holds nothing of the user's either.
            new = None
        make_dirs = ()
        remove_dirs = tuple(reversed(dirs))
    return FileEdit(
        path=path,
        old=current.text,
        new=new,
        old_mode=current.mode,
        mode=mode,
        before=before,
        record=record,
        make_dirs=make_dirs,
        remove_dirs=remove_dirs,
        backup_first=(
            current.text is not None
            and new != current.text
            and not (before is not None and (before.created or before.backup))
        ),
        notes=tuple(notes),
    )


def _missing_dirs(path: Path) -> tuple[Path, ...]:
    """The folders above ``path`` that do not exist yet, outermost first."""
    missing = []
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return tuple(reversed(missing))
