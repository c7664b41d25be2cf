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

A live hook event must not be answered before the events spooled ahead of
it: after a cold start, or a daemon killed, a prompt would get no nudge for
the tool calls of the batch spooled just before it. So before it handles a
live event the daemon replays the files spooled before that event arrived
(:meth:`Spool.catch_up`; the daemon's loop replays the rest every tick).
One file is replayed at a time, under a lock the loop shares, so a live
event waits for the file being replayed to be recorded, never for the whole
spool; and the catch-up stops after :data:`CATCH_UP_SECONDS`, so a large
spool slows one answer at most that much, and the loop replays what is left.

What is left over is cleared once a minute: a ``.tmp`` file whose hook died
while writing it, and ``.failed`` files (requests that could not be
replayed, kept to diagnose them) past a week or past the newest
:data:`MAX_FAILED`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
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
#: How long a live event waits at most for the older spooled events to be replayed.
CATCH_UP_SECONDS = 2.0
#: Digits of the time (ns) a spool file's name starts with.
_STAMP_DIGITS = 20


class Spool:
    """The spool folder of one daemon."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        #: Files whose event was taken or refused but that are still there.
        self._settled: set[str] = set()
        self._next_sweep = 0.0
        self._problems = _Throttled(REPEAT_LOG_SECONDS)
        #: One file replayed at a time: by the loop, or for a live event (catch_up).
        self._lock = threading.Lock()

    def backlog(self) -> int:
        """How many spooled events wait."""
        return len(self._waiting(self._listing()))

    def failed(self) -> int:
        """How many requests could not be replayed and are kept as ``.failed`` files."""
        return sum(1 for name in self._listing() if name.endswith(FAILED_SUFFIX))

    def replay(self, handle: Callable[[dict[str, Any]], Any]) -> int:
        """Hand every spooled event to ``handle`` in arrival order; returns how many."""
        names = self._listing()
        with self._lock:
            self._settled.intersection_update(names)
        if time.monotonic() >= self._next_sweep:
            self._sweep(names)
            self._next_sweep = time.monotonic() + SWEEP_SECONDS
        done = 0
        for name in self._waiting(names):
            if self._replay_file(name, handle):
                done += 1
        return done

    def catch_up(
        self,
        before: float,
        handle: Callable[[dict[str, Any]], Any],
        seconds: float = CATCH_UP_SECONDS,
    ) -> int:
        """Replay the events spooled before ``before`` (a :func:`time.time`); returns how many.

        Called before a live event is handled, so it is answered after the
        events that came ahead of it. Stops after ``seconds``: the loop
        replays the rest. A file its hook still holds is left to it, as
        :meth:`replay` leaves it.
        """
        until = time.monotonic() + seconds
        limit = int(before * 1e9)
        done = 0
        for name in self._waiting(self._listing()):
            if _stamp(name) >= limit:
                break  # in name order: every later file came after the live event
            left = until - time.monotonic()
            if left <= 0 or not self._lock.acquire(timeout=left):
                log.info(
                    "replaying spooled events took over %.1f s; answering a live event first",
                    seconds,
                )
                break
            try:
                if self._replay_held_lock(name, handle):
                    done += 1
            finally:
                self._lock.release()
        return done

    def _waiting(self, names: Iterable[str]) -> list[str]:
        with self._lock:
            settled = set(self._settled)
        return sorted(n for n in names if n.endswith(SUFFIX) and n not in settled)

    def _replay_file(self, name: str, handle: Callable[[dict[str, Any]], Any]) -> bool:
        with self._lock:
            return self._replay_held_lock(name, handle)

    def _replay_held_lock(self, name: str, handle: Callable[[dict[str, Any]], Any]) -> bool:
        """Replay one file; the caller holds ``self._lock``."""
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


def _stamp(name: str) -> int:
    """The time (ns) a spool file's name starts with; 0 for a name not made by spool_name."""
    head = name[:_STAMP_DIGITS]
    return int(head) if head.isdigit() else 0


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
