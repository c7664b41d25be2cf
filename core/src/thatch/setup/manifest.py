"""The setup manifest: exactly what ``thatch setup`` added, so uninstall can take it back.

One JSON file, ``STATE_DIR/setup-manifest.json``, holds one
:class:`Installation` per harness and scope (``claude`` + ``project:/abs/dir``).
Each lists, per file, the JSON members and list items thatch added, its
Markdown blocks, the whole files it owns, whether thatch created the file
and which folders, and where the file's backup is.

Whole files may be shared: every Claude Code project setup owns the same
skills under ``~/.claude/skills``. Each installation that wants such a file
records it, all with the same origin (what was there before thatch: the
first owner's ``created``, ``backup`` and ``replaced``, taken over by
:func:`join`) and the same content hash (:func:`share_content`), so the file
stays until the last of them goes (:func:`co_owners`), which then undoes it
exactly as the first would have.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from thatch.plugin.errors import ConfigError
from thatch.setup.files import write_atomic

FILENAME = "setup-manifest.json"
VERSION = 1

KeyPath = tuple[str, ...]


def canonical(value: Any) -> str:
    """A text equal for equal JSON values (key order ignored; ``1`` and ``true`` differ)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@attrs.frozen
class EntryRecord:
    """A member thatch set (:class:`~thatch.plugin.setup.JsonEntry`)."""

    keys: KeyPath
    value: Any
    #: The JSON text that was there before thatch replaced it (None: the key was absent).
    previous: str | None = None


@attrs.frozen
class ItemRecord:
    """A list item thatch appended (:class:`~thatch.plugin.setup.JsonListItem`)."""

    keys: KeyPath
    item: Any


@attrs.frozen
class BlockRecord:
    """A Markdown block (:class:`~thatch.plugin.setup.TextBlock`)."""

    name: str
    #: The line breaks added before the block, removed with it.
    separator: str = ""


@attrs.frozen
class OwnedRecord:
    """A whole file thatch wrote (:class:`~thatch.plugin.setup.OwnedFile`)."""

    sha256: str
    executable: bool = False
    #: A file was there before; uninstall puts the backup back instead of deleting.
    replaced: bool = False


@attrs.frozen
class FileRecord:
    """Everything thatch added to one file."""

    path: Path
    #: The file did not exist before thatch wrote it.
    created: bool = False
    #: Folders thatch created for the file, outermost first.
    created_dirs: tuple[Path, ...] = ()
    #: The copy taken before thatch first changed the file.
    backup: Path | None = None
    entries: tuple[EntryRecord, ...] = ()
    items: tuple[ItemRecord, ...] = ()
    blocks: tuple[BlockRecord, ...] = ()
    owned: OwnedRecord | None = None
    #: Objects and lists thatch created in a JSON file, as key paths; removed once empty.
    created_keys: tuple[KeyPath, ...] = ()

    @property
    def holds_anything(self) -> bool:
        """Whether thatch still has something in the file."""
        return bool(self.entries or self.items or self.blocks or self.owned)


@attrs.frozen
class Installation:
    """What one harness's setup added in one scope."""

    target: str
    scope: str
    files: tuple[FileRecord, ...] = ()
    #: When it last changed (ISO 8601, UTC).
    updated: str = ""
    #: The whole files of this installation that others own too, with their
    #: manifest keys: taking one back leaves it to them. Filled in by
    #: :func:`thatch.setup.engine.installed`; never written to the manifest.
    co_owners: Mapping[Path, tuple[str, ...]] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def key(self) -> str:
        return manifest_key(self.target, self.scope)


def manifest_key(target: str, scope: str) -> str:
    """The manifest's key for a harness and scope: ``claude:project:/abs/dir``."""
    return f"{target}:{scope}"


def co_owners(installs: Mapping[str, Installation], key: str) -> dict[Path, tuple[str, ...]]:
    """Each whole file installation ``key`` owns that others own too, with their keys."""
    mine = installs.get(key)
    if mine is None:
        return {}
    owners = _owners(installs, exclude=key)
    return {
        record.path: owners[record.path]
        for record in mine.files
        if record.owned is not None and record.path in owners
    }


def join(record: FileRecord, installs: Mapping[str, Installation], key: str) -> FileRecord:
    """``record`` of installation ``key``, given the origin of a whole file others own already.

    What was there before thatch is what the first owner saw; this setup
    only saw thatch's file. Folders either created stay listed.
    """
    if record.owned is None:
        return record
    for other_key in sorted(installs):
        if other_key == key:
            continue
        for other in installs[other_key].files:
            if other.path == record.path and other.owned is not None:
                return attrs.evolve(
                    record,
                    created=other.created,
                    created_dirs=tuple(dict.fromkeys([*other.created_dirs, *record.created_dirs])),
                    backup=other.backup,
                    owned=attrs.evolve(record.owned, replaced=other.owned.replaced),
                )
    return record


def share_content(installs: Mapping[str, Installation], key: str) -> dict[str, Installation]:
    """``installs`` with the other owners of ``key``'s whole files holding its content hash.

    A newer setup rewrote the shared file; every owner now owns that text,
    so whichever goes last still recognises it as thatch's.
    """
    mine = installs.get(key)
    written = {r.path: r.owned for r in mine.files if r.owned is not None} if mine else {}
    shared = dict(installs)
    for other_key, install in installs.items():
        if other_key == key:
            continue
        files = tuple(
            attrs.evolve(
                record,
                owned=attrs.evolve(
                    record.owned,
                    sha256=written[record.path].sha256,
                    executable=written[record.path].executable,
                ),
            )
            if record.owned is not None and record.path in written
            else record
            for record in install.files
        )
        if files != install.files:
            shared[other_key] = attrs.evolve(install, files=files)
    return shared


def _owners(installs: Mapping[str, Installation], *, exclude: str) -> dict[Path, tuple[str, ...]]:
    """Who owns each whole file, by manifest key, leaving out ``exclude``."""
    owners: dict[Path, list[str]] = {}
    for key in sorted(installs):
        if key == exclude:
            continue
        for record in installs[key].files:
            if record.owned is not None:
                owners.setdefault(record.path, []).append(key)
    return {path: tuple(keys) for path, keys in owners.items()}


def path_of(state_dir: Path) -> Path:
    """Where the manifest lives."""
    return Path(state_dir) / FILENAME


def load(state_dir: Path) -> dict[str, Installation]:
    """Every installation in the manifest (none when there is no manifest yet)."""
    path = path_of(state_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text)
        installs = data["installs"]
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r} is not {VERSION}")
        return {key: _installation(value) for key, value in installs.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"{path} cannot be read ({exc}); thatch setup keeps what it installed there. "
            "Restore it from a backup, or move it away to start afresh (uninstall will then "
            "not know what to remove)"
        ) from None


def save(state_dir: Path, installs: Mapping[str, Installation]) -> None:
    """Write the manifest atomically (removed when nothing is installed)."""
    path = path_of(state_dir)
    if not installs:
        if path.exists():
            os.unlink(path)
        return
    data = {
        "version": VERSION,
        "installs": {key: _dump_installation(installs[key]) for key in sorted(installs)},
    }
    from thatch.private import make_private_dirs

    make_private_dirs(path.parent)
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=0o600)


# -- to and from JSON --------------------------------------------------------------------------


def _dump_installation(install: Installation) -> dict[str, Any]:
    return {
        "target": install.target,
        "scope": install.scope,
        "updated": install.updated,
        "files": [_dump_file(record) for record in install.files],
    }


def _dump_file(record: FileRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "path": str(record.path),
        "created": record.created,
        "created_dirs": [str(folder) for folder in record.created_dirs],
        "backup": None if record.backup is None else str(record.backup),
    }
    if record.entries:
        data["entries"] = [
            {"keys": list(e.keys), "value": e.value, "previous": e.previous} for e in record.entries
        ]
    if record.items:
        data["items"] = [{"keys": list(i.keys), "item": i.item} for i in record.items]
    if record.created_keys:
        data["created_keys"] = [list(keys) for keys in record.created_keys]
    if record.blocks:
        data["blocks"] = [{"name": b.name, "separator": b.separator} for b in record.blocks]
    if record.owned:
        data["owned"] = attrs.asdict(record.owned)
    return data


def _installation(data: dict[str, Any]) -> Installation:
    return Installation(
        target=str(data["target"]),
        scope=str(data["scope"]),
        updated=str(data.get("updated", "")),
        files=tuple(_file(item) for item in data["files"]),
    )


def _keys(value: list[Any]) -> KeyPath:
    if not all(isinstance(key, str) for key in value):
        raise TypeError(f"key path {value!r} is not a list of strings")
    return tuple(value)


def _file(data: dict[str, Any]) -> FileRecord:
    owned = data.get("owned")
    return FileRecord(
        path=Path(data["path"]),
        created=bool(data["created"]),
        created_dirs=tuple(Path(folder) for folder in data.get("created_dirs", ())),
        backup=None if data.get("backup") is None else Path(data["backup"]),
        entries=tuple(
            EntryRecord(_keys(e["keys"]), e["value"], e.get("previous"))
            for e in data.get("entries", ())
        ),
        items=tuple(ItemRecord(_keys(i["keys"]), i["item"]) for i in data.get("items", ())),
        blocks=tuple(
            BlockRecord(b["name"], b.get("separator", "")) for b in data.get("blocks", ())
        ),
        owned=None if owned is None else OwnedRecord(**owned),
        created_keys=tuple(_keys(keys) for keys in data.get("created_keys", ())),
    )
