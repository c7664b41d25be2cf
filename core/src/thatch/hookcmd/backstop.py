"""A timer that ends a hook command at its cap even if something hangs.

At the cap the timer raises :class:`Deadline` in the main thread, so the
command can still say what happened; if that too hangs, a second firing a
moment later writes the log line (:attr:`Backstop.last_words`) and ends the
process with status 0. Output being written is never cut: a half-written
answer would be worse than a late one. An event being spooled is not cut
by the first firing either (:meth:`Backstop.begin_keeping`): the deadline is
raised once it is on disk, and the second firing waits as long as the
spooling was allowed (:meth:`Backstop.allow`). A hook that waits for a
daemon warming up moves the deadline to its cold-start allowance
(:meth:`Backstop.extend`).
"""

from __future__ import annotations

import os
import signal
import time

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import Any

    Handler = Callable[[int, FrameType | None], Any] | int | None


#: Ends the process without cleanup (a module global so tests can replace it).
_exit = os._exit


class Deadline(BaseException):
    """The hook command's cap was reached.

    A BaseException, like KeyboardInterrupt, so no ``except Exception`` on the
    way up swallows it.
    """


class Backstop:
    """``SIGALRM`` at the cap: raise :class:`Deadline` once, then exit 0 after ``grace``."""

    def __init__(self) -> None:
        self.armed = False
        self.fired = False
        self.writing = False
        self.keeping = False
        #: The cap passed while an event was being kept: raised by :meth:`end_keeping`.
        self.deferred = False
        #: The first firing raises :class:`Deadline` (off once nothing is left to cut short).
        self.raising = True
        self.grace = 0.05
        #: When the second firing ends the process (:func:`time.monotonic`).
        self.exit_at = 0.0
        #: Writes the log line before the process is ended.
        self.last_words: Callable[[], object] | None = None
        self._previous: Handler = None

    def arm(self, seconds: float, grace: float) -> None:
        """Start the timer; does nothing outside the main thread (no signals there)."""
        try:
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
        except ValueError:
            return
        self.grace = max(grace, 0.001)
        seconds = max(seconds, 0.001)
        self.exit_at = time.monotonic() + seconds + self.grace
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, seconds)

    def extend(self, seconds: float) -> None:
        """Fire ``seconds`` from now instead (before the first firing only)."""
        if self.armed and not self.fired:
            seconds = max(seconds, 0.001)
            self.exit_at = max(self.exit_at, time.monotonic() + seconds + self.grace)
            signal.setitimer(signal.ITIMER_REAL, seconds)

    def allow(self, seconds: float) -> None:
        """End the process no sooner than ``seconds`` from now (the cap itself stays)."""
        if not self.armed:
            return
        self.exit_at = max(self.exit_at, time.monotonic() + seconds)
        if self.fired:
            signal.setitimer(signal.ITIMER_REAL, max(self.exit_at - time.monotonic(), 0.001))

    def begin_keeping(self) -> None:
        """An event that has arrived is being spooled: the cap must not cut it."""
        self.keeping = True

    def end_keeping(self) -> None:
        """The event is kept; raises :class:`Deadline` now if the cap passed meanwhile."""
        self.keeping = False
        if self.deferred:
            self.deferred = False
            raise Deadline

    def stop_raising(self) -> None:
        """The work the cap cuts short is over: the first firing only starts the grace.

        What follows (a stand-in answer, the log line) must not be cut by a
        :class:`Deadline` it has no handler for; if it hangs, the second
        firing still ends the process.
        """
        self.raising = False

    def cancel(self) -> None:
        """Stop the timer and restore the previous ``SIGALRM`` handler."""
        if not self.armed:
            return
        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        previous = self._previous
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        if not self.armed or self.writing:
            return
        if not self.fired:
            self.fired = True
            signal.setitimer(signal.ITIMER_REAL, max(self.exit_at - time.monotonic(), 0.001))
            if self.keeping:
                self.deferred = True
                return
            if self.raising:
                raise Deadline
            return
        # What followed the cap hung as well: say so, and leave with the status hooks promise.
        try:
            if self.last_words is not None:
                self.last_words()
        finally:
            _exit(0)
