"""Spool files: an event the daemon could not take, kept until it is back.

One file per event in :attr:`thatch.rundir.RunDir.spool_dir`, named
``<time_ns, 20 digits>-<event_id>.json`` so name order is arrival order, and
holding the encoded request line. The file is written under a ``.tmp`` name
and renamed, so the daemon never sees half an event; it replays files in
name order and skips event ids it has already taken.
"""

from __future__ import annotations

import contextlib
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
    make_private_dir(spool_dir)
    path = os.path.join(spool_dir, spool_name(str(message.get("event_id", "none"))))
    tmp = path + TMP_SUFFIX
    data = wire.encode(message)
    # 0600: a payload may hold secrets the redactor has not seen yet.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        # Also the backstop's deadline: never leave half an event behind.
        _remove_quietly(tmp)
        raise
    return path


def make_private_dir(path: str) -> None:
    """Create ``path`` (and parents) readable by this user only; keep an existing one."""
    try:
        os.makedirs(path, mode=0o700)
    except FileExistsError:
        return
    # makedirs applies the umask; the leaf must be 0700 whatever the umask.
    os.chmod(path, 0o700)


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)
