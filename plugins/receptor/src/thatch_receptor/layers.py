"""The neuron triangle: when an axis fires, and who may move which threshold.

- **Layer A** (:class:`FlowLayer`) watches flow against a fixed threshold
  (0.6 by default) that no layer can change: it has no setter, and layer C
  is never given A. While A holds, the agent is in deep work, and every
  composition carries ``in_flow=True`` so that the interpretation suppresses
  interventions.
- **Layer B** (:class:`AxisLayer`) gives each of the other axes an adaptive
  threshold: the agent's own baseline (an exponential moving average of the
  axis, time constant ``baseline_seconds``, 600 s:
  ``alpha = 1 - exp(-dt / 600)``), plus the axis's offset (0.25), plus the
  meta field layer C sets, clamped to ``bounds`` (0.25 to 0.85). After
  ``snap_seconds`` (180 s) of silence the baseline snaps to the axis's value.
  The threshold an event is compared with is the one before the event moves
  the baseline.
- **Layer C** (:class:`MetaLayer`) watches A hold and B fire and moves B's
  field only, by at most ``field_step`` (0.03) per event within
  ``±field_limit`` (0.15): up (less sensitive) while the recent events were
  mostly deep work, down for frustration and seeking (more sensitive) while
  they were mostly stuck (frustration held), back towards 0 otherwise. It
  never fires and never touches A; no layer knows why its threshold moved.

Hold and release (:class:`Hold`): an axis over its threshold fires and holds;
it is released only after ``release_after`` (3) consecutive events under it.
Each layer advances only in its ``step``, once per event; every other method
and property is a pure read, however often it is called.
"""

from __future__ import annotations

import math
import operator
from collections import deque
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal, get_args

import attrs

if TYPE_CHECKING:
    from thatch.plugin import Axis

#: Layer B's axes: every axis but flow.
B_AXES: tuple[Axis, ...] = ("frustration", "seeking", "uncertainty", "fatigue", "isolation")
#: What layer C calls an event, for its memory of the recent ones.
MetaState = Literal["deep_work", "stuck", "firing", "idle"]
_NO_TARGETS: Mapping[Axis, float] = {}
_NONE: frozenset[Axis] = frozenset()
# Per-event loops over the axes are loops, not comprehensions: a comprehension is a call
# of its own, which costs more than its five items.
# _FAST_ZIP: the zips of one event's per-axis lists go without ``strict=True``: the
# lists are of the layer's axes by construction, and the keyword costs a parse per call.


class Hold:
    """Fire-and-hold: over the threshold holds; ``release_after`` events under it release.

    ``held`` and ``under`` are plain attributes, read as often as every layer
    steps (a property would be a call each time); only :meth:`step` moves them.
    """

    __slots__ = ("_release_after", "held", "under")

    def __init__(self, release_after: int = 3) -> None:
        if release_after < 1:
            raise ValueError(f"release_after must be at least 1, got {release_after}")
        self._release_after = release_after
        #: Over the threshold, and not yet released.
        self.held = False
        #: Consecutive events under the threshold while held.
        self.under = 0

    def step(self, over: bool) -> bool:
        """Advance by one event; True when this event fired (the hold began)."""
        if over:
            fired = not self.held
            self.held, self.under = True, 0
            return fired
        if self.held:
            self.under += 1
            if self.under >= self._release_after:
                self.held, self.under = False, 0
        return False


class FlowLayer:
    """Layer A: flow against a fixed threshold. While it holds, the agent is in deep work."""

    def __init__(self, threshold: float = 0.6, *, release_after: int = 3) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"the flow threshold must be above 0 and at most 1, got {threshold}")
        self._threshold = threshold
        self._hold = Hold(release_after)
        #: The hold is on: deep work (a plain attribute, read with every step; only
        #: :meth:`step` moves it).
        self.holding = False

    @property
    def threshold(self) -> float:
        """Fixed for the layer's life: nothing may move it."""
        return self._threshold

    def step(self, flow: float) -> bool:
        """Advance by one event's flow value; True when deep work began with it."""
        hold = self._hold
        fired = hold.step(flow >= self._threshold)
        self.holding = hold.held
        return fired


@attrs.frozen
class Baseline:
    """Layer B's baseline parameters (see the module docstring)."""

    seconds: float = 600.0
    snap_seconds: float = 180.0
    offset: float = 0.25
    bounds: tuple[float, float] = (0.25, 0.85)


class AxisLayer:
    """Layer B: each axis against its own adaptive threshold, with fire-and-hold."""

    def __init__(
        self,
        baseline: Baseline | None = None,
        *,
        offsets: Mapping[Axis, float] | None = None,
        axes: Iterable[Axis] = B_AXES,
        release_after: int = 3,
    ) -> None:
        self._baseline = baseline or Baseline()
        self._axes = tuple(axes)
        self._index = {axis: index for index, axis in enumerate(self._axes)}
        offsets = {axis: self._baseline.offset for axis in self._axes} | dict(offsets or {})
        #: Each axis's offset, baseline and field, in ``axes`` order.
        self._offsets = [offsets[axis] for axis in self._axes]
        self._ema = [0.0] * len(self._axes)
        self._field = dict.fromkeys(self._axes, 0.0)
        self._fields = [0.0] * len(self._axes)
        self._holds = [Hold(release_after) for _ in self._axes]
        #: The axes held after the last event (a plain attribute: read with every step).
        self.held: frozenset[Axis] = frozenset()
        self._last_at: float | None = None
        #: The last gap between events and its ``alpha``: events mostly come a step apart.
        self._alpha: tuple[float, float] = (0.0, 0.0)
        #: The thresholds, in ``axes`` order, until a baseline or a field moves (None: work
        #: them out again).
        self._thresholds: list[float] | None = None

    @property
    def axes(self) -> tuple[Axis, ...]:
        return self._axes

    def baseline(self, axis: Axis) -> float:
        """The axis's ambient: the moving average of its values so far."""
        return self._ema[self._index[axis]]

    def field(self, axis: Axis) -> float:
        """What layer C added to the axis's threshold."""
        return self._field[axis]

    def fields(self) -> Mapping[Axis, float]:
        """What layer C added to each axis's threshold (read only: move one with adjust_field)."""
        return self._field

    def threshold(self, axis: Axis) -> float:
        """The threshold the next event's value is compared with."""
        return self._current_thresholds()[self._index[axis]]

    def thresholds(self) -> dict[Axis, float]:
        return dict(zip(self._axes, self.threshold_values()))  # noqa: B905 (_FAST_ZIP)

    def threshold_values(self) -> list[float]:
        """Each axis's threshold for the next event, in :attr:`axes` order (read, not change)."""
        # The kept thresholds (step's _follow works them out) without a call for them.
        return self._thresholds or self._current_thresholds()

    def _current_thresholds(self) -> list[float]:
        """Every axis's threshold, worked out once between two moves of a baseline or field."""
        found = self._thresholds
        if found is None:
            low, high = self._baseline.bounds
            found = []
            # ema + offset + field, added in that order, in C
            sums = map(operator.add, map(operator.add, self._ema, self._offsets), self._fields)
            for threshold in sums:
                # min(high, max(low, threshold)), without the two calls
                threshold = threshold if threshold > low else low
                found.append(threshold if threshold < high else high)
            self._thresholds = found
        return found

    def step(self, at: float, values: Mapping[Axis, float]) -> frozenset[Axis]:
        """Advance by one event at time ``at``; the axes that fired with it."""
        return self.step_values(at, [values.get(axis, 0.0) for axis in self._axes])

    def step_values(self, at: float, current: list[float]) -> frozenset[Axis]:
        """:meth:`step`, with each axis's value in :attr:`axes` order (the list is kept)."""
        # The receptor read the thresholds just before: no call for the kept ones.
        thresholds = self._thresholds or self._current_thresholds()
        if not self.held and not any(map(operator.gt, current, thresholds)):
            self._follow(at, current)  # nothing held, nothing over: no hold moves (most events)
            return _NONE
        fired: list[Axis] = []
        held: list[Axis] = []
        for axis, hold, value, threshold in zip(  # noqa: B905 (_FAST_ZIP)
            self._axes, self._holds, current, thresholds
        ):
            over = value > threshold
            if not over and not hold.held:
                continue  # a hold neither held nor over: its step would change nothing
            if hold.step(over):
                fired.append(axis)
            if hold.held:
                held.append(axis)
        self.held = frozenset(held) if held else _NONE
        self._follow(at, current)
        return frozenset(fired) if fired else _NONE

    def adjust_field(self, axis: Axis, change: float, limit: float) -> None:
        """Move one axis's field by ``change``, kept within ``±limit`` (layer C's lever)."""
        # min(limit, max(-limit, field + change)), in conditionals: a max or min call
        # parses its arguments each time, and layer C moves a field on many events.
        moved = self._field[axis] + change
        moved = moved if moved > -limit else -limit
        moved = moved if moved < limit else limit
        self._field[axis] = moved
        self._fields[self._index[axis]] = moved
        self._thresholds = None

    def _follow(self, at: float, current: list[float]) -> None:
        """Move each baseline towards the event's value (snap after a long silence)."""
        # max(0, gap), in a conditional: this runs on every event.
        dt = 0.0 if self._last_at is None else at - self._last_at
        dt = dt if dt > 0.0 else 0.0
        self._last_at = at
        if dt >= self._baseline.snap_seconds:
            self._ema = current
            self._thresholds = None
            return
        last_dt, alpha = self._alpha
        if dt != last_dt or not alpha:
            alpha = 1.0 - math.exp(-dt / self._baseline.seconds)
            self._alpha = (dt, alpha)
        # The next thresholds in the same loop, as _current_thresholds works them out:
        # the receptor reads them on the next event, and one loop costs less than two.
        low, high = self._baseline.bounds
        moved = []
        thresholds = []
        for ema, value, offset, field in zip(  # noqa: B905 (_FAST_ZIP)
            self._ema, current, self._offsets, self._fields
        ):
            ema += alpha * (value - ema)
            moved.append(ema)
            threshold = ema + offset + field
            threshold = threshold if threshold > low else low
            thresholds.append(threshold if threshold < high else high)
        self._ema = moved
        self._thresholds = thresholds


@attrs.frozen
class MetaPolicy:
    """Layer C's parameters (see the module docstring)."""

    field_step: float = 0.03
    field_limit: float = 0.15
    #: Recent events remembered.
    memory: int = 20
    #: Share of remembered events in one state that makes C act on it.
    majority: float = 0.5


class MetaLayer:
    """Layer C: moves layer B's field from what A and B did; never fires, never touches A."""

    def __init__(self, axes: AxisLayer, policy: MetaPolicy | None = None) -> None:
        self._axes = axes
        self._policy = policy or MetaPolicy()
        self._recent: deque[MetaState] = deque(maxlen=self._policy.memory)
        #: How many remembered events are in each state (kept with ``_recent``), every
        #: state from 0: a plain dict, as a Counter's items (a subclass's) are read and
        #: set more slowly, and this runs on every event.
        self._counts: dict[MetaState, int] = dict.fromkeys(get_args(MetaState), 0)
        #: What :meth:`state` answers, worked out again only when ``_counts`` change.
        self._state: MetaState | None = None
        limit = self._policy.field_limit
        self._deep_work: dict[Axis, float] = dict.fromkeys(axes.axes, limit)
        self._stuck: dict[Axis, float] = {"frustration": -limit, "seeking": -limit}
        #: Each state's targets for every axis (0 for one left out), by state.
        self._settled: dict[MetaState | None, dict[Axis, float]] = {}

    @property
    def recent(self) -> tuple[MetaState, ...]:
        return tuple(self._recent)

    def state(self) -> MetaState | None:
        """The state the remembered events mostly share, or None when none has a majority.

        Two states with the same count (half the memory each, at a majority of
        0.5) are no majority either: neither is what the events mostly share.
        """
        return self._state

    def _majority(self) -> MetaState | None:
        """:meth:`state`, counted."""
        memory, majority = self._policy.memory, self._policy.majority
        most = 0
        for seen in self._counts.values():  # max(), without its call's parse: a few states
            most = seen if seen > most else most
        if most / memory < majority:
            return None  # no state has enough events, tied or not
        top: MetaState | None = None
        count = tied = 0
        for state, seen in self._counts.items():
            if seen > count:
                top, count, tied = state, seen, 0
            elif seen == count:
                tied = seen
        if top is None or tied == count:
            return None
        return top if count / memory >= majority else None

    def step(self, in_flow: bool, fired: frozenset[Axis]) -> None:
        """Advance by one event: remember what A and B did, then move B's field one step."""
        # _state_of and _remember, inline: this runs on every event.
        if in_flow:
            now: MetaState = "deep_work"
        else:
            held = self._axes.held
            now = "stuck" if "frustration" in held else "firing" if fired or held else "idle"
        # When the events mostly share this event's state already, one more of it (and
        # one fewer of another) leaves that state on top, with more: no count needed.
        recent = self._recent
        if recent.maxlen:
            if len(recent) == recent.maxlen:
                dropped = recent[0]
                recent.append(now)
                if dropped != now:  # else the same counts: the same state
                    self._counts[dropped] -= 1
                    self._counts[now] += 1
                    if self._state != now:
                        self._state = self._majority()
            else:
                recent.append(now)
                self._counts[now] += 1
                if self._state != now:
                    self._state = self._majority()
        state = self._state
        fields = self._axes._field  # fields(), without the call: one module, one owner
        if state != "deep_work" and state != "stuck" and not any(fields.values()):
            return  # every field at rest, and none to head for (_targets: none): most events
        targets = self._targets(state)
        settled = self._settled.get(state)
        if settled is None:
            settled = {axis: targets.get(axis, 0.0) for axis in self._axes.axes}
            self._settled[state] = settled
        if fields == settled:
            return  # every field where it heads (deep work held a while): nothing moves
        policy = self._policy
        most = policy.field_step
        for axis in self._axes.axes:
            gap = targets.get(axis, 0.0) - fields[axis]
            # max(-most, min(most, gap)), in conditionals (as in adjust_field)
            step = gap if gap < most else most
            step = step if step > -most else -most
            if step:
                self._axes.adjust_field(axis, step, policy.field_limit)

    def _targets(self, state: MetaState | None) -> Mapping[Axis, float]:
        """Where each axis's field heads in ``state`` (an axis left out: back to 0)."""
        if state == "deep_work":
            return self._deep_work
        if state == "stuck":
            return self._stuck
        return _NO_TARGETS
