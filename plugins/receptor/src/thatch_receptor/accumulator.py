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

:class:`AxisTrail` keeps each event's values so that an axis's mean over the
short, medium and session windows, and the deltas between them, cost a
binary search rather than a pass over the session.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from thatch.plugin import AXES, WINDOW_SECONDS, delta_key

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
        self._values: dict[Axis, float] = dict.fromkeys(AXES, 0.0)
        self._last_at: float | None = None
        #: Each axis's decay factor over a gap, by gap: events mostly come a step apart.
        self._decays: dict[float, tuple[float, ...]] = {}

    @property
    def values(self) -> dict[Axis, float]:
        """Each axis's value after the last event."""
        return dict(self._values)

    def step(self, at: float, readings: Iterable[SignalReading]) -> dict[Axis, float]:
        """Advance by one event at time ``at`` with its readings; the axes' new values."""
        dt = 0.0 if self._last_at is None else min(self._max_decay, max(0.0, at - self._last_at))
        self._last_at = at
        kept = dict.fromkeys(AXES, 1.0)
        gains = self._gains
        for reading in readings:
            axis = reading.axis
            if axis in kept:
                kept[axis] *= 1.0 - min(1.0, gains[axis] * reading.value)
        values = self._values
        for axis, decay in zip(AXES, self._decay(dt), strict=True):
            decayed = values[axis] * decay
            impulse = 1.0 - kept[axis]
            values[axis] = decayed + impulse * (1.0 - decayed)
        values["flow"] *= kept["frustration"]
        return dict(values)

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
        #: Running sums of each axis: ``_sums[axis][i]`` is the sum of the first i values.
        self._sums: dict[Axis, list[float]] = {axis: [0.0] for axis in AXES}

    def add(self, at: float, values: Mapping[Axis, float]) -> None:
        self._times.append(at)
        for axis in AXES:
            sums = self._sums[axis]
            sums.append(sums[-1] + values.get(axis, 0.0))
        if len(self._times) > self._max:
            cut = max(1, self._max // 10)
            del self._times[:cut]
            for sums in self._sums.values():
                del sums[:cut]

    def mean(self, window: Window, axis: Axis) -> float:
        """The axis's mean over one window's events, up to the last one added."""
        if not self._times:
            return 0.0
        reach = WINDOW_SECONDS[window]
        start = 0 if reach is None else bisect_left(self._times, self._times[-1] - reach)
        sums = self._sums[axis]
        return (sums[-1] - sums[start]) / (len(self._times) - start)

    def deltas(self) -> dict[str, float]:
        """Each axis's change between windows, keyed by :func:`thatch.plugin.delta_key`."""
        return {
            delta_key(earlier, later, axis): self.mean(later, axis) - self.mean(earlier, axis)
            for earlier, later in DELTA_PAIRS
            for axis in AXES
        }
