"""The hygiene page: stale, orphaned and duplicate memories, each with its one-click fix."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlencode

import attrs
from starlette.requests import Request
from starlette.responses import Response

from thatch.memory.duplicates import pair_key
from thatch.memory.hygiene import STALE_DAYS, check_stale_days
from thatch.ui.context import ALL_STORES, UiContext
from thatch.ui.duplicates import Pair

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.plugin.records import HygieneReport


@attrs.frozen
class Report:
    """The API's report, its duplicate pairs with their verdicts."""

    report: HygieneReport
    pairs: list[Pair]


def report_of(th: Thatch, store: str, days: int) -> Report:
    """What ``thatch hygiene --days days`` reports for ``store``."""
    report = th.hygiene(store, stale_days=days)
    verdicts = th.review_verdicts(store)
    pairs = [Pair(pair, verdicts.get(pair_key(pair))) for pair in report.duplicates]
    return Report(report=report, pairs=pairs)


async def hygiene(request: Request) -> Response:
    """``GET /hygiene?store=S&days=N``."""
    ui: UiContext = request.app.state.ui
    store = request.query_params.get("store", ALL_STORES) or ALL_STORES
    days = _days(request.query_params.get("days", ""))
    found = await ui.call(report_of, ui.th, store, days)
    stores = await ui.call(ui.th.known_stores)
    return ui.page(
        "hygiene.html",
        store=store,
        stores=[ALL_STORES, *stores],
        days=days,
        found=found,
        back="/hygiene?" + urlencode({"store": store, "days": days}),
    )


def _days(given: str) -> int:
    """The staleness span a query asks for; none given is the default.

    Anything else that is not a whole number in range (``abc``, ``1.5``,
    ``0``) gets the API's own error, which names the range, as a 400.
    """
    if not given:
        return STALE_DAYS
    try:
        return check_stale_days(int(given))
    except ValueError:
        return check_stale_days(given)
