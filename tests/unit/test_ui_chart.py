"""A session panel's time line as chart coordinates."""

from __future__ import annotations

from thatch.plugin import PanelMark, PanelPoint, SessionPanel
from thatch.ui.chart import HEIGHT, WIDTH, chart_of


def test_values_run_bottom_to_top_and_time_left_to_right() -> None:
    panel = SessionPanel(
        title="axes",
        series=(
            PanelPoint(at=100.0, values={"a": 0.0, "b": 1.0}),
            PanelPoint(at=150.0, values={"a": 0.5}),
            PanelPoint(at=200.0, values={"a": 1.0, "b": 0.25}),
        ),
        thresholds={"a": 0.75},
        marks=(PanelMark(150.0, "firing", "a"), PanelMark(50.0, "firing", "before the line")),
    )
    chart = chart_of(panel)
    assert chart is not None
    a, b = chart.lines
    assert a.points == f"0.0,{HEIGHT}.0 {WIDTH / 2},{HEIGHT / 2} {WIDTH}.0,0.0"
    # A value missing at a moment is skipped, not drawn as 0.
    assert b.points == f"0.0,0.0 {WIDTH}.0,{HEIGHT * 0.75}"
    assert a.threshold_y == HEIGHT * 0.25
    assert b.threshold_y is None
    assert (a.last, b.last) == (1.0, 0.25)
    assert a.colour != b.colour
    # Only marks within the time line are drawn.
    assert [(mark.x, mark.label) for mark in chart.marks] == [(WIDTH / 2, "a")]
    assert chart.span == 100.0


def test_out_of_range_values_stay_on_the_chart_and_one_point_is_centred() -> None:
    chart = chart_of(SessionPanel("one", series=(PanelPoint(5.0, {"a": 1.7}),)))
    assert chart is not None
    assert chart.lines[0].points == f"{WIDTH / 2},0.0"


def test_nothing_to_draw_is_no_chart() -> None:
    assert chart_of(SessionPanel("empty", facts=(("state", "idle"),))) is None


def test_the_reliability_diagram_puts_each_bin_at_its_confidence_and_outcome() -> None:
    from thatch.decisions.calibration import reliability
    from thatch.ui.calibration_page import MARGIN, MAX_RADIUS, SIDE, diagram_of

    report = reliability([(0.55, 1.0), (0.55, 0.0), (0.91, 1.0), (0.95, 1.0)], showings=5)
    diagram = diagram_of(report)
    half, high = diagram.dots
    assert (half.x, half.y) == (MARGIN + 0.55 * SIDE, MARGIN + 0.5 * SIDE)
    assert (high.x, high.y) == (MARGIN + 0.93 * SIDE, float(MARGIN))
    # Two showings each: both dots at the largest size.
    assert half.radius == high.radius == MAX_RADIUS
    assert "2 showings" in half.label
    assert diagram_of(reliability([], showings=0)).dots == ()
