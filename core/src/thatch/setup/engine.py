"""Applying setup plans: backups, atomic writes, the manifest, uninstall and status.

The flow for one harness and scope::

    installed = engine.installed(state_dir, target.name, key)
    edits = engine.plan(target.changes(context), installed)
    print(engine.diff(edits))                       # --dry-run
    engine.apply(edits, state_dir=..., target=target.name, scope_key=key)

``--uninstall`` is :func:`plan_uninstall` (for ``--dry-run``) or
:func:`uninstall`. Plan and apply one target at a time: :func:`apply`
refuses a plan whose files changed since it was made.

A whole file several installations want (the Claude Code skills every
project setup writes) stays until the last of them is uninstalled; see
:mod:`thatch.setup.manifest`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import attrs

from thatch.plugin.errors import InvalidInputError, ThatchError
from thatch.plugin.setup import (
    Change,
    Retired,
    RetiredBlock,
    RetiredEntry,
    RetiredFile,
    RetiredItem,
    SetupContext,
)
from thatch.private import make_shared_dirs
from thatch.setup import files, manifest
from thatch.setup.diff import diff
from thatch.setup.manifest import FileRecord, Installation
from thatch.setup.planner import FileEdit, plan

#: The kinds of change that take out what an older setup left.
RETIRED_KINDS = (RetiredItem, RetiredEntry, RetiredBlock, RetiredFile)

__all__ = [
    "ApplyReport",
    "FileEdit",
    "apply",
    "describe",
    "diff",
    "installed",
    "plan",
    "plan_uninstall",
    "retired_of",
    "scope_key",
    "status",
    "uninstall",
]


@attrs.frozen
class ApplyReport:
    """What :func:`apply` or :func:`uninstall` did."""

    target: str
    scope: str
    #: Files created or changed, and files removed.
    written: tuple[Path, ...] = ()
    deleted: tuple[Path, ...] = ()
    #: Copies taken before a file was first changed.
    backups: tuple[Path, ...] = ()
    #: Folders thatch had created and removed now that they are empty.
    removed_dirs: tuple[Path, ...] = ()
    #: What was left alone because the user changed it.
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether anything on disk changed."""
        return bool(self.written or self.deleted or self.removed_dirs)


def scope_key(context: SetupContext) -> str:
    """The manifest's name for a context's scope: ``project:/abs/dir`` or ``global:/home/me``."""
    folder = context.project if context.scope == "project" else context.user_home
    if folder is None:
        raise InvalidInputError("a project setup needs a project folder; pass --project DIR")
    return f"{context.scope}:{os.path.abspath(folder)}"


def installed(state_dir: Path, target: str, scope: str) -> Installation | None:
    """What the manifest says ``target`` installed in ``scope`` (None: nothing).

    Its ``co_owners`` name the whole files other installations own too, which
    :func:`plan` leaves in place when this one no longer wants them.
    """
    installs = manifest.load(state_dir)
    key = manifest.manifest_key(target, scope)
    install = installs.get(key)
    if install is None:
        return None
    return attrs.evolve(install, co_owners=manifest.co_owners(installs, key))


def status(state_dir: Path) -> list[Installation]:
    """Every installation the manifest records, by target and scope."""
    installs = manifest.load(state_dir)
    return [installs[key] for key in sorted(installs)]


def describe(install: Installation) -> list[str]:
    """One line per file: what thatch added there (for ``thatch setup --status``)."""
    lines = []
    for record in install.files:
        parts = [".".join(entry.keys) for entry in record.entries]
        parts += [f"an entry in {'.'.join(item.keys)}" for item in record.items]
        parts += [f"the {block.name!r} block" for block in record.blocks]
        if record.owned:
            parts.append(
                "the whole file (executable)" if record.owned.executable else "the whole file"
            )
        made = " (created by thatch)" if record.created else ""
        lines.append(f"{record.path}{made}: {', '.join(parts)}")
    return lines


def plan_uninstall(
    state_dir: Path, target: str, scope: str, retired: Sequence[Retired] = ()
) -> list[FileEdit]:
    """The edits that take back what ``target`` installed in ``scope`` (no writes).

    ``retired`` is what an older setup left (see :func:`retired_of`): it goes too.
    """
    kind, _, folder = scope.partition(":")
    inside = Path(folder) if kind == "project" else None
    return plan(retired, installed(state_dir, target, scope), inside=inside)


def retired_of(changes: Sequence[Change]) -> list[Retired]:
    """The changes among ``changes`` that take out what an older setup left."""
    return [change for change in changes if isinstance(change, RETIRED_KINDS)]


def uninstall(
    state_dir: Path, target: str, scope: str, retired: Sequence[Retired] = ()
) -> ApplyReport:
    """Remove exactly what the manifest says ``target`` added in ``scope``, and ``retired``."""
    return apply(
        plan_uninstall(state_dir, target, scope, retired),
        state_dir=state_dir,
        target=target,
        scope_key=scope,
    )


def apply(
    edits: Sequence[FileEdit], *, state_dir: Path, target: str, scope_key: str
) -> ApplyReport:
    """Carry out ``edits`` and record the result in the manifest.

    Before the first change to a file that existed before thatch, a copy goes
    to ``state_dir/setup-backups/<time>/<the file's absolute path>``. Writes
    are atomic and keep the file's mode. The manifest is updated even when a
    write fails half way, so what was done can still be undone.

    A whole file another installation owns already is thatch's, not the
    user's: it is not backed up, and its record takes over the first
    owner's origin (:func:`~thatch.setup.manifest.join`).
    """
    state_dir = Path(state_dir)
    installs = manifest.load(state_dir)  # a broken manifest stops us before any write
    for edit in edits:
        if files.read(edit.path).text != edit.old:
            raise InvalidInputError(
                f"{edit.path} changed after thatch setup planned its edits; run it again"
            )
    key = manifest.manifest_key(target, scope_key)
    edits = [_joined(edit, installs, key) for edit in edits]
    records: dict[Path, FileRecord | None] = {edit.path: edit.before for edit in edits}
    done = _Done()
    try:
        for edit in edits:
            try:
                records[edit.path] = _apply_one(edit, state_dir, done)
            except OSError as exc:
                raise ThatchError(
                    f"cannot write {exc.filename or edit.path} ({exc.strerror}); check that you "
                    "may write there, then run thatch setup again (what was done is recorded)"
                ) from None
        removable = {folder for edit in edits for folder in edit.remove_dirs}
        for folder in sorted(removable, key=lambda f: len(f.parts), reverse=True):
            with contextlib.suppress(OSError):  # not empty, or already gone: leave it
                folder.rmdir()
                done.removed_dirs.append(folder)
    finally:
        _record(state_dir, installs, key, target, scope_key, records)
    return ApplyReport(
        target=target,
        scope=scope_key,
        written=tuple(done.written),
        deleted=tuple(done.deleted),
        backups=tuple(done.backups),
        removed_dirs=tuple(done.removed_dirs),
        notes=tuple(note for edit in edits for note in edit.notes),
    )


def _joined(edit: FileEdit, installs: dict[str, Installation], key: str) -> FileEdit:
    """``edit`` with the origin of a whole file other installations own already."""
    if edit.record is None:
        return edit
    record = manifest.join(edit.record, installs, key)
    if record == edit.record:
        return edit
    return attrs.evolve(edit, record=record, backup_first=False)


@attrs.define
class _Done:
    written: list[Path] = attrs.Factory(list)
    deleted: list[Path] = attrs.Factory(list)
    backups: list[Path] = attrs.Factory(list)
    removed_dirs: list[Path] = attrs.Factory(list)
    backup_folder: Path | None = None


def _apply_one(edit: FileEdit, state_dir: Path, done: _Done) -> FileRecord | None:
    """Write one edit; returns the file's record as it now is."""
    record = edit.record
    if not edit.changed:
        return record
    if edit.backup_first and edit.old is not None:
        if done.backup_folder is None:
            done.backup_folder = files.new_backup_folder(state_dir)
        copy = files.backup(done.backup_folder, edit.path, edit.old, edit.old_mode)
        done.backups.append(copy)
        if record is not None:
            record = attrs.evolve(record, backup=copy)
    for folder in edit.make_dirs:
        make_shared_dirs(folder)
    if edit.new is None:
        edit.path.unlink(missing_ok=True)
        done.deleted.append(edit.path)
    else:
        files.write_atomic(edit.path, edit.new, edit.mode)
        done.written.append(edit.path)
    return record


def _record(
    state_dir: Path,
    installs: dict[str, Installation],
    key: str,
    target: str,
    scope: str,
    records: dict[Path, FileRecord | None],
) -> None:
    """Store the installation's records (dropping it when nothing is left), if they changed.

    The other owners of its whole files take their new content hash.
    """
    kept = tuple(record for record in records.values() if record is not None)
    updated = dict(installs)
    old = installs.get(key)
    if not kept:
        updated.pop(key, None)
    elif old is None or old.files != kept:
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        updated[key] = Installation(target=target, scope=scope, files=kept, updated=stamp)
    updated = manifest.share_content(updated, key)
    if updated != installs:
        manifest.save(state_dir, updated)
