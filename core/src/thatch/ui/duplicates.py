"""The duplicates page: near-duplicate pairs side by side, each marked "same" or "different"."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlencode

import attrs
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from thatch.memory.duplicates import pair_key
from thatch.ui.context import ALL_STORES, UiContext, back_to
from thatch.ui.guard import change_form

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.plugin.records import DuplicatePair
    from thatch.plugin.storage import Verdict


@attrs.frozen
class Pair:
    """A pair as the page shows it: the memories, and the verdict if a person gave one."""

    pair: DuplicatePair
    #: Only "same" shows up here: a pair judged "different" is no longer listed.
    verdict: Verdict | None


def pairs_of(th: Thatch, store: str) -> list[Pair]:
    """What ``thatch duplicates`` lists for ``store``, closest first, with verdicts."""
    pairs = th.duplicates(store)
    verdicts = th.review_verdicts(store)
    return [Pair(pair, verdicts.get(pair_key(pair))) for pair in pairs]


def page_url(store: str) -> str:
    return "/duplicates?" + urlencode({"store": store})


async def duplicates(request: Request) -> Response:
    """``GET /duplicates?store=S``."""
    ui: UiContext = request.app.state.ui
    store = request.query_params.get("store", ALL_STORES) or ALL_STORES
    pairs = await ui.call(pairs_of, ui.th, store)
    stores = await ui.call(ui.th.known_stores)
    return ui.page(
        "duplicates.html",
        store=store,
        stores=[ALL_STORES, *stores],
        pairs=pairs,
        back=page_url(store),
    )


async def review(request: Request) -> Response:
    """``POST /duplicates/review``: ``first``, ``second`` (labels), ``store``, ``verdict``.

    The verdict is recorded as ``thatch duplicates --mark-reviewed`` records
    it: "different" drops the pair from the list, "same" keeps it there as a
    confirmed duplicate until one of the two is forgotten.
    """
    ui: UiContext = request.app.state.ui
    form = await change_form(request, ui.keys)
    store = await ui.call(
        ui.th.mark_reviewed,
        form.get("first", ""),
        form.get("second", ""),
        form.get("store") or None,
        # Not checked here: the API's error names the allowed verdicts.
        form.get("verdict", ""),
    )
    return RedirectResponse(back_to(form, page_url(store)), status_code=303)
