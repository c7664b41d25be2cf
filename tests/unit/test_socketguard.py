"""The clients' check of the daemon's socket: nothing is sent to one that may not be ours."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from thatch import rundir, socketguard, wire
from thatch.socketguard import UnsafeSocketError

needs_root = pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand files to nobody")
NOBODY = 65534


class Listener:
    """A socket listening at ``path`` that records whether anyone connected or sent a byte."""

    def __init__(self, path: Path) -> None:
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen()
        self.server.settimeout(0.05)
        self.received = b""
        self.connected = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            self.connected = True
            with connection:
                connection.settimeout(1)
                try:
                    self.received += connection.recv(65536)
                    connection.sendall(b'{"ok": true}\n')
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "run"
    made.mkdir(mode=0o700)
    return made


@pytest.fixture
def listener(folder: Path) -> Iterator[Listener]:
    made = Listener(folder / "daemon.sock")
    yield made
    made.close()


def ping(path: Path | str) -> dict[str, object]:
    return wire.request(str(path), {"op": "ping"}, timeout=2.0)


def test_our_socket_in_our_folder_is_used(folder: Path, listener: Listener) -> None:
    assert ping(folder / "daemon.sock") == {"ok": True}
    assert listener.received == b'{"op":"ping"}\n'


def test_a_folder_others_can_only_read_is_fine(folder: Path, listener: Listener) -> None:
    folder.chmod(0o755)
    assert ping(folder / "daemon.sock") == {"ok": True}


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777, 0o1777])
def test_a_folder_others_can_write_is_refused(folder: Path, listener: Listener, mode: int) -> None:
    folder.chmod(mode)
    with pytest.raises(UnsafeSocketError, match="can be written by other users") as caught:
        ping(folder / "daemon.sock")
    assert f"then remove {folder}" in str(caught.value)  # the fix doctor gives too
    assert isinstance(caught.value, PermissionError)
    assert not listener.connected


@needs_root
def test_a_folder_of_another_user_is_refused(folder: Path, listener: Listener) -> None:
    os.chown(folder, NOBODY, NOBODY)
    with pytest.raises(UnsafeSocketError, match=f"belongs to uid {NOBODY}, not to you"):
        ping(folder / "daemon.sock")
    assert not listener.connected


@needs_root
def test_a_socket_of_another_user_is_refused(folder: Path, listener: Listener) -> None:
    os.chown(folder / "daemon.sock", NOBODY, NOBODY)
    with pytest.raises(UnsafeSocketError, match=f"daemon.sock belongs to uid {NOBODY}"):
        ping(folder / "daemon.sock")
    assert not listener.connected


def test_a_file_that_is_not_a_socket_is_refused(folder: Path) -> None:
    (folder / "daemon.sock").write_text("")
    with pytest.raises(UnsafeSocketError, match="is not a socket"):
        ping(folder / "daemon.sock")


def test_a_symlinked_socket_is_refused(folder: Path, listener: Listener) -> None:
    (folder / "link.sock").symlink_to(folder / "daemon.sock")
    with pytest.raises(UnsafeSocketError, match="is a symbolic link"):
        ping(folder / "link.sock")
    assert not listener.connected


def test_no_socket_or_no_folder_is_not_found(folder: Path) -> None:
    with pytest.raises(FileNotFoundError):
        ping(folder / "daemon.sock")
    with pytest.raises(FileNotFoundError):
        ping(folder / "missing" / "daemon.sock")


@pytest.fixture
def long_address(tmp_path: Path) -> Path:
    runtime = tmp_path / ("x" * 80) / "run"
    runtime.mkdir(parents=True, mode=0o700)
    address = runtime / "daemon.sock"
    assert not rundir.bindable(str(address))
    return address


def test_the_link_at_a_long_address_is_followed(
    long_address: Path, folder: Path, listener: Listener
) -> None:
    long_address.symlink_to(folder / "daemon.sock")
    assert socketguard.socket_file(str(long_address)) == str(folder / "daemon.sock")
    assert ping(long_address) == {"ok": True}


def test_the_link_to_an_open_folder_is_refused(
    long_address: Path, folder: Path, listener: Listener
) -> None:
    long_address.symlink_to(folder / "daemon.sock")
    folder.chmod(0o777)
    with pytest.raises(UnsafeSocketError, match="can be written by other users"):
        ping(long_address)
    assert not listener.connected


def test_a_relative_link_is_refused(long_address: Path) -> None:
    long_address.symlink_to("elsewhere/daemon.sock")
    with pytest.raises(UnsafeSocketError, match="not at an absolute path"):
        ping(long_address)


# Binds as root in a folder of root's, then listens as nobody: only the peer check sees it.
LISTEN_AS_NOBODY = r"""
import os, socket, sys
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
os.setgid(65534)
os.setuid(65534)
server.listen()
print("listening", flush=True)
connection, _ = server.accept()
connection.settimeout(2)
try:
    print(repr(connection.recv(100)), flush=True)
except OSError:
    print(repr(b""), flush=True)
"""


@needs_root
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SO_PEERCRED is Linux's")
def test_a_listener_running_as_another_user_gets_nothing(folder: Path) -> None:
    path = folder / "daemon.sock"
    process = subprocess.Popen(
        [sys.executable, "-c", LISTEN_AS_NOBODY, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    try:
        assert process.stdout.readline().strip() == "listening"
        with pytest.raises(UnsafeSocketError, match=f"runs as uid {NOBODY}, not as you"):
            ping(path)
        received, _ = process.communicate(timeout=10)
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
    assert received.strip() == "b''"


def test_peer_uid_of_a_socketpair_is_ours() -> None:
    one, other = socket.socketpair(socket.AF_UNIX)
    with one, other:
        assert socketguard.peer_uid(one) == os.getuid()
