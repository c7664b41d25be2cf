"""One prediction's page: its evidence as a timeline, and how its confidence moved.

The timeline merges the prediction's provenance (every signal the user gave)
with its showings to agents (the fire log). The confidence after each
signal is replayed from the evidence each signal adds
(:mod:`thatch.decisions.confidence`), from the prediction's prior: the
storage keeps only the current counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
from starlette.requests import Request
from starlette.responses import Response

from thatch.decisions.confidence import EVIDENCE, confidence
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.panels import PanelMark, PanelPoint, SessionPanel
from thatch.ui.chart import Chart, chart_of
from thatch.ui.context import UiContext

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.decisions.service import PredictionDetail
    from thatch.plugin.decisions import Fire


@attrs.frozen
class Entry:
    """One moment of the timeline: a signal, or a showing to an agent."""

    at: float
    #: The signal (``create``, ``confirm``, ``disconfirm``, ``soft``) or ``shown``.
    kind: str
    detail: str
    session: str | None
    #: After a signal: the confidence it left; for a showing: the confidence shown.
    confidence: float


@attrs.frozen
class PredictionPage:
    detail: PredictionDetail
    entries: list[Entry]
    chart: Chart | None
    #: The replayed counts differ from the stored ones (e.g. imported with counts).
    replay_differs: bool


def page_of(th: Thatch, prediction_id: int) -> PredictionPage:
    detail = th.decisions.show(prediction_id)
    store = detail.prediction.store
    fires = [f for f in th.decision_storage.fires([store]) if f.prediction_id == prediction_id]
    entries, counts = timeline(detail, fires)
    prediction = detail.prediction
    differs = (
        abs(counts[0] - prediction.confirm_count) > 1e-9
        or abs(counts[1] - prediction.disconfirm_count) > 1e-9
    )
    return PredictionPage(detail, entries, chart_of(confidence_panel(entries)), differs)


def timeline(
    detail: PredictionDetail, fires: list[Fire]
) -> tuple[list[Entry], tuple[float, float]]:
    """The entries oldest first, and the (confirm, disconfirm) counts the signals add up to."""
    prior = detail.prediction.prior
    confirm = disconfirm = 0.0
    entries = []
    for item in sorted(detail.provenance, key=lambda p: (p.created_at, p.id)):
        evidence = EVIDENCE[item.signal]
        confirm += evidence.confirm
        disconfirm += evidence.disconfirm
        entries.append(
            Entry(
                item.created_at.timestamp(),
                item.signal,
                item.detail,
                item.session,
                confidence(confirm, disconfirm, prior),
            )
        )
    entries += [
        Entry(f.fired_at.timestamp(), "shown", f"score {f.score:.3f}", f.session, f.confidence)
        for f in fires
    ]
    entries.sort(key=lambda entry: entry.at)
    return entries, (confirm, disconfirm)


def confidence_panel(entries: list[Entry]) -> SessionPanel:
    """The confidence after each signal as a line, each showing marked on it."""
    signals = [entry for entry in entries if entry.kind != "shown"]
    return SessionPanel(
        title="confidence",
        series=tuple(PanelPoint(e.at, {"confidence": e.confidence}) for e in signals),
        marks=tuple(PanelMark(e.at, e.kind, e.detail) for e in entries if e.kind != "create"),
    )


async def prediction(request: Request) -> Response:
    """``GET /prediction?id=N``."""
    ui: UiContext = request.app.state.ui
    given = request.query_params.get("id", "")
    if not given.isdigit():
        raise InvalidInputError(
            f"prediction id {given!r} is not a number; open one from /decisions (?id=N)"
        )
    page = await ui.call(page_of, ui.th, int(given))
    return ui.page("prediction.html", page=page)
