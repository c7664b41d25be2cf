"""The sessions pages: live sessions, their queues, what their agents were told, plugins' panels.

Read from the daemon's session file (``<state dir>/sessions.db``, always
local) by this process: the page works whether or not a daemon runs, and
asks nothing of it. A session's page updates itself over server-sent
events: :func:`session_events` looks every :attr:`Live.poll_seconds` and
sends the changed part of the page, rendered and escaped as the page is.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from thatch.plugin.errors import InvalidInputError, NotFoundError
from thatch.ui.chart import Chart, chart_of
from thatch.ui.context import UiContext

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.plugin.panels import SessionPanel
    from thatch.sessions import Interaction, SessionState, SessionStore
    from thatch.sessions.records import Delivered

#: Queued interactions a session's page lists (the newest).
SHOWN_QUEUE = 50
#: Delivered nudges a session's page lists (the newest).
SHOWN_DELIVERED = 100
#: Longest piece of a queued tool call's input or output shown.
PREVIEW_CHARS = 400


@attrs.define
class Live:
    """The session file, opened on first use, and how often the live view looks."""

    path: Path
    poll_seconds: float = 1.0
    #: A stream ends after this long and the browser opens a new one, so a
    #: tab left open never pins a connection for days.
    stream_seconds: float = 300.0
    _store: SessionStore | None = None
    # Pages and streams ask from the thread pool at once: the file is opened once.
    _opening: threading.Lock = attrs.field(factory=threading.Lock)

    def store(self) -> SessionStore | None:
        """The session store, or None while no daemon has made the file yet."""
        with self._opening:
            if self._store is None:
                if not self.path.exists():
                    return None
                from thatch.sessions import SessionStore

                self._store = SessionStore(self.path)
            return self._store

    def close(self) -> None:
        with self._opening:
            if self._store is not None:
                self._store.close()
                self._store = None


@attrs.frozen
class PanelView:
    panel: SessionPanel
    chart: Chart | None


@attrs.frozen
class SessionView:
    """Everything one session's page shows."""

    state: SessionState
    queue: list[Interaction]
    delivered: list[Delivered]
    panels: list[PanelView]

    @property
    def stamp(self) -> tuple[object, ...]:
        """Changes whenever what the page shows changes."""
        newest = self.delivered[0].at if self.delivered else 0.0
        return (
            self.state.last_seen,
            self.state.pending,
            self.state.nudge_level,
            newest,
            len(self.delivered),
            tuple(view.panel.updated_at for view in self.panels),
        )


def live_of(request: Request) -> Live:
    live: Live = request.app.state.live
    return live


def list_sessions(live: Live) -> list[SessionState]:
    store = live.store()
    return [] if store is None else store.sessions()


def view_of(th: Thatch, live: Live, session_id: str) -> SessionView:
    """The session's page, or NotFoundError naming where sessions come from."""
    store = live.store()
    state = store.state(session_id) if store is not None else None
    if store is None or state is None:
        raise NotFoundError(
            f"no session {session_id!r} in {live.path}; sessions appear once a harness "
            "set up with 'thatch setup' sends the daemon an event"
        )
    queue = store.pending(session_id)[-SHOWN_QUEUE:]
    queue.reverse()
    panels = [
        PanelView(panel, chart_of(panel))
        for panel in th.plugins.session_panels(session_id, th.config)
    ]
    return SessionView(state, queue, store.delivered(session_id, SHOWN_DELIVERED), panels)


def preview(text: str) -> str:
    """``text`` cut to :data:`PREVIEW_CHARS` (the page shows it escaped)."""
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + " …"


def ago(moment: float, now: float | None = None) -> str:
    """``moment`` (epoch seconds) as "12 s ago", "5 min ago", "3 h ago", "2 d ago"."""
    seconds = max((time.time() if now is None else now) - moment, 0.0)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size:.0f} {unit} ago"
    return f"{seconds:.0f} s ago"


def _session_id(request: Request) -> str:
    session_id = request.query_params.get("id", "").strip()
    if not session_id:
        raise InvalidInputError("no session given: open a session from /sessions (?id=SESSION)")
    return session_id


async def sessions(request: Request) -> Response:
    """``GET /sessions``: every session the daemon knows, the most recently seen first."""
    ui: UiContext = request.app.state.ui
    listed = await run_in_threadpool(list_sessions, live_of(request))
    return ui.page("sessions.html", sessions=listed, ago=ago)


async def session(request: Request) -> Response:
    """``GET /session?id=S``: one session, updating itself while it is open."""
    ui: UiContext = request.app.state.ui
    session_id = _session_id(request)
    view = await run_in_threadpool(view_of, ui.th, live_of(request), session_id)
    return ui.page("session.html", view=view, ago=ago, preview=preview)


async def session_events(request: Request) -> Response:
    """``GET /session/events?id=S``: server-sent events, one ``update`` each time the page changes.

    Each event's data is the live part of the page (``session_live.html``),
    rendered with autoescape like the page itself.
    """
    ui: UiContext = request.app.state.ui
    live = live_of(request)
    session_id = _session_id(request)
    template = ui.env.get_template("session_live.html")

    async def stream() -> AsyncIterator[str]:
        # The browser waits this long before it opens the next stream.
        yield "retry: 1000\n\n"
        shown: tuple[object, ...] | None = None
        ends = time.monotonic() + live.stream_seconds
        while time.monotonic() < ends and not await request.is_disconnected():
            try:
                view = await run_in_threadpool(view_of, ui.th, live, session_id)
            except NotFoundError:
                yield "event: gone\ndata: \n\n"
                return
            if view.stamp != shown:
                shown = view.stamp
                html = template.render(view=view, ago=ago, preview=preview)
                yield "event: update\n" + "".join(f"data: {line}\n" for line in html.splitlines())
                yield "\n"
            await asyncio.sleep(live.poll_seconds)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)
