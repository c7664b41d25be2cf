"""``recurring-error``: frustration when one error keeps coming back across failed calls.

The receptor's built-in sources read failing runs (more when edits and runs
alternate), but not *what* failed. An agent that meets the same error from
different commands — ``ModuleNotFoundError: No module named 'jwt'`` from
pytest, then from ``python -c``, then from a script — is at a wall no edit is
moving, even when it edits nothing in between. This source reads exactly that:
the error's signature (its telling line, addresses and long numbers blanked) in at
least ``minimum`` failed calls of the short window.

It stays quiet on ordinary work: a failure without an error line (a bare
``Exit code 1``) has no signature, and two failures with the same error are
still someone fixing a test.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from thatch.plugin import SignalReading

from thatch_example_receptor import NAME

if TYPE_CHECKING:
    from thatch.plugin import Event, EventHistory, ToolCall

#: An error line: ``KeyError: 'user'``, ``error[E0425]: ...``, ``fatal: ...``.
_ERROR_LINE = re.compile(
    r"\b(?:[A-Z]\w*)?(?:Error|Exception)\b.*|\b(?:error|fatal|ERROR|FATAL)(?:\[\w+\])?: .+"
)
#: What changes between two occurrences of one error: addresses, line numbers, long numbers
#: (times, ports, process ids). Short numbers stay: ``assert 3 == 4`` is not ``assert 1 == 2``.
_VARYING = re.compile(r"0x[0-9a-f]+|(?<=line )\d+|\b\d{4,}\b", re.IGNORECASE)
#: Longest signature kept (the reading's detail shows it).
MAX_SIGNATURE = 100


def error_signature(call: ToolCall) -> str | None:
    """The telling error line of a failed call, varying parts blanked; None without one."""
    if not call.failed:
        return None
    return signature_of(_error_text(call))


@lru_cache(maxsize=1024)
def signature_of(text: str) -> str | None:
    """The last error line of ``text``, its varying parts as ``#``; None when it names no error."""
    lines = [match.group(0) for match in map(_ERROR_LINE.search, text.splitlines()) if match]
    if not lines:
        return None
    return _VARYING.sub("#", lines[-1].strip())[:MAX_SIGNATURE]


def _error_text(call: ToolCall) -> str:
    """What the harness said went wrong: the call's error, else its response's error or stderr."""
    if call.error:
        return call.error
    response = call.response
    if isinstance(response, Mapping):
        return "\n".join(str(response.get(key) or "") for key in ("error", "stderr"))
    return response if isinstance(response, str) else ""


@dataclass
class RecurringError:
    """Frustration: the same error in ``minimum`` or more failed calls of the short window."""

    name: str = NAME
    #: Failed calls with one signature, the current one included, before the source speaks.
    minimum: int = 3
    #: The reading at ``minimum`` occurrences, growing by ``per_more`` with each after it.
    start: float = 0.4
    per_more: float = 0.2
    #: The strongest reading: the source never speaks alone with full certainty.
    ceiling: float = 0.9

    def read(self, event: Event, history: EventHistory) -> Iterator[SignalReading]:
        current = {sig for call in event.tool_calls if (sig := error_signature(call))}
        if not current:
            return
        seen = Counter(
            sig
            for earlier in history.window("short")
            for call in earlier.tool_calls
            if (sig := error_signature(call))
        )
        for signature in sorted(current):
            times = seen[signature]
            if times >= self.minimum:
                value = min(self.ceiling, self.start + self.per_more * (times - self.minimum))
                detail = f"{signature} ({times} times in 5 minutes)"
                yield SignalReading(self.name, "frustration", value, detail)
