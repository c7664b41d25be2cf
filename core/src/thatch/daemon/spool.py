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

Replay never raises for the folder or a file: the daemon calls it every
tick, and one unreadable folder or undeletable file must not end it. Each
problem is logged (one that persists, every few minutes) and the next file
is taken. A file whose event was taken (or refused) but that cannot be
removed (or renamed) is left alone until the daemon restarts; the event id
makes taking it again then a no-op.

What is left over is cleared once a minute: a ``.tmp`` file whose hook died
while writing it, and ``.failed`` files (requests that could not be
replayed, kept to diagnose them) past a week or past the newest
:data:`MAX_FAILED`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from thatch import wire
from thatch.daemon.throttle import Throttle
from thatch.hookcmd.spool import SUFFIX, TMP_SUFFIX

log = logging.getLogger("thatch")

#: Added to the name of a file that could not be replayed.
FAILED_SUFFIX = ".failed"
#: A ``.tmp`` file this old lost its hook: writing one takes milliseconds.
TMP_MAX_AGE_SECONDS = 300.0
#: How long a ``.failed`` file is kept.
FAILED_MAX_AGE_SECONDS = 7 * 24 * 3600.0
#: At most this many ``.failed`` files are kept (the newest).
MAX_FAILED = 100
#: How often leftovers are cleared.
SWEEP_SECONDS = 60.0
#: A problem that persists is logged again after this long.
REPEAT_LOG_SECONDS = 300.0


class Spool:
    """The spool folder of one daemon."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        #: Files whose event was taken or refused but that are still there.
        self._settled: set[str] = set()
        self._next_sweep = 0.0
        self._problems = _Throttled(REPEAT_LOG_SECONDS)

    def backlog(self) -> int:
        """How many spooled events wait."""
        return len(self._waiting(self._listing()))

    def failed(self) -> int:
        """How many requests could not be replayed and are kept as ``.failed`` files."""
        return sum(1 for name in self._listing() if name.endswith(FAILED_SUFFIX))

    def replay(self, handle: Callable[[dict[str, Any]], Any]) -> int:
        """Hand every spooled event to ``handle`` in arrival order; returns how many."""
        names = self._listing()
        self._settled.intersection_update(names)
        if time.monotonic() >= self._next_sweep:
            self._sweep(names)
            self._next_sweep = time.monotonic() + SWEEP_SECONDS
        done = 0
        for name in self._waiting(names):
            if self._replay_file(name, handle):
                done += 1
        return done

    def _waiting(self, names: Iterable[str]) -> list[str]:
        return sorted(n for n in names if n.endswith(SUFFIX) and n not in self._settled)

    def _replay_file(self, name: str, handle: Callable[[dict[str, Any]], Any]) -> bool:
        path = os.path.join(self.folder, name)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False  # another replay took it, or its hook did
        except OSError as exc:
            # Kept for the next replay: the problem may pass (too many open files).
            self._problems.warn(f"open {name}", "spooled event %s cannot be read: %s", name, exc)
            return False
        try:
            return self._replay_one(fd, name, path, handle)
        except OSError as exc:
            self._problems.warn(f"read {name}", "spooled event %s cannot be read: %s", name, exc)
            return False
        finally:
            os.close(fd)

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
            # Half an emoji or bytes that are not UTF-8 come out as U+FFFD:
            # such an event is replayed, not set aside.
            request = wire.decode(_read_all(fd).strip())
            handle(request)
        except Exception:
            log.exception("spooled event %s could not be replayed; kept as .failed", name)
            self._set_aside(name, path)
            return False
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._settled.add(name)
            log.warning("spooled event %s was taken but cannot be removed: %s", name, exc)
        return True

    def _set_aside(self, name: str, path: str) -> None:
        """Rename a file that could not be replayed to ``.failed``, or at least stop taking it."""
        try:
            os.replace(path, path + FAILED_SUFFIX)
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._settled.add(name)
            log.warning("spooled event %s cannot be renamed to .failed: %s", name, exc)

    def _listing(self) -> list[str]:
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        except OSError as exc:
            self._problems.warn(
                "listing",
                "the spool folder %s cannot be read (%s); spooled events wait until it can",
                self.folder,
                exc,
            )
            return []
        return names

    # -- leftovers -----------------------------------------------------------------
    def _sweep(self, names: list[str]) -> None:
        """Remove dead hooks' ``.tmp`` files and the ``.failed`` files past their time."""
        now = time.time()
        for name in names:
            if name.endswith(TMP_SUFFIX) and self._age(name, now) > TMP_MAX_AGE_SECONDS:
                self._remove(name, "a half-written spool file")
        # Names start with the time spooled: sorted, the oldest come first.
        failed = sorted(name for name in names if name.endswith(FAILED_SUFFIX))
        expired = [name for name in failed if self._age(name, now) > FAILED_MAX_AGE_SECONDS]
        kept = [name for name in failed if name not in expired]
        excess = kept[: max(len(kept) - MAX_FAILED, 0)]
        for name in expired + excess:
            self._remove(name, "a spool file that could not be replayed")
        if expired or excess:
            log.info(
                "removed %d .failed spool files (kept: %d days, at most %d files)",
                len(expired) + len(excess),
                FAILED_MAX_AGE_SECONDS // (24 * 3600),
                MAX_FAILED,
            )

    def _age(self, name: str, now: float) -> float:
        """Seconds since ``name`` last changed (0 if it is gone)."""
        try:
            return now - os.stat(os.path.join(self.folder, name)).st_mtime
        except OSError:
            return 0.0

    def _remove(self, name: str, what: str) -> None:
        try:
            os.unlink(os.path.join(self.folder, name))
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._problems.warn(f"remove {name}", "cannot remove %s, %s: %s", what, name, exc)


class _Throttled:
    """Warnings for problems that persist from tick to tick: each logged once per ``interval``."""

    def __init__(self, interval: float) -> None:
        self._throttle = Throttle(interval)

    def warn(self, key: str, message: str, *args: Any) -> None:
        if self._throttle.due(key):
            log.warning(message, *args)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
