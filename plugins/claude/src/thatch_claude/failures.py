"""Failed tool calls Claude Code reports twice, so that each is queued once.

Claude Code runs a failed call's PostToolUseFailure hooks before it hands
the result back to the model, and the turn's PostToolBatch then lists the
same call among the others, its result being the error text, with nothing
saying that it failed. The failure event already carries the call, with
its error and a failed mark, so the batch leaves out the calls a failure
event reported.

The record lives in the daemon's memory, which parses every event. Should
the daemon restart between the two hooks, which come milliseconds apart,
that call is queued twice, once marked failed: a duplicate, never a loss.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from thatch.plugin import ToolCall

#: Failures remembered at most; a batch follows its failures at once, so
#: only the calls of the batches in flight need to be here.
LIMIT = 1000


class ReportedFailures:
    """The (session, call id) pairs failure events reported, until their batch comes."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._limit = limit
        self._calls: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._lock = threading.Lock()  # the daemon parses events on several threads

    def note(self, session_id: str, calls: Iterable[ToolCall]) -> None:
        """Remember the calls of a failure event (those without an id cannot be matched)."""
        with self._lock:
            for call in calls:
                if call.call_id:
                    self._calls[(session_id, call.call_id)] = None
            while len(self._calls) > self._limit:
                self._calls.popitem(last=False)

    def not_reported(self, session_id: str, calls: Sequence[ToolCall]) -> tuple[ToolCall, ...]:
        """``calls`` less those a failure event reported, which are then forgotten.

        A call is in one batch only, so what matched once never matches again.
        """
        kept = []
        with self._lock:
            for call in calls:
                key = (session_id, call.call_id or "")
                if call.call_id and key in self._calls:
                    del self._calls[key]
                else:
                    kept.append(call)
        return tuple(kept)

    def clear(self) -> None:
        """Forget everything (tests start each case afresh)."""
        with self._lock:
            self._calls.clear()


#: The daemon's record, used by ``ClaudeHarness.parse_event``.
REPORTED = ReportedFailures()
