"""The Starlette application: routes, the guard around them, and error pages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from thatch.plugin.errors import NotFoundError, ThatchError
from thatch.ui import (
    calibration_page,
    decisions,
    duplicates,
    hygiene,
    memories,
    plugins,
    prediction_page,
    sessions,
)
from thatch.ui.context import UiContext
from thatch.ui.guard import Guard, Refused, Secrets

if TYPE_CHECKING:
    from thatch.api import Thatch


def build_app(th: Thatch, keys: Secrets, hosts: Iterable[str]) -> Starlette:
    """The page over ``th``; requests must name one of ``hosts`` and carry ``keys.access``."""
    ui = UiContext(th, keys)

    async def home(request: Request) -> Response:
        return RedirectResponse("/memories", status_code=303)

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)
        return PlainTextResponse(str(exc), exc.status)

    async def failed(request: Request, exc: Exception) -> Response:
        # The API's errors say what to fix; show them as the CLI would print them.
        status = 404 if isinstance(exc, NotFoundError) else 400
        return ui.page("error.html", status=status, message=str(exc))

    app = Starlette(
        routes=[
            Route("/", home),
            Route("/memories", memories.memories),
            Route("/memory", memories.memory),
            Route("/memory/edit", memories.edit, methods=["POST"]),
            Route("/memory/forget", memories.forget, methods=["POST"]),
            Route("/memory/archive", memories.archive, methods=["POST"]),
            Route("/duplicates", duplicates.duplicates),
            Route("/duplicates/review", duplicates.review, methods=["POST"]),
            Route("/hygiene", hygiene.hygiene),
            Route("/decisions", decisions.decisions),
            Route("/prediction", prediction_page.prediction),
            Route("/calibration", calibration_page.calibration),
            Route("/sessions", sessions.sessions),
            Route("/session", sessions.session),
            Route("/session/events", sessions.session_events),
            Route("/plugins", plugins.plugins),
            Route("/doctor", plugins.doctor, methods=["POST"]),
            Mount("/static", StaticFiles(packages=[("thatch.ui", "static")]), name="static"),
        ],
        middleware=[Middleware(Guard, keys=keys, hosts=tuple(hosts))],
        exception_handlers={Refused: refused, ThatchError: failed},
    )
    app.state.ui = ui
    # Sessions are the daemon's, in the state folder, whichever storage backend keeps the rest.
    app.state.live = sessions.Live(th.config.paths.state_dir / "sessions.db")
    return app
