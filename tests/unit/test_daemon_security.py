"""The peer check and the private folders, without a daemon."""

from __future__ import annotations

import os
import socket
import stat
import tempfile
from pathlib import Path

import pytest
from thatch import rundir, socketguard
from thatch.daemon.security import (
    UnsafeRuntimeDirError,
    link_socket,
    peer_allowed,
    peer_uid,
    private_dir,
    remove_socket,
    socket_to_bind,
)


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


# -- where the daemon binds: a private, unpredictable folder for a long runtime folder ----
@pytest.fixture
def long_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> rundir.RunDir:
    """A home whose socket path is too long to bind, and a temporary folder of the test's."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    located = rundir.locate({"THATCH_HOME": str(tmp_path / ("h" * 90))})
    assert located.socket_linked
    private_dir(located.runtime_dir)
    return located


def test_a_short_socket_path_is_bound_where_it_is(tmp_path: Path) -> None:
    located = rundir.locate({"THATCH_HOME": str(tmp_path)})
    assert not located.socket_linked
    assert socket_to_bind(located) == located.socket_path
    assert stat.S_IMODE(os.stat(located.runtime_dir).st_mode) == 0o700


def test_a_long_one_is_bound_in_a_new_private_folder_nobody_can_guess(
    long_home: rundir.RunDir,
) -> None:
    first = socket_to_bind(long_home)
    folder = os.path.dirname(first)
    assert os.path.dirname(folder) == tempfile.gettempdir()
    assert os.path.basename(first) == "daemon.sock"
    assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
    assert rundir.bindable(first)
    # Nothing links to it yet: the next daemon makes another, randomly named.
    assert os.path.dirname(socket_to_bind(long_home)) != folder


def test_the_linked_folder_is_reused_while_ours_and_private(long_home: rundir.RunDir) -> None:
    bound = socket_to_bind(long_home)
    link_socket(long_home.socket_path, bound)
    assert os.readlink(long_home.socket_path) == bound
    assert socketguard.linked_socket(long_home.socket_path) == bound
    assert socket_to_bind(long_home) == bound
    os.chmod(os.path.dirname(bound), 0o755)
    assert os.path.dirname(socket_to_bind(long_home)) != os.path.dirname(bound)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand a folder to another user")
def test_a_linked_folder_of_another_user_is_replaced(long_home: rundir.RunDir) -> None:
    bound = socket_to_bind(long_home)
    link_socket(long_home.socket_path, bound)
    os.chown(os.path.dirname(bound), 65534, 65534)
    assert os.path.dirname(socket_to_bind(long_home)) != os.path.dirname(bound)


def test_the_folder_bound_before_is_preferred(long_home: rundir.RunDir) -> None:
    before = socket_to_bind(long_home)
    assert socket_to_bind(long_home, previous=before) == before


def test_a_link_is_replaced_in_one_rename_and_removed_with_its_folder(
    long_home: rundir.RunDir,
) -> None:
    first, second = socket_to_bind(long_home), socket_to_bind(long_home)
    link_socket(long_home.socket_path, first)
    link_socket(long_home.socket_path, second)
    assert os.readlink(long_home.socket_path) == second
    assert sorted(os.listdir(long_home.runtime_dir)) == ["daemon.sock"]
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind(second)
    remove_socket(long_home.socket_path, second)
    assert not os.path.lexists(long_home.socket_path)
    assert not os.path.exists(os.path.dirname(second))


def test_removing_leaves_a_link_to_another_socket(long_home: rundir.RunDir) -> None:
    ours, other = socket_to_bind(long_home), socket_to_bind(long_home)
    link_socket(long_home.socket_path, other)
    remove_socket(long_home.socket_path, ours)
    assert os.readlink(long_home.socket_path) == other
