"""The calibration page: how well the confidences shown matched what the user then decided.

The same report as ``thatch predictions calibration`` (the Brier score and
the reliability table, :mod:`thatch.decisions.calibration`), with its
reliability diagram: each confidence bin's mean confidence against the mean
outcome of its showings, a dot as large as the bin holds showings, beside
the diagonal a calibrated model sits on.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import attrs
from starlette.requests import Request
from starlette.responses import Response

from thatch.ui.context import ALL_STORES, UiContext

if TYPE_CHECKING:
    from thatch.decisions.calibration import CalibrationReport

#: The diagram's side, and its margin for the axes' labels (pixels).
SIDE = 320
MARGIN = 36
#: The largest dot's radius: the bin with the most showings.
MAX_RADIUS = 14.0


@attrs.frozen
class Dot:
    x: float
    y: float
    radius: float
    label: str


@attrs.frozen
class Diagram:
    side: int
    margin: int
    dots: tuple[Dot, ...]
    #: The bin edges' positions along either axis (0, 0.1 … 1).
    ticks: tuple[tuple[float, str], ...]


def diagram_of(report: CalibrationReport) -> Diagram:
    """Pixel positions of the reliability diagram (y grows downwards, as in SVG)."""
    counts = [b.count for b in report.bins if b.count]
    largest = max(counts, default=1)
    dots = tuple(
        Dot(
            x=_x(b.mean_confidence),
            y=_y(b.mean_outcome),
            radius=round(max(2.5, MAX_RADIUS * math.sqrt(b.count / largest)), 1),
            label=(
                f"{b.low:.1f}-{b.high:.1f}: {b.count} showings, confidence "
                f"{b.mean_confidence:.2f}, outcome {b.mean_outcome:.2f}"
            ),
        )
        for b in report.bins
        if b.count and b.mean_confidence is not None and b.mean_outcome is not None
    )
    ticks = tuple((_x(i / 5), f"{i / 5:.1f}") for i in range(6))
    return Diagram(SIDE, MARGIN, dots, ticks)


def _x(value: float) -> float:
    return round(MARGIN + value * SIDE, 1)


def _y(value: float) -> float:
    return round(MARGIN + (1 - value) * SIDE, 1)


async def calibration(request: Request) -> Response:
    """``GET /calibration?store=S``."""
    ui: UiContext = request.app.state.ui
    store = request.query_params.get("store", ALL_STORES) or ALL_STORES
    report = await ui.call(ui.th.decisions.calibration, store)
    stores = await ui.call(ui.th.known_stores)
    return ui.page(
        "calibration.html",
        store=store,
        stores=[ALL_STORES, *stores],
        report=report,
        diagram=diagram_of(report),
    )
