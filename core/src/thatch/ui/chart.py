"""A session panel's time line as SVG coordinates: one polyline per value, marks, thresholds.

Only numbers come out of here; the template writes the markup, so every
name a plugin chose is escaped like any other text on the page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from thatch.plugin.panels import PanelMark, PanelPoint, SessionPanel

WIDTH = 640
HEIGHT = 160
#: Line colours, one per value name in order (colour-blind-safe palette).
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#7f7f7f")


@attrs.frozen
class Line:
    name: str
    colour: str
    #: ``x,y x,y …`` for the polyline's ``points``.
    points: str
    #: The threshold's height, when the plugin gave one.
    threshold_y: float | None
    last: float


@attrs.frozen
class Mark:
    x: float
    kind: str
    label: str


@attrs.frozen
class Chart:
    width: int
    height: int
    lines: tuple[Line, ...]
    marks: tuple[Mark, ...]
    #: Seconds the time line spans.
    span: float


def chart_of(panel: SessionPanel) -> Chart | None:
    """The panel's chart, or None when it has no values to draw."""
    series = panel.series
    if not series:
        return None
    start, end = series[0].at, series[-1].at
    span = max(end - start, 1e-9)
    names = list(dict.fromkeys(name for point in series for name in point.values))

    def x_of(at: float) -> float:
        return round((at - start) / span * WIDTH, 1) if len(series) > 1 else WIDTH / 2.0

    lines = tuple(
        _line(name, PALETTE[index % len(PALETTE)], series, x_of, panel.thresholds.get(name))
        for index, name in enumerate(names)
    )
    return Chart(WIDTH, HEIGHT, lines, _marks(panel.marks, start, end, x_of), end - start)


def _line(
    name: str,
    colour: str,
    series: Sequence[PanelPoint],
    x_of: Callable[[float], float],
    threshold: float | None,
) -> Line:
    points = [(x_of(point.at), _y(point.values[name])) for point in series if name in point.values]
    last = next(point.values[name] for point in reversed(series) if name in point.values)
    return Line(
        name=name,
        colour=colour,
        points=" ".join(f"{x},{y}" for x, y in points),
        threshold_y=None if threshold is None else _y(threshold),
        last=last,
    )


def _marks(
    marks: Sequence[PanelMark], start: float, end: float, x_of: Callable[[float], float]
) -> tuple[Mark, ...]:
    return tuple(Mark(x_of(m.at), m.kind, m.label) for m in marks if start <= m.at <= end)


def _y(value: float) -> float:
    # Values run 0..1; one outside is drawn at the edge rather than off the chart.
    return round((1 - min(max(value, 0.0), 1.0)) * HEIGHT, 1)
