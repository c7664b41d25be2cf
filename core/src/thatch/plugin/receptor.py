"""The receptor's parts a plugin may add: signal sources and interpretation rules.

The receptor reads how the agent's work is going from its tool calls. A
:class:`SignalSource` turns each event, seen against the session's recent
history, into readings on the receptor's axes; the receptor's layers turn
readings into a :class:`FiringComposition` when an axis fires; an
:class:`InterpretationRule` decides what, if anything, the agent gets.
Sources come from ``thatch_receptor_signals``, rules from
``thatch_receptor_rules``; the receptor plugin owns the layers in between.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from thatch.plugin.events import Event

#: Layer B's axes, and layer A's (``flow``).
Axis = Literal["frustration", "seeking", "uncertainty", "fatigue", "isolation", "flow"]
AXES: tuple[Axis, ...] = ("frustration", "seeking", "uncertainty", "fatigue", "isolation", "flow")
#: How an interpretation reaches the agent, quietest first: not at all (recorded
#: only), a probe run and its result cached, an offer the agent accepts or dismisses,
#: results the agent reads with a tool, and one item placed in its context.
DeliveryMode = Literal["drop", "silent", "passive", "notification", "active"]
DELIVERY_MODES: tuple[DeliveryMode, ...] = ("drop", "silent", "passive", "notification", "active")
#: The receptor's time windows: 5 minutes, 30 minutes and the whole session.
Window = Literal["short", "medium", "session"]
WINDOWS: tuple[Window, ...] = ("short", "medium", "session")
#: How far back each window reaches, in seconds (``session``: to the session's start).
WINDOW_SECONDS: Mapping[Window, float | None] = {"short": 300.0, "medium": 1800.0, "session": None}
#: Pattern labels of recent work that the receptor's layers give; a plugin may add others.
PATTERNS: tuple[str, ...] = ("trial_error", "wandering", "exploring", "implementation")


def _unit(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    """Between 0 and 1 (one comparison: a replay makes tens of thousands of readings a second)."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{attribute.name} must be between 0 and 1, not {value!r}")


def delta_key(earlier: Window, later: Window, axis: Axis) -> str:
    """The key of :attr:`FiringComposition.deltas` for ``axis`` from one window to another.

    ``delta_key("medium", "short", "frustration")`` is ``"medium-short:frustration"``:
    the axis's value over the short window minus its value over the medium one.
    """
    return f"{earlier}-{later}:{axis}"


def _unit_values(
    instance: object, attribute: attrs.Attribute[Any], axes: Mapping[str, float]
) -> None:
    outside = sorted(axis for axis, value in axes.items() if not 0.0 <= value <= 1.0)
    if outside:
        raise ValueError(f"{attribute.name}: {', '.join(outside)} not between 0 and 1")


# Not slotted: a frozen class with a __dict__ is built faster, and a replay builds
# tens of thousands a second.
@attrs.frozen(slots=False)
class SignalReading:
    """One source's reading of one axis for one event."""

    #: The source that read it (:attr:`SignalSource.name`).
    source: str
    axis: Axis
    #: How strongly the event points at the axis, 0 (not at all) to 1.
    value: float = attrs.field(validator=_unit)
    #: Why, in a few words (``"pytest failed 3 times in 4 minutes"``).
    detail: str = ""


@runtime_checkable
class EventHistory(Protocol):
    """The session's events so far, as a source reads them."""

    #: The session the history is of.
    session_id: str
    #: The current event's time (seconds since the epoch). An event without one
    #: is placed a nominal step after the one before (``[receptor] step_seconds``).
    now: float

    def window(self, window: Window) -> Sequence[Event]:
        """The events of one window (:data:`WINDOW_SECONDS`), oldest first, the current last."""


@runtime_checkable
class SignalSource(Protocol):
    """Reads one kind of evidence (failing runs, repeated searches...) from events."""

    #: Unique among sources; shown in compositions and ``thatch receptor replay``.
    name: str

    def read(self, event: Event, history: EventHistory) -> Iterable[SignalReading]:
        """This source's readings for ``event`` (nothing: it has no opinion).

        Called once per event, in the daemon, off the hook path. Keep it cheap:
        replay runs it on tens of thousands of events a second.
        """


@attrs.frozen
class FiringComposition:
    """What layer B saw when an axis fired: everything an interpretation needs."""

    session_id: str
    #: Each axis's value at the firing, 0 to 1.
    axes: Mapping[Axis, float] = attrs.field(validator=_unit_values)
    #: The axes over their thresholds.
    fired: frozenset[Axis]
    #: The readings that contributed, strongest first.
    signals: tuple[SignalReading, ...]
    #: Change of each axis between windows, keyed by :func:`delta_key`.
    deltas: Mapping[str, float]
    #: The shape of the recent work (one of :data:`PATTERNS`, or a plugin's own).
    pattern: str
    #: Whether layer A (flow) holds: deep work, where active delivery is forbidden.
    in_flow: bool = False
    #: The event that made it fire (:attr:`Event.event_id`): a delivery answers it.
    event_id: str = ""
    #: That event's time (:attr:`EventHistory.now`).
    at: float = 0.0


@attrs.frozen
class Interpretation:
    """What to do about a composition: probe for what, deliver how, and why."""

    #: The rule that made it (:attr:`InterpretationRule.name`).
    rule: str
    #: What to look for (``error_context``, ``similar_tasks``, ``break``...).
    trigger: str
    mode: DeliveryMode
    #: Shown to the agent: why this is offered now.
    reason: str
    #: How sure the rule is, 0 to 1; the receptor compares it with its delivery and
    #: silent thresholds (under both: dropped, and recorded for learning).
    score: float = attrs.field(default=1.0, validator=_unit)


@runtime_checkable
class InterpretationRule(Protocol):
    """Maps a firing composition to an interpretation, or to nothing."""

    #: Unique among rules; a user's rule file overrides a rule of the same name.
    name: str

    def interpret(self, composition: FiringComposition) -> Interpretation | None:
        """The interpretation of ``composition``, or None when the rule does not apply."""
