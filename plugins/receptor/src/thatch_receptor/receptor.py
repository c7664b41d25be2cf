"""The receptor: events in, axis values, firings and compositions out.

``Receptor(sources=..., settings=...).feed(event)`` advances the event's
session by exactly one step (a repeated event, by ``event_id``, returns the
step it already made) and returns a :class:`Step`:

1. the session's :class:`~thatch_receptor.history.SessionHistory` places the
   event in time (``step_seconds`` after the last one when it has no time);
2. every signal source reads it (a source that raises is skipped, its first
   failure logged with the traceback and later ones counted,
   :mod:`thatch_receptor.source_failures`; one that declares it cannot speak
   on the event's traits is not called, :mod:`thatch_receptor.traits`);
3. the :class:`~thatch_receptor.accumulator.Accumulator` turns the readings
   into axis values (impulses with per-axis half-lives);
4. the neuron triangle (:mod:`thatch_receptor.layers`) advances: A on flow,
   B on the other axes, then C on what A and B did;
5. when B fires, the step carries one :class:`thatch.plugin.FiringComposition`
   (fire-through: always, deep work or not; suppression is the
   interpretation's job): every axis's value, the axes B holds, the readings
   strongest first, the window deltas and the short window's pattern
   (:mod:`thatch_receptor.patterns`), with ``in_flow`` while A holds.

Every parameter is a field of :class:`Settings`, documented there and in the
modules that use it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs
from thatch.plugin import AXES, FiringComposition

from thatch_receptor.accumulator import GAINS, HALF_LIVES, Accumulator, AxisTrail
from thatch_receptor.history import DEFAULT_MAX_EVENTS, DEFAULT_STEP_SECONDS, SessionHistory
from thatch_receptor.layers import B_AXES, AxisLayer, Baseline, FlowLayer, MetaLayer, MetaPolicy
from thatch_receptor.patterns import pattern_of_tally
from thatch_receptor.signals import builtin_sources
from thatch_receptor.source_failures import SourceFailures
from thatch_receptor.traits import declared_traits, traits_of

if TYPE_CHECKING:
    from thatch.plugin import Axis, Event, SignalReading, SignalSource

    from thatch_receptor.actions import Action

log = logging.getLogger(__name__)

_AXIS_SET: frozenset[str] = frozenset(AXES)
#: The built-in sources' classes: each reads only axes of AXES (written into its read),
#: so their readings are taken as they come, without a test of each reading's axis.
_BUILT_IN: frozenset[type] = frozenset(type(source) for source in builtin_sources())
#: Layer B's axes come first in AXES, then flow: an event's values in AXES order are
#: layer B's, then layer A's.
_B_COUNT = len(B_AXES)
assert (*B_AXES, "flow") == AXES


def _by_axis(b_axes: Sequence[float], flow: float) -> dict[Axis, float]:
    """``dict(zip(AXES, (*b_axes, flow)))`` as a display: layer B's values, then flow's.

    A display is built at its size, where a dict filled from pairs outgrows its
    first table at the sixth key; this takes half the time, twice an event
    (the step's values and thresholds).
    """
    frustration, seeking, uncertainty, fatigue, isolation = b_axes
    return {
        "frustration": frustration,
        "seeking": seeking,
        "uncertainty": uncertainty,
        "fatigue": fatigue,
        "isolation": isolation,
        "flow": flow,
    }


assert tuple(_by_axis([0.0] * _B_COUNT, 0.0)) == AXES  # its keys are AXES, in order


@attrs.frozen
class Settings:
    """The receptor's parameters; the defaults are the documented ones."""

    #: Seconds an event without a time is placed after the one before.
    step_seconds: float = DEFAULT_STEP_SECONDS
    #: Events a session's history (and axis trail) keeps.
    max_events: int = DEFAULT_MAX_EVENTS
    #: Each axis's half-life in seconds (:mod:`thatch_receptor.accumulator`).
    half_lives: Mapping[Axis, float] = attrs.field(factory=lambda: dict(HALF_LIVES))
    #: What each axis's readings are scaled by before they add up.
    gains: Mapping[Axis, float] = attrs.field(factory=lambda: dict(GAINS))
    #: The longest gap between events that decays the axes, in seconds.
    max_decay_seconds: float = 30.0
    #: Layer A's fixed threshold: flow at or above it holds deep work.
    flow_threshold: float = 0.6
    #: Layer B's baseline: time constant, snap after silence, default offset, bounds.
    baseline: Baseline = attrs.field(factory=Baseline)
    #: Per-axis offsets over the baseline (an axis left out takes ``baseline.offset``).
    offsets: Mapping[Axis, float] = attrs.field(factory=dict)
    #: Consecutive sub-threshold events that release a held axis (A and B).
    release_after: int = 3
    #: Layer C's field steps and memory.
    meta: MetaPolicy = attrs.field(factory=MetaPolicy)
    #: Readings a composition keeps, strongest first.
    max_signals: int = 8


# Not slotted: a frozen class with a __dict__ is built faster, and one is built per event.
@attrs.frozen(slots=False)
class Step:
    """What one event did to its session's receptor."""

    session_id: str
    event_id: str
    #: The event's time (:attr:`thatch.plugin.EventHistory.now`).
    at: float
    #: Each axis's value after the event, 0 to 1.
    axes: Mapping[Axis, float]
    #: Each axis's threshold the event was compared with (flow's is layer A's fixed one).
    thresholds: Mapping[Axis, float]
    #: The layer B axes that fired with this event (their hold began).
    fired: frozenset[Axis]
    #: The layer B axes held after the event, those that just fired included.
    held: frozenset[Axis]
    #: Layer A holds: deep work.
    in_flow: bool
    #: The short window's pattern (:mod:`thatch_receptor.patterns`).
    pattern: str
    #: Every source's readings of the event, in source order.
    readings: tuple[SignalReading, ...]
    #: The event's actions (:mod:`thatch_receptor.actions`).
    actions: tuple[Action, ...]
    #: What layer B produced: one composition when an axis fired, else none.
    compositions: tuple[FiringComposition, ...] = ()

    @property
    def texts(self) -> tuple[str, ...]:
        """The event's actions as short texts (``bash: pytest -> exit 1: ...``).

        Formatted when read, not with every step: a replay reads few of them.
        """
        return tuple([action.text for action in self.actions])


class _Session:
    """One session's receptor state: history, values, the three layers and the last step."""

    def __init__(self, session_id: str, settings: Settings) -> None:
        self.history = SessionHistory(
            session_id, step_seconds=settings.step_seconds, max_events=settings.max_events
        )
        self.accumulator = Accumulator(
            settings.half_lives, settings.gains, max_decay_seconds=settings.max_decay_seconds
        )
        self.trail = AxisTrail(settings.max_events)
        self.flow = FlowLayer(settings.flow_threshold, release_after=settings.release_after)
        self.axes = AxisLayer(
            settings.baseline, offsets=settings.offsets, release_after=settings.release_after
        )
        self.meta = MetaLayer(self.axes, settings.meta)
        self.last: Step | None = None


class Receptor:
    """Reads each session's events into axis values, firings and compositions."""

    def __init__(
        self,
        sources: Iterable[SignalSource] | None = None,
        settings: Settings | None = None,
    ) -> None:
        """``sources``: the signal sources (default: the built-in ones, without embeddings)."""
        self._sources = tuple(builtin_sources() if sources is None else sources)
        _check_unique(self._sources)
        self._gates = tuple((source, declared_traits(source)) for source in self._sources)
        #: The sources that can speak on an event, by its traits (a few combinations recur),
        #: each with whether its readings' axes are to be tested (not a built-in's).
        self._speaking: dict[int, tuple[tuple[SignalSource, bool], ...]] = {}
        self._settings = settings or Settings()
        self._sessions: dict[str, _Session] = {}
        self._failures = SourceFailures(log)

    @property
    def sources(self) -> tuple[SignalSource, ...]:
        return self._sources

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def failures(self) -> SourceFailures:
        """The sources that raised, and how often."""
        return self._failures

    @property
    def sessions(self) -> tuple[str, ...]:
        """The sessions the receptor holds state for."""
        return tuple(self._sessions)

    def last(self, session_id: str) -> Step | None:
        """The last step of a session, or None when it has had no event."""
        session = self._sessions.get(session_id)
        return session.last if session else None

    def forget(self, session_id: str) -> None:
        """Drop a session's state (at its end); its next event starts afresh."""
        self._sessions.pop(session_id, None)

    def feed(self, event: Event) -> Step:
        """Advance the event's session by one step and return it."""
        session = self._sessions.get(event.session_id)
        if session is None:
            session = self._sessions[event.session_id] = _Session(event.session_id, self._settings)
        last = session.last
        if event.event_id and last is not None and last.event_id == event.event_id:
            return last
        history, axes = session.history, session.axes
        at = history.add(event)
        readings = self._read(event, history)
        advanced = session.accumulator.advance(at, readings)
        session.trail.add_values(at, advanced)
        # advanced is in AXES order by construction: layer B's values, then flow.
        b_values, flow = advanced[:_B_COUNT], advanced[_B_COUNT]
        values = _by_axis(b_values, flow)
        # Layer A's threshold from the settings, without the property.
        thresholds = _by_axis(axes.threshold_values(), self._settings.flow_threshold)
        session.flow.step(flow)
        in_flow = session.flow.holding
        fired = axes.step_values(at, b_values)
        session.meta.step(in_flow, fired)
        held = axes.held
        pattern = pattern_of_tally(history.short)
        compositions: tuple[FiringComposition, ...] = ()
        if fired:
            compositions = (
                FiringComposition(
                    session_id=event.session_id,
                    axes=values,
                    fired=held,
                    signals=self._strongest(readings),
                    deltas=session.trail.deltas(),
                    pattern=pattern,
                    in_flow=in_flow,
                    event_id=event.event_id,
                    at=at,
                ),
            )
        # The fields in order, by position: keywords to a class make a dict for its
        # __init__ on every call.
        session.last = Step(
            event.session_id,
            event.event_id,
            at,
            values,
            thresholds,
            fired,
            held,
            in_flow,
            pattern,
            readings,
            history.current,
            compositions,
        )
        return session.last

    def _read(self, event: Event, history: SessionHistory) -> tuple[SignalReading, ...]:
        """Every source's readings; a source that raises is reported and left out.

        A source that declares when it can speak (:mod:`thatch_receptor.traits`)
        and cannot on this event is not called: its answer would be nothing.
        """
        readings: list[SignalReading] = []
        found_traits = traits_of(history.current)
        speaking = self._speaking.get(found_traits)
        if speaking is None:
            speaking = self._speaking[found_traits] = tuple(
                (source, type(source) not in _BUILT_IN)
                for source, gate in self._gates
                if gate is None or gate & found_traits
            )
        for source, tested in speaking:
            try:
                found = source.read(event, history)
                if not tested:
                    readings += found  # a built-in's list, of known axes
                    continue
                if found is None:  # "nothing to say" as a plain function says it: no error
                    continue
                for reading in found:
                    if reading.axis in _AXIS_SET:
                        readings.append(reading)
            except Exception as error:
                self._failures.failed(source.name, error)
        return tuple(readings)

    def _strongest(self, readings: tuple[SignalReading, ...]) -> tuple[SignalReading, ...]:
        ranked = sorted(readings, key=lambda reading: reading.value, reverse=True)
        return tuple(ranked[: self._settings.max_signals])


def _check_unique(sources: tuple[SignalSource, ...]) -> None:
    seen: set[str] = set()
    for source in sources:
        if source.name in seen:
            raise ValueError(f"two receptor signal sources are named {source.name!r}; rename one")
        seen.add(source.name)
