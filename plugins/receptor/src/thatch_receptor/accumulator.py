"""Axis values from readings: impulses that add up and decay, and their trail over the windows.

Per event, each axis's value ``v`` first decays over the time since the
event before, ``v ← v · 2^(−dt / half_life)``, with ``dt`` capped at
``max_decay_seconds`` (30 s: a pause is not a recovery). Then the event's
readings of the axis, each scaled by the axis's gain, combine as independent
evidence, ``impulse = 1 − Π (1 − gain · value)``, and push the value towards
1 by that share of the way left, ``v ← v + impulse · (1 − v)``, so a value
stays between 0 and 1 and strong evidence saturates rather than overflows.
A frustration impulse also breaks flow: ``flow ← flow · (1 − impulse)``.

Half-lives (seconds): frustration 180, seeking 210, uncertainty 120,
fatigue 600, isolation 300, flow 180. Gains: 0.5 for every axis.

:class:`AxisTrail` keeps each event's values, and their running sums, so that
an axis's mean over the short, medium and session windows, and the deltas
between them, cost a binary search rather than a pass over the session. The
sums are added up when a mean is read (a composition reads them), not with
every event.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from thatch.plugin import AXES, WINDOW_SECONDS, WINDOWS, delta_key

if TYPE_CHECKING:
    from thatch.plugin import Axis, SignalReading, Window

HALF_LIVES: Mapping[Axis, float] = {
    "frustration": 180.0,
    "seeking": 210.0,
    "uncertainty": 120.0,
    "fatigue": 600.0,
    "isolation": 300.0,
    "flow": 180.0,
}
GAINS: Mapping[Axis, float] = dict.fromkeys(AXES, 0.5)
#: The window pairs a composition's deltas compare, earlier (wider) first.
DELTA_PAIRS: tuple[tuple[Window, Window], ...] = (
    ("medium", "short"),
    ("session", "medium"),
    ("session", "short"),
)


class Accumulator:
    """Each axis's value, moved by every event's readings and decaying in between."""

    def __init__(
        self,
        half_lives: Mapping[Axis, float] = HALF_LIVES,
        gains: Mapping[Axis, float] = GAINS,
        *,
        max_decay_seconds: float = 30.0,
    ) -> None:
        self._half_lives = {axis: half_lives.get(axis, HALF_LIVES[axis]) for axis in AXES}
        self._gains = {axis: gains.get(axis, GAINS[axis]) for axis in AXES}
        self._max_decay = max_decay_seconds
        #: Each axis's value, in :data:`AXES` order.
        self._values: list[float] = [0.0] * len(AXES)
        self._last_at: float | None = None
        #: Each axis's decay factor over a gap, by gap: events mostly come a step apart.
        self._decays: dict[float, tuple[float, ...]] = {}

    @property
    def values(self) -> dict[Axis, float]:
        """Each axis's value after the last event."""
        return dict(zip(AXES, self._values, strict=True))

    def step(self, at: float, readings: Iterable[SignalReading]) -> dict[Axis, float]:
        """Advance by one event at time ``at`` with its readings; the axes' new values."""
        return dict(zip(AXES, self.advance(at, readings), strict=True))

    def advance(self, at: float, readings: Iterable[SignalReading]) -> list[float]:
        """:meth:`step`, the new values in :data:`AXES` order (a new list each time)."""
        # min(max_decay, max(0, gap)), in conditionals: this runs on every event.
        gap = 0.0 if self._last_at is None else at - self._last_at
        gap = gap if gap > 0.0 else 0.0
        dt = gap if gap < self._max_decay else self._max_decay
        self._last_at = at
        # The cached factors first: a call to _decay only for a gap not seen yet.
        decays = self._decays.get(dt) or self._decay(dt)
        values = list(map(operator.mul, self._values, decays))
        # An axis without a reading keeps its decayed value (its impulse is 0).
        kept: dict[Axis, float] = {}
        gains = self._gains
        for reading in readings:
            axis = reading.axis
            gain = gains.get(axis)
            if gain is not None:
                scaled = gain * reading.value
                kept[axis] = kept.get(axis, 1.0) * (1.0 - (scaled if scaled < 1.0 else 1.0))
        for axis, left in kept.items():
            index = _INDEX[axis]
            decayed = values[index]
            values[index] = decayed + (1.0 - left) * (1.0 - decayed)
        if "frustration" in kept:
            values[_FLOW] *= kept["frustration"]
        self._values = values
        return values

    def _decay(self, dt: float) -> tuple[float, ...]:
        """Each axis's factor ``2^(−dt / half_life)``, in :data:`AXES` order."""
        found = self._decays.get(dt)
        if found is None:
            found = tuple(math.pow(2.0, -dt / self._half_lives[axis]) for axis in AXES)
            if len(self._decays) < 64:  # real gaps vary: keep the common ones only
                self._decays[dt] = found
        return found


class AxisTrail:
    """Every event's axis values in time, for window means and deltas."""

    def __init__(self, max_events: int = 10_000) -> None:
        self._max = max_events
        self._times: list[float] = []
        #: Running sums of the axes, in :data:`AXES` order: ``_sums[i]`` sums the first i
        #: events. Added up when a mean is read (:meth:`_add_up`), not with every event:
        #: most events read none (a composition reads them, when an axis fires).
        self._sums: list[tuple[float, ...]] = [(0.0,) * len(AXES)]
        #: The values of the events added since the sums were last added up.
        self._pending: list[Sequence[float]] = []

    def add(self, at: float, values: Mapping[Axis, float]) -> None:
        self.add_values(at, [values.get(axis, 0.0) for axis in AXES])

    def add_values(self, at: float, values: Sequence[float]) -> None:
        """:meth:`add`, the values in :data:`AXES` order (kept as they are: do not change them)."""
        self._times.append(at)
        self._pending.append(values)
        if len(self._times) > self._max:
            self._add_up()
            cut = max(1, self._max // 10)
            del self._times[:cut], self._sums[:cut]

    def _add_up(self) -> None:
        """Extend the running sums over the events added since, in order (the same sums)."""
        sums = self._sums
        for values in self._pending:
            sums.append(tuple(map(operator.add, sums[-1], values)))
        self._pending.clear()

    def mean(self, window: Window, axis: Axis) -> float:
        """The axis's mean over one window's events, up to the last one added."""
        if not self._times:
            return 0.0
        if self._pending:
            self._add_up()
        reach = WINDOW_SECONDS[window]
        start = 0 if reach is None else bisect_left(self._times, self._times[-1] - reach)
        index = _INDEX[axis]
        return (self._sums[-1][index] - self._sums[start][index]) / (len(self._times) - start)

    def deltas(self) -> dict[str, float]:
        """Each axis's change between windows, keyed by :func:`thatch.plugin.delta_key`.

        Each window's means are worked out once (one binary search, not one an
        axis and pair), each as :meth:`mean` works it out.
        """
        if self._pending:
            self._add_up()
        means = {window: self._means(window) for window in WINDOWS}
        return {
            key: means[later][index] - means[earlier][index]
            for key, earlier, later, index in _DELTA_KEYS
        }

    def _means(self, window: Window) -> list[float]:
        """:meth:`mean` of every axis, in :data:`AXES` order."""
        times = self._times
        if not times:
            return [0.0] * len(AXES)
        reach = WINDOW_SECONDS[window]
        start = 0 if reach is None else bisect_left(times, times[-1] - reach)
        events = len(times) - start
        first = self._sums[start]
        return [(total - first[i]) / events for i, total in enumerate(self._sums[-1])]


#: Each axis's place in :data:`AXES`.
_INDEX: dict[str, int] = {axis: index for index, axis in enumerate(AXES)}
_FLOW = _INDEX["flow"]
#: Each delta's key, its two windows and its axis's place, in the order deltas are given.
_DELTA_KEYS: tuple[tuple[str, Window, Window, int], ...] = tuple(
    (delta_key(earlier, later, axis), earlier, later, _INDEX[axis])
    for earlier, later in DELTA_PAIRS
    for axis in AXES
)
