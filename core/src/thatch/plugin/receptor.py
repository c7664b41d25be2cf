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
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from thatch.plugin.events import Event

#: Layer B's axes, and layer A's (``flow``).
Axis = Literal["frustration", "seeking", "uncertainty", "fatigue", "isolation", "flow"]
AXES: tuple[Axis, ...] = ("frustration", "seeking", "uncertainty", "fatigue", "isolation", "flow")
#: How an interpretation reaches the agent, quietest first.
DeliveryMode = Literal["drop", "silent", "passive", "notification", "active"]
DELIVERY_MODES: tuple[DeliveryMode, ...] = ("drop", "silent", "passive", "notification", "active")
#: The receptor's time windows: 5 minutes, 30 minutes and the whole session.
Window = Literal["short", "medium", "session"]


@attrs.frozen
class SignalReading:
    """One source's reading of one axis for one event."""

    #: The source that read it (:attr:`SignalSource.name`).
    source: str
    axis: Axis
    #: How strongly the event points at the axis, 0 (not at all) to 1.
    value: float = attrs.field(validator=[attrs.validators.ge(0.0), attrs.validators.le(1.0)])
    #: Why, in a few words (``"pytest failed 3 times in 4 minutes"``).
    detail: str = ""


@runtime_checkable
class EventHistory(Protocol):
    """The session's events so far, as a source reads them."""

    #: The session the history is of.
    session_id: str

    def window(self, window: Window) -> Sequence[Event]:
        """The events of one time window, oldest first, the current event last."""


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
    axes: Mapping[Axis, float]
    #: The axes over their thresholds.
    fired: frozenset[Axis]
    #: The readings that contributed, strongest first.
    signals: tuple[SignalReading, ...]
    #: Change of each axis between windows (``"short-medium:frustration"``).
    deltas: Mapping[str, float]
    #: The shape of the recent work (``trial_error``, ``wandering``, ``exploring``,
    #: ``implementation``...).
    pattern: str
    #: Whether layer A (flow) holds: deep work, where active delivery is forbidden.
    in_flow: bool = False


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
    #: How sure the rule is, 0 to 1; the receptor compares it with its delivery thresholds.
    score: float = 1.0


@runtime_checkable
class InterpretationRule(Protocol):
    """Maps a firing composition to an interpretation, or to nothing."""

    #: Unique among rules; a user's rule file overrides a rule of the same name.
    name: str

    def interpret(self, composition: FiringComposition) -> Interpretation | None:
        """The interpretation of ``composition``, or None when the rule does not apply."""
