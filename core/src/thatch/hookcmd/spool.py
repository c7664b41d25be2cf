"""Spool files: an event the daemon could not take, kept until it is back.

One file per event in :attr:`thatch.rundir.RunDir.spool_dir`, named
``<time_ns, 20 digits>-<event_id>.json`` so name order is arrival order, and
holding the encoded request line. The file is written under a ``.tmp`` name
and renamed, so the daemon never sees half an event; it replays files in
name order and skips event ids it has already taken.

A hook spools its event before sending it and keeps the file locked
(:func:`write_held`) while it waits for the daemon, so the daemon leaves it
to the hook until the hook lets go: removed once the daemon has the event,
left for a replay otherwise; see :mod:`thatch.daemon.spool`. A file left
for a replay is first written again with its payload's secrets redacted
(:meth:`Held.rewrite`, on the failure path only), so what stays on disk
holds no credential the redactor knows.
:func:`thatch.wire.encode` writes a lone surrogate as U+FFFD, so the file
is valid UTF-8 whatever the payload held.
"""

from __future__ import annotations

import os
import time

from thatch import wire

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SUFFIX = ".json"
TMP_SUFFIX = ".tmp"


def spool_name(event_id: str, now_ns: int | None = None) -> str:
    """The file name for ``event_id`` spooled at ``now_ns`` (default: now)."""
    stamp = time.time_ns() if now_ns is None else now_ns
    return f"{stamp:020d}-{event_id}{SUFFIX}"


def write(spool_dir: str, message: dict[str, Any]) -> str:
    """Spool one request atomically and return the file's path.

    Raises ``OSError`` when the folder cannot be written; the caller logs it.
    """
    path, fd, _data = _write(spool_dir, message, hold=False)
    os.close(fd)
    return path


class Held:
    """A spooled event whose hook still waits for the daemon; the file stays locked."""

    def __init__(self, path: str, fd: int, data: bytes) -> None:
        self.path = path
        self._fd: int | None = fd
        #: The request as encoded for the file: the hook sends these very bytes.
        self.data = data

    @property
    def holding(self) -> bool:
        """Whether the file is still held (not released yet)."""
        return self._fd is not None

    def rewrite(self, message: dict[str, Any]) -> None:
        """Replace the file by one holding ``message``, atomically and still held.

        The new file is locked before it is renamed over the old one, so a
        replay never reads it while the hook holds the event; a replay that
        opened the old file finds it unlinked once it gets its lock.
        """
        old = self._fd
        if old is None:
            return
        _path, fd, data = _write_at(self.path, message, hold=True)
        self._fd, self.data = fd, data
        os.close(old)

    def release(self, *, taken: bool) -> None:
        """Let go of the file; ``taken``: the daemon has the event, so remove the file first."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if taken:
                # Removed while still locked: a replay that gets the lock next sees it is gone.
                _remove_quietly(self.path)
        finally:
            os.close(fd)


def write_held(spool_dir: str, message: dict[str, Any]) -> Held:
    """Spool one request as :func:`write` does, and keep it locked until released.

    Raises ``OSError`` when the folder cannot be written, ``RecursionError``
    for a request nested too deeply to encode; the caller logs either.
    """
    return Held(*_write(spool_dir, message, hold=True))


def _write(spool_dir: str, message: dict[str, Any], *, hold: bool) -> tuple[str, int, bytes]:
    path = os.path.join(spool_dir, spool_name(str(message.get("event_id", "none"))))
    return _write_at(path, message, hold=hold)


def _write_at(path: str, message: dict[str, Any], *, hold: bool) -> tuple[str, int, bytes]:
    tmp = path + TMP_SUFFIX
    data = wire.encode(message)
    fd = _create(tmp, os.path.dirname(path))
    try:
        if hold:
            import fcntl

            # Locked before the rename: no moment where a replay could take it.
            fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.replace(tmp, path)
    except BaseException:
        # Also the backstop's deadline: never leave half an event behind.
        os.close(fd)
        _remove_quietly(tmp)
        raise
    return path, fd, data


def _create(tmp: str, spool_dir: str) -> int:
    # 0600: a payload may hold secrets the redactor has not seen yet.
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    try:
        return os.open(tmp, flags, 0o600)
    except FileNotFoundError:
        # Only the first event makes the folder: every hook spools, most find it there.
        make_private_dir(spool_dir)
        return os.open(tmp, flags, 0o600)


def make_private_dir(path: str) -> None:
    """Create ``path`` (and parents) readable by this user only; keep an existing one."""
    from thatch.private import make_private_dirs

    make_private_dirs(path)


def _remove_quietly(path: str) -> None:
    # Not contextlib.suppress: every hook spools, and importing contextlib costs ~0.7 ms.
    try:
        os.remove(path)
    except OSError:
        return  # gone already
