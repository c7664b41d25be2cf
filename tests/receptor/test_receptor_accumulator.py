"""Axis values from readings: impulses, half-lives, and the trail's window deltas."""

from __future__ import annotations

import pytest
from thatch.plugin import SignalReading, delta_key
from thatch_receptor.accumulator import Accumulator, AxisTrail


def reading(axis: str, value: float) -> SignalReading:
    return SignalReading("test", axis, value)  # type: ignore[arg-type]


def test_an_impulse_adds_its_share_of_the_way_to_one() -> None:
    acc = Accumulator(gains={"seeking": 1.0})
    assert acc.step(0.0, [reading("seeking", 0.5)])["seeking"] == pytest.approx(0.5)
    assert acc.step(0.0, [reading("seeking", 0.5)])["seeking"] == pytest.approx(0.75)


def test_readings_of_one_event_combine_as_independent_evidence() -> None:
    acc = Accumulator(gains={"seeking": 1.0})
    values = acc.step(0.0, [reading("seeking", 0.5), reading("seeking", 0.5)])
    assert values["seeking"] == pytest.approx(0.75)


def test_values_halve_over_a_half_life_with_the_gap_capped() -> None:
    acc = Accumulator(
        half_lives={"frustration": 30.0}, gains={"frustration": 1.0}, max_decay_seconds=30.0
    )
    acc.step(0.0, [reading("frustration", 0.8)])
    assert acc.step(30.0, [])["frustration"] == pytest.approx(0.4)
    assert acc.step(3030.0, [])["frustration"] == pytest.approx(0.2), "a pause decays 30 s only"


def test_frustration_breaks_flow() -> None:
    acc = Accumulator(gains={"flow": 1.0, "frustration": 1.0})
    acc.step(0.0, [reading("flow", 0.8)])
    assert acc.step(0.0, [reading("frustration", 0.5)])["flow"] == pytest.approx(0.4)


def test_the_trail_gives_window_means_and_deltas() -> None:
    trail = AxisTrail()
    for i in range(100):
        trail.add(i * 60.0, {"frustration": 1.0 if i >= 95 else 0.0})
    # short: the last 6 events (5 minutes back, inclusive), 5 of them frustrated.
    assert trail.mean("short", "frustration") == pytest.approx(5 / 6)
    assert trail.mean("medium", "frustration") == pytest.approx(5 / 31)
    deltas = trail.deltas()
    assert deltas[delta_key("medium", "short", "frustration")] == pytest.approx(5 / 6 - 5 / 31)
    assert deltas[delta_key("session", "short", "flow")] == 0.0


def test_the_trail_keeps_its_last_events() -> None:
    trail = AxisTrail(max_events=10)
    for i in range(25):
        trail.add(float(i), {"fatigue": float(i % 2)})
    assert 0.0 < trail.mean("session", "fatigue") < 1.0
