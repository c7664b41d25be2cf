"""The neuron triangle: A's fixed threshold, B's adaptive one, C's field, hold and release."""

from __future__ import annotations

import math

import pytest
from thatch_receptor.layers import AxisLayer, Baseline, FlowLayer, Hold, MetaLayer, MetaPolicy

STEP = 20.0


def test_layer_a_threshold_cannot_be_moved_by_c() -> None:
    """However long deep work or being stuck lasts, C moves B's field and never A's threshold."""
    flow = FlowLayer(0.6)
    axes = AxisLayer()
    meta = MetaLayer(axes)
    for i in range(60):
        flow.step(0.9 if i < 30 else 0.0)
        fired = axes.step(i * STEP, {"frustration": 0.0 if i < 30 else 1.0})
        meta.step(flow.holding, fired)
        assert flow.threshold == 0.6
    assert axes.field("frustration") != 0.0
    with pytest.raises(AttributeError):
        flow.threshold = 0.1  # type: ignore[misc]


def test_c_raises_b_field_in_deep_work_in_bounded_steps() -> None:
    axes = AxisLayer()
    meta = MetaLayer(axes, MetaPolicy(field_step=0.03, field_limit=0.15))
    fields = []
    for _ in range(30):
        meta.step(True, frozenset())
        fields.append(axes.field("seeking"))
    steps = [b - a for a, b in zip([0.0, *fields], fields, strict=False)]
    assert all(step <= 0.03 + 1e-9 for step in steps)
    assert fields[-1] == pytest.approx(0.15)
    assert axes.threshold("seeking") == pytest.approx(0.25 + 0.15)


def test_c_lowers_frustration_field_while_stuck() -> None:
    axes = AxisLayer()
    meta = MetaLayer(axes)
    for i in range(20):
        fired = axes.step(i * STEP, {"frustration": 1.0})
        meta.step(False, fired)
    assert axes.field("frustration") == pytest.approx(-0.15)
    assert axes.field("fatigue") == 0.0


def test_c_sees_no_majority_in_a_tie() -> None:
    """Half the memory deep work and half stuck is neither: C holds every field at 0.

    The tie was once broken by the iteration order of a set of strings, which
    changes with the interpreter's hash seed, so a replay could differ by run.
    """
    axes = AxisLayer()
    meta = MetaLayer(axes, MetaPolicy(memory=4, majority=0.5))
    for in_flow in (True, True):
        meta.step(in_flow, frozenset())
    axes.step(0.0, {"frustration": 1.0})  # frustration held: the next events are "stuck"
    for _ in range(2):
        meta.step(False, frozenset())
    assert meta.recent == ("deep_work", "deep_work", "stuck", "stuck")
    assert meta.state() is None
    meta.step(False, frozenset())
    assert meta.state() == "stuck"


def test_b_threshold_follows_the_ema_baseline() -> None:
    baseline = Baseline(seconds=600.0, offset=0.25, bounds=(0.0, 1.0))
    axes = AxisLayer(baseline)
    alpha = 1.0 - math.exp(-STEP / 600.0)
    expected = 0.0
    for i in range(40):
        assert axes.threshold("seeking") == pytest.approx(expected + 0.25)
        axes.step(i * STEP, {"seeking": 0.4})
        if i:
            expected += alpha * (0.4 - expected)
        assert axes.baseline("seeking") == pytest.approx(expected)
    assert axes.baseline("seeking") > 0.2


def test_b_threshold_is_clamped_to_its_bounds() -> None:
    axes = AxisLayer(Baseline(bounds=(0.25, 0.85)))
    assert axes.threshold("fatigue") == 0.25
    for i in range(200):
        axes.step(i * STEP, {"fatigue": 1.0})
    assert axes.threshold("fatigue") == 0.85


def test_b_baseline_snaps_to_the_value_after_a_long_silence() -> None:
    axes = AxisLayer(Baseline(snap_seconds=180.0))
    axes.step(0.0, {"isolation": 0.0})
    axes.step(200.0, {"isolation": 0.5})
    assert axes.baseline("isolation") == 0.5


def test_release_needs_exactly_three_sub_threshold_events_however_often_read() -> None:
    axes = AxisLayer(Baseline(bounds=(0.3, 0.3)))
    values = [0.9, 0.1, 0.1, 0.1, 0.1]
    held = []
    for i, value in enumerate(values):
        fired = axes.step(i * STEP, {"frustration": value})
        # Read the state several times per event, as a caller checking firings would.
        reads = {axes.held for _ in range(5)} | {axes.held}
        assert len(reads) == 1
        held.append(("frustration" in axes.held, "frustration" in fired))
    assert held == [(True, True), (True, False), (True, False), (False, False), (False, False)]


def test_a_value_over_the_threshold_again_resets_the_release_count() -> None:
    hold = Hold(3)
    assert hold.step(True)
    hold.step(False)
    hold.step(False)
    assert not hold.step(True), "still held: no new firing"
    hold.step(False)
    hold.step(False)
    assert hold.held
    hold.step(False)
    assert not hold.held


def test_layer_a_holds_and_releases_like_b() -> None:
    flow = FlowLayer(0.6)
    assert flow.step(0.7)
    for _ in range(2):
        flow.step(0.1)
        assert flow.holding
    flow.step(0.1)
    assert not flow.holding


def test_a_flow_threshold_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="flow threshold"):
        FlowLayer(0.0)
