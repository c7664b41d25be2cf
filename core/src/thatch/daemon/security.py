"""Keeping the daemon's socket to its owner: private folders and a peer check.

The clients' side of it (checking the socket before sending a byte) is
:mod:`thatch.socketguard`.
"""

from __future__ import annotations

import contextlib
import os
import stat

from thatch.plugin.errors import ThatchError
from thatch.rundir import RunDir
from thatch.socketguard import linked_socket, peer_uid

__all__ = [
    "UnsafeRuntimeDirError",
    "link_socket",
    "peer_allowed",
    "peer_uid",
    "private_dir",
    "remove_socket",
    "socket_to_bind",
]

#: The prefix of the private folders that hold the sockets of long runtime folders.
SOCKET_DIR_PREFIX = "thatch-"


class UnsafeRuntimeDirError(ThatchError):
    """The socket's folder is shared with other users."""


def private_dir(path: str) -> None:
    """Create ``path`` (mode 0700) or check that an existing one is ours and private.

    A folder others can enter would let them reach the socket, so an unsafe
    one is an error that says how to fix it, not something to repair silently.
    """
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.stat(path)
    if info.st_uid != os.getuid():
        raise UnsafeRuntimeDirError(
            f"{path} belongs to uid {info.st_uid}, not you ({os.getuid()}); "
            "remove it or set THATCH_HOME to a folder of your own"
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o700)


def socket_to_bind(located: RunDir, previous: str | None = None) -> str:
    """Where the daemon binds its socket, its folder made ready.

    The socket path itself when it is short enough. Otherwise a socket in a
    private folder under the temporary directory: the one bound before
    (``previous``) or the one the link points to, while still ours and
    private; else a new one, its name unpredictable, so no other user can
    make it first. :func:`link_socket` then points the socket path at it.
    """
    address = located.socket_path
    if not located.socket_linked:
        private_dir(os.path.dirname(address))
        return address
    name = os.path.basename(address)
    for candidate in (previous, linked_socket(address)):
        if candidate and _reusable(os.path.dirname(candidate)):
            return os.path.join(os.path.dirname(candidate), name)
    import tempfile

    return os.path.join(tempfile.mkdtemp(prefix=SOCKET_DIR_PREFIX), name)


def link_socket(address: str, bound: str) -> None:
    """Point ``address`` at the socket bound at ``bound`` (nothing to do when they are one).

    Replaced in one rename, so a client sees the old link or the new one.
    """
    if bound == address or linked_socket(address) == bound:
        return
    temporary = f"{address}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)
    os.symlink(bound, temporary)
    os.replace(temporary, address)


def remove_socket(address: str, bound: str) -> None:
    """Remove the socket, and the link to it and its private folder if there are."""
    if bound != address and linked_socket(address) == bound:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(address)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(bound)
    if bound != address:
        # Only once empty: what else is in it is not the daemon's to delete.
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(bound))


def _reusable(folder: str) -> bool:
    """Whether ``folder`` is a real folder of ours that no one else may enter."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not stat.S_IMODE(info.st_mode) & 0o077
    )


def peer_allowed(peer: int | None, owner: int) -> bool:
    """Only the daemon's own user may talk to it.

    Where the platform cannot tell the peer (None), the 0700 folder and the
    0600 socket are the protection.
    """
    return peer is None or peer == owner
