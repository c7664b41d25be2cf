"""Folders and files thatch creates stay its owner's, whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from thatch import private
from thatch.plugin.sqlite import create_private


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_level_created_is_private(tmp_path: Path, open_umask: None) -> None:
    deep = tmp_path / "state" / "thatch" / "spool"
    private.make_private_dirs(deep)
    for folder in (tmp_path / "state", tmp_path / "state" / "thatch", deep):
        assert mode(folder) == 0o700, folder


def test_an_existing_folder_keeps_its_mode(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    private.make_private_dirs(folder / "inner")
    assert mode(folder) == 0o755
    assert mode(folder / "inner") == 0o700


def test_harness_folders_and_files_are_never_writable_by_others(
    tmp_path: Path, open_umask: None
) -> None:
    private.make_shared_dirs(tmp_path / "a" / "b")
    assert mode(tmp_path / "a") == 0o755
    assert mode(tmp_path / "a" / "b") == 0o755
    assert private.shared_mode() == 0o644
    assert private.shared_mode(executable=True) == 0o755


def test_a_sidecar_another_user_could_read_is_refused(tmp_path: Path) -> None:
    database = tmp_path / "sessions.db"
    wal = tmp_path / "sessions.db-wal"
    wal.write_bytes(b"")
    wal.chmod(0o644)
    with pytest.raises(private.UnsafeFileError, match=r"sessions\.db-wal"):
        create_private(database)
    assert not database.exists()  # nothing opened or created
    wal.chmod(0o600)
    create_private(database)
    assert mode(database) == 0o600


def test_a_linked_sidecar_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_bytes(b"")
    (tmp_path / "thatch.db-shm").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(private.UnsafeFileError, match="is a link"):
        create_private(tmp_path / "thatch.db")


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a file another user owns")
def test_a_sidecar_another_user_owns_is_refused(tmp_path: Path) -> None:
    wal = tmp_path / "sessions.db-wal"
    wal.write_bytes(b"")
    wal.chmod(0o600)
    os.chown(wal, 65534, 65534)
    with pytest.raises(private.UnsafeFileError, match="belongs to uid 65534"):
        create_private(tmp_path / "sessions.db")
