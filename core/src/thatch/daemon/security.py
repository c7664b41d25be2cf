"""Keeping the daemon's socket to its owner: a private folder and a peer check."""

from __future__ import annotations

import os
import socket
import stat
import struct
import sys

from thatch.errors import ThatchError


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


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (None if unknown)."""
    if sys.platform.startswith("linux"):
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return uid
    getpeereid = getattr(os, "getpeereid", None)  # not in CPython today; future-proof
    if getpeereid is not None:
        return int(getpeereid(sock.fileno())[0])
    return None


def peer_allowed(peer: int | None, owner: int) -> bool:
    """Only the daemon's own user may talk to it.

    Where the platform cannot tell the peer (None), the 0700 folder and the
    0600 socket are the protection.
    """
    return peer is None or peer == owner
