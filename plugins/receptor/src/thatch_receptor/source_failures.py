"""How the receptor reports a signal source that raises: once in full, then counted.

A source that raises usually raises on every event it is given (a third
party's bug meets every event alike), and a traceback with each tool call
buries the rest of the daemon's log. So the first failure of each source logs
its traceback, and later ones are counted: one short line at most every
``interval`` seconds (a minute), with how many failed since the last line and
the latest error, so the log still shows that the source keeps failing. The
source's readings are left out either way; the other sources read on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import attrs

#: Seconds between two counted lines of one source.
REPORT_INTERVAL = 60.0
#: The longest error text a counted line quotes.
MAX_ERROR_TEXT = 200


@attrs.define
class _Tally:
    """One source's failures: in all, since its last line, and when that line was."""

    total: int
    reported_at: float
    unreported: int = 0


class SourceFailures:
    """The failures of a receptor's sources, each logged once in full and then counted."""

    def __init__(
        self,
        log: logging.Logger,
        *,
        interval: float = REPORT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = log
        self._interval = interval
        self._clock = clock
        self._tallies: dict[str, _Tally] = {}

    def failed(self, source: str, error: BaseException) -> None:
        """Report that ``source`` raised ``error`` reading an event."""
        now = self._clock()
        tally = self._tallies.get(source)
        if tally is None:
            self._tallies[source] = _Tally(total=1, reported_at=now)
            self._log.error(
                "receptor signal source %r failed; its readings are left out (later failures "
                "of it are counted, in a line at most every %.0f s)",
                source,
                self._interval,
                exc_info=error,
            )
            return
        tally.total += 1
        tally.unreported += 1
        if now - tally.reported_at < self._interval:
            return
        self._log.error(
            "receptor signal source %r failed %d more time(s) in %.0f s, %d in all (last: %s); "
            "its readings are left out",
            source,
            tally.unreported,
            now - tally.reported_at,
            tally.total,
            error_text(error),
        )
        tally.unreported, tally.reported_at = 0, now

    def count(self, source: str) -> int:
        """How often ``source`` has failed."""
        tally = self._tallies.get(source)
        return tally.total if tally is not None else 0


def error_text(error: BaseException) -> str:
    """``RuntimeError: boom``: the error's type and the first line of its message, cut short."""
    message = str(error).strip().partition("\n")[0]
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 1] + "…"
