"""The peer check and the private folder, without a daemon."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
from thatch.daemon.security import UnsafeRuntimeDirError, peer_allowed, peer_uid, private_dir


def test_peer_uid_of_a_socketpair_is_ours() -> None:
    one, other = socket.socketpair(socket.AF_UNIX)
    with one, other:
        assert peer_uid(one) == os.getuid()


@pytest.mark.parametrize(
    ("peer", "owner", "allowed"),
    [(1000, 1000, True), (1001, 1000, False), (0, 1000, False), (None, 1000, True)],
)
def test_only_the_owner_is_allowed(peer: int | None, owner: int, allowed: bool) -> None:
    assert peer_allowed(peer, owner) is allowed


def test_private_dir_is_created_0700_and_tightened(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    private_dir(str(folder))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o755)
    private_dir(str(folder))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand a folder to another user")
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir()
    os.chown(folder, 65534, 65534)
    with pytest.raises(UnsafeRuntimeDirError, match="belongs to uid 65534"):
        private_dir(str(folder))
