"""What the receptor has ready for each session, and the rules of handing it over.

A probe's result reaches the agent in one of the delivery modes
(:data:`thatch.plugin.DELIVERY_MODES`):

- **active**: one item placed in the agent's context, in the answer of the
  session's next tool hook (or its next prompt's nudges). A session holds at
  most one active item: a newer one replaces an older one not yet shown, and
  :meth:`Deliveries.take_active` hands over one at most, never while the
  session is in deep work, and never one gone stale (the agent has moved on);
- **notification**: results that accumulate until the agent reads them with
  the ``receptor_notes`` tool;
- **passive**: an offer (``Search related knowledge? Reason: ...``) the agent
  accepts or dismisses with the ``receptor_offer`` tool; a dismissal lowers the
  sensitivity of the offer's pattern (the learned delta);
- **silent**: the result is kept for the session and nothing is said.

Every item handed over is logged (the session's recent deliveries), so
``thatch receptor status`` shows what the agent got and why.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from thatch.plugin import DeliveryMode

#: An active item older than this is stale: the wall it answers is behind the agent.
ACTIVE_MAX_AGE_SECONDS = 600.0
#: Tool calls after which an active item not yet shown is stale.
ACTIVE_MAX_CALLS = 12
#: Notes a session keeps unread (oldest dropped first).
MAX_NOTES = 20
#: Deliveries remembered per session for ``thatch receptor status``.
MAX_LOGGED = 20


@attrs.frozen
class Delivery:
    """One thing the receptor has ready for a session's agent."""

    id: str
    session_id: str
    mode: DeliveryMode
    #: What the agent reads.
    text: str
    #: The rule that called for it, what it looked for, and the firing's pattern.
    rule: str
    trigger: str
    pattern: str
    #: Why it is offered, in the rule's words.
    reason: str
    #: The memories it shows (core then does not show them again soon).
    memory_ids: tuple[int, ...] = ()
    #: When it was made, and the session's tool-call count then.
    created_at: float = 0.0
    at_call: int = 0


@attrs.frozen
class Handed:
    """A delivery the agent got: when, and through which hook."""

    delivery: Delivery
    at: float
    #: ``tool`` (a tool hook's answer), ``prompt`` (the prompt's nudges), ``tool call``
    #: (the agent read it with a tool).
    via: str


class _Session:
    def __init__(self) -> None:
        self.active: Delivery | None = None
        self.notes: deque[Delivery] = deque(maxlen=MAX_NOTES)
        self.offers: dict[str, Delivery] = {}
        self.silent: deque[Delivery] = deque(maxlen=MAX_NOTES)
        self.handed: deque[Handed] = deque(maxlen=MAX_LOGGED)
        #: Notes and offers a prompt's nudges have mentioned (each is mentioned once).
        self.told: set[str] = set()


class Deliveries:
    """Every session's ready items; safe to use from several threads."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}
        self._ids = itertools.count(1)

    def new_id(self) -> str:
        """A fresh delivery id, unique in this daemon (``r1``, ``r2``...)."""
        return f"r{next(self._ids)}"

    def add(self, delivery: Delivery) -> None:
        """Keep ``delivery`` for its session, as its mode says."""
        with self._lock:
            session = self._session(delivery.session_id)
            if delivery.mode == "active":
                session.active = delivery
            elif delivery.mode == "notification":
                session.notes.append(delivery)
            elif delivery.mode == "passive":
                session.offers[delivery.id] = delivery
            elif delivery.mode == "silent":
                session.silent.append(delivery)

    def take_active(
        self, session_id: str, *, calls: int, in_flow: bool, via: str
    ) -> Delivery | None:
        """The session's active item, handed over once; None in deep work or when stale.

        :param calls: the session's tool-call count now (an item made
            :data:`ACTIVE_MAX_CALLS` calls ago is dropped).
        :param in_flow: layer A holds: the item waits (it is not dropped).
        :param via: which hook carries it, for the log.
        """
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or session.active is None or in_flow:
                return None
            item, session.active = session.active, None
            if self._stale(item, calls):
                return None
            session.handed.append(Handed(item, self._clock(), via))
            return item

    def _stale(self, item: Delivery, calls: int) -> bool:
        too_old = self._clock() - item.created_at > ACTIVE_MAX_AGE_SECONDS
        return too_old or calls - item.at_call > ACTIVE_MAX_CALLS

    def pending_active(self, session_id: str) -> Delivery | None:
        """The session's active item not yet handed over (left where it is)."""
        with self._lock:
            session = self._sessions.get(session_id)
            return session.active if session else None

    def offers(self, session_id: str) -> list[Delivery]:
        """The session's open offers, oldest first."""
        with self._lock:
            session = self._sessions.get(session_id)
            return list(session.offers.values()) if session else []

    def take_notes(self, session_id: str) -> list[Delivery]:
        """The session's unread notes, oldest first; they are read now."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return []
            notes = list(session.notes)
            session.notes.clear()
            now = self._clock()
            session.handed.extend(Handed(note, now, "tool call") for note in notes)
            return notes

    def untold(self, session_id: str) -> tuple[list[Delivery], list[Delivery]]:
        """The session's open offers and unread notes no prompt has mentioned yet."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return [], []
            offers = [item for item in session.offers.values() if item.id not in session.told]
            notes = [item for item in session.notes if item.id not in session.told]
            return offers, notes

    def mark_told(self, session_id: str, items: Iterable[Delivery]) -> None:
        """Remember that a prompt's nudges mentioned ``items``."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                session.told.update(item.id for item in items)
                live = {*session.offers, *(note.id for note in session.notes)}
                session.told &= live

    def unread(self, session_id: str) -> int:
        """How many notes wait for the session's agent."""
        with self._lock:
            session = self._sessions.get(session_id)
            return len(session.notes) if session else 0

    def answer(self, offer_id: str) -> Delivery | None:
        """Close the offer ``offer_id`` (accepted or dismissed); None when no session has it."""
        with self._lock:
            for session in self._sessions.values():
                offer = session.offers.pop(offer_id, None)
                if offer is not None:
                    session.handed.append(Handed(offer, self._clock(), "tool call"))
                    return offer
        return None

    def handed(self, session_id: str) -> list[Handed]:
        """What the session's agent got, oldest first (the last :data:`MAX_LOGGED`)."""
        with self._lock:
            session = self._sessions.get(session_id)
            return list(session.handed) if session else []

    def forget(self, session_id: str) -> None:
        """Drop a session's items (it ended)."""
        with self._lock:
            self._sessions.pop(session_id, None)

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session()
        return session
