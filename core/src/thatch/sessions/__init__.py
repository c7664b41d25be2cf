"""The daemon's local session store: tool queues, nudge levels, shown memories.

See :mod:`thatch.sessions.store`.
"""

from __future__ import annotations

from thatch.sessions.records import Interaction, NewInteraction, SessionState
from thatch.sessions.store import COMPACT_TIMEOUT_SECONDS, SessionStore

__all__ = [
    "COMPACT_TIMEOUT_SECONDS",
    "Interaction",
    "NewInteraction",
    "SessionState",
    "SessionStore",
]
