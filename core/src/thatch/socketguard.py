"""Making sure the daemon's socket is the user's own before a client sends it a byte.

A hook's request holds what the agent saw (code, commands, secrets the
redactor has not seen yet) and its answer is printed into the agent's
context, so no client may talk to a socket another local user could have
put in the daemon's place. Before connecting, the socket must be a socket
of the user's, in a folder of the user's that no one else can write to
(where no one else could plant or swap it); once connected, on Linux, the
process listening must run as the user (``SO_PEERCRED``), which also covers
a swap between the check and the connect.

A socket path too long to bind (a deep ``THATCH_HOME``) is where the daemon
leaves a symbolic link, in its own runtime folder, to the socket it bound
in a private folder with an unpredictable name (see
:func:`thatch.daemon.security.socket_to_bind`). That one link is followed;
any other link is refused.

Standard library only, and a few ``stat`` calls: every hook command runs this.
"""

from __future__ import annotations

import os
import socket
import stat
import sys

from thatch import rundir

#: Folder mode bits that let others add or swap files in it.
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


class UnsafeSocketError(PermissionError):
    """The socket, or its folder, may not be the user's: nothing was sent to it."""


def connect(address: str, timeout: float) -> socket.socket:
    """A connection to the daemon at ``address``, checked before and after connecting.

    Raises ``FileNotFoundError`` when there is no socket, :class:`UnsafeSocketError`
    when it may be someone else's, and whatever ``connect`` raises.
    """
    path = socket_file(address)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        _check_listener(sock, path)
    except BaseException:
        sock.close()
        raise
    return sock


def socket_file(address: str) -> str:
    """The socket to connect to for ``address``, once it and its folder are found to be ours."""
    _check_folder(os.path.dirname(address))
    info = os.lstat(address)
    if stat.S_ISLNK(info.st_mode) and not rundir.bindable(address):
        address = _link_target(address)
        _check_folder(os.path.dirname(address))
        info = os.lstat(address)
    _check_socket(address, info)
    return address


def linked_socket(address: str) -> str | None:
    """The socket the daemon's link at ``address`` points to, unchecked (None: no link)."""
    if rundir.bindable(address):
        return None
    try:
        return os.readlink(address)
    except OSError:
        return None


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (None if unknown)."""
    if sys.platform.startswith("linux"):
        # struct ucred: pid, uid, gid (32-bit each); read without importing struct.
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        return int.from_bytes(creds[4:8], sys.byteorder)
    getpeereid = getattr(os, "getpeereid", None)  # not in CPython today; future-proof
    if getpeereid is not None:
        return int(getpeereid(sock.fileno())[0])
    return None


def _link_target(link: str) -> str:
    target = os.readlink(link)
    if not os.path.isabs(target):
        raise UnsafeSocketError(
            f"{link} points at {target}, not at an absolute path as the daemon makes it; "
            "remove it (the daemon makes it again)"
        )
    return target


def _check_folder(folder: str) -> None:
    # stat, not lstat: a runtime folder reached through a link of the user's is fine.
    info = os.stat(folder)
    me = os.getuid()
    if info.st_uid != me:
        raise UnsafeSocketError(
            f"{folder} belongs to uid {info.st_uid}, not to you (uid {me}), so the daemon's "
            "socket in it may be another user's; nothing was sent to it. Remove the folder "
            "or set THATCH_HOME to a folder of your own"
        )
    if info.st_mode & _OTHERS_WRITE:
        raise UnsafeSocketError(
            f"{folder} can be written by other users (mode {stat.S_IMODE(info.st_mode):o}), "
            f"so the daemon's socket in it may be theirs; nothing was sent to it. "
            # Not chmod: that would keep a socket another user already put there.
            f"Stop the daemon ('thatch daemon stop'), then remove {folder} "
            "(the daemon makes it again, private)"
        )


def _check_socket(path: str, info: os.stat_result) -> None:
    me = os.getuid()
    if stat.S_ISLNK(info.st_mode):
        problem = "is a symbolic link"
    elif not stat.S_ISSOCK(info.st_mode):
        problem = "is not a socket"
    elif info.st_uid != me:
        problem = f"belongs to uid {info.st_uid}, not to you (uid {me})"
    else:
        return
    raise UnsafeSocketError(
        f"{path} {problem}, so it may not be the daemon's; nothing was sent to it. "
        "Stop the daemon ('thatch daemon stop') and remove it"
    )


def _check_listener(sock: socket.socket, path: str) -> None:
    peer = peer_uid(sock)
    me = os.getuid()
    if peer is not None and peer != me:
        raise UnsafeSocketError(
            f"the process listening on {path} runs as uid {peer}, not as you (uid {me}); "
            "nothing was sent to it. Remove the socket and its folder"
        )
