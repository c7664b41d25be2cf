"""The plugins and doctor page: what is loaded, and ``thatch doctor``'s findings on demand."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from thatch.ui.context import UiContext
from thatch.ui.guard import change_form

if TYPE_CHECKING:
    from thatch.ui.doctor_run import Finding


async def plugins(request: Request) -> Response:
    """``GET /plugins``: the loaded plugins and their hooks, and the button that runs doctor."""
    ui: UiContext = request.app.state.ui
    return await _page(ui, None)


async def doctor(request: Request) -> Response:
    """``POST /doctor``: run every check and show them under the plugins.

    Behind a button, not on every visit: doctor loads the model, opens the
    storage again, asks the daemon and starts each command a harness is set
    up to run, which takes seconds. It is a POST with the CSRF token because
    it starts programs.
    """
    ui: UiContext = request.app.state.ui
    await change_form(request, ui.keys)
    # Outside the API's lock: doctor opens its own handles, and the other
    # pages need not wait for it.
    checks = await run_in_threadpool(ui.doctor)
    return await _page(ui, checks)


async def _page(ui: UiContext, checks: list[Finding] | None) -> Response:
    infos = await ui.call(ui.th.describe_plugins)
    return ui.page(
        "plugins.html",
        infos=infos,
        checks=checks,
        failing=sum(check.status == "fail" for check in checks or ()),
    )
