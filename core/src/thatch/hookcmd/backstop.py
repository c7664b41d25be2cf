"""A timer that ends a hook command at its cap even if something hangs.

At the cap the timer raises :class:`Deadline` in the main thread, so the
command can still spool its event; if that too hangs, a second firing a
moment later ends the process with status 0. Output being written is never
cut: a half-written answer would be worse than a late one. A hook that
waits for a daemon warming up moves the deadline to its cold-start
allowance (:meth:`Backstop.extend`).
"""

from __future__ import annotations

import os
import signal

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
        self.grace = 0.05
        self._previous: Handler = None

    def arm(self, seconds: float, grace: float) -> None:
        """Start the timer; does nothing outside the main thread (no signals there)."""
        try:
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
        except ValueError:
            return
        self.grace = max(grace, 0.001)
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))

    def extend(self, seconds: float) -> None:
        """Fire ``seconds`` from now instead (before the first firing only)."""
        if self.armed and not self.fired:
            signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))

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
            signal.setitimer(signal.ITIMER_REAL, self.grace)
            raise Deadline
        # Spooling after the cap hung as well: leave now, with the status hooks promise.
        _exit(0)
