"""One daemon per user and database: an exclusive lock on a file next to the socket."""

from __future__ import annotations

import fcntl
import os
import time


def acquire(path: str, wait_seconds: float = 0.0) -> int | None:
    """Take the lock, waiting up to ``wait_seconds``; returns its fd, or None if held.

    The kernel drops the lock when the holder dies, even by ``kill -9``, so a
    crashed daemon never blocks the next one.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.05)


def is_held(path: str) -> bool:
    """Whether some process holds the lock right now."""
    if not os.path.exists(path):
        return False
    fd = acquire(path)
    if fd is None:
        return True
    release(fd)
    return False


def release(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
