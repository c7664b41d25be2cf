"""The decision-model page: every prediction with its evidence, and "try a prompt"."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
from starlette.requests import Request
from starlette.responses import Response

from thatch.ui.context import ALL_STORES, UiContext

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.decisions.engine import PredictionHit
    from thatch.decisions.service import PredictionDetail

#: How many predictions "try a prompt" lists at most.
TRY_LIMIT = 10


@attrs.frozen
class Model:
    """What the page shows: the predictions, and the hits of the prompt tried (if any)."""

    details: list[PredictionDetail]
    hits: list[PredictionHit] | None


def tests_of(detail: PredictionDetail) -> int:
    """Signals the prediction received other than the one that created it."""
    return sum(entry.signal != "create" for entry in detail.provenance)


def model_of(th: Thatch, store: str, prompt: str) -> Model:
    details = th.decisions.details(store)
    # record=False: trying a prompt is not a showing to an agent, so it must
    # not count in calibration.
    hits = (
        th.decisions.query(prompt, stores=store, limit=TRY_LIMIT, record=False) if prompt else None
    )
    return Model(details=details, hits=hits)


async def decisions(request: Request) -> Response:
    """``GET /decisions?store=S&prompt=P``."""
    ui: UiContext = request.app.state.ui
    store = request.query_params.get("store", ALL_STORES) or ALL_STORES
    prompt = request.query_params.get("prompt", "").strip()
    model = await ui.call(model_of, ui.th, store, prompt)
    stores = await ui.call(ui.th.known_stores)
    return ui.page(
        "decisions.html",
        store=store,
        stores=[ALL_STORES, *stores],
        prompt=prompt,
        model=model,
        tests_of=tests_of,
    )
