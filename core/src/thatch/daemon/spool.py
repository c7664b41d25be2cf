"""Replaying events that hook commands spooled while the daemon was away.

A hook command that cannot reach the daemon writes its request to one file
(atomically, named ``<time_ns>-<event_id>.json``). The daemon takes them in
name order; the session store's event ids make a replay of an event the
daemon had already taken a no-op, so nothing is lost and nothing doubles.

A hook that spooled its event and still waits for the daemon's answer (a
session start or a prompt during a cold start) holds a lock on its file.
Such a file is left alone: the hook removes it once the daemon has taken
the event, or lets go of it if it gives up, and the next replay takes it.
Replaying it at once could record the event before the hook's own request
arrives, and the hook would then be answered with nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from collections.abc import Callable
from typing import Any

from thatch import wire

log = logging.getLogger("thatch")


class Spool:
    """The spool folder of one daemon."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def backlog(self) -> int:
        """How many spooled events wait."""
        return len(self._names())

    def replay(self, handle: Callable[[dict[str, Any]], Any]) -> int:
        """Hand every spooled event to ``handle`` in arrival order; returns how many."""
        done = 0
        for name in self._names():
            path = os.path.join(self.folder, name)
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue  # another replay took it, or its hook did
            try:
                if self._replay_one(fd, name, path, handle):
                    done += 1
            finally:
                os.close(fd)
        return done

    def _replay_one(
        self, fd: int, name: str, path: str, handle: Callable[[dict[str, Any]], Any]
    ) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # its hook is waiting for the answer; see the module docstring
        if os.fstat(fd).st_nlink == 0:
            return False  # its hook removed it: the daemon took the event live
        try:
            request = wire.decode(_read_all(fd).strip())
            handle(request)
        except Exception:
            log.exception("spooled event %s could not be replayed; kept as .failed", name)
            with contextlib.suppress(FileNotFoundError):
                os.replace(path, path + ".failed")
            return False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return True

    def _names(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.folder) if n.endswith(".json"))
        except FileNotFoundError:
            return []


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
