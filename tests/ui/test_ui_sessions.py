"""The sessions pages: the daemon's session file read by the page, plugins' panels, live updates."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import thatch_sqlite.plugin
from starlette.testclient import TestClient
from thatch.api import Thatch
from thatch.plugin import Config, PanelMark, PanelPoint, SessionPanel, hookimpl
from thatch.plugin.events import Event
from thatch.plugin.nudge import Nudge
from thatch.sessions import NewInteraction, SessionStore
from thatch.testing import plugins_with
from thatch.ui.app import build_app
from thatch.ui.guard import Secrets
from ui.conftest import TEST_HOST

XSS = "<script>alert(1)</script>"


class PanelPlugin:
    """A plugin that shows one panel for session s1, and raises for session boom."""

    def __init__(self) -> None:
        self.updated_at = 100.0

    @hookimpl
    def thatch_session_panels(self, session_id: str, config: Config) -> list[SessionPanel] | None:
        if session_id == "boom":
            raise RuntimeError("a broken plugin")
        if session_id != "s1":
            return None
        return [
            SessionPanel(
                title=f"Mood {XSS}",
                series=(
                    PanelPoint(at=10.0, values={"frustration": 0.1, XSS: 0.5}),
                    PanelPoint(at=20.0, values={"frustration": 0.9, XSS: 0.4}),
                ),
                thresholds={"frustration": 0.6},
                marks=(PanelMark(at=20.0, kind="firing", label="frustration"),),
                facts=(("pattern", "stuck"),),
                updated_at=self.updated_at,
            )
        ]


@pytest.fixture
def panel_plugin() -> PanelPlugin:
    return PanelPlugin()


@pytest.fixture
def sessions_th(home: Path, panel_plugin: PanelPlugin) -> Iterator[Thatch]:
    plugins = plugins_with(thatch_sqlite.plugin, panel_plugin)
    with Thatch(Config.load(home, environ={}), plugins, home) as opened:
        yield opened


@pytest.fixture
def store(sessions_th: Thatch) -> Iterator[SessionStore]:
    opened = SessionStore(sessions_th.config.paths.state_dir / "sessions.db")
    yield opened
    opened.close()


def tool_event(session: str, number: int) -> Event:
    return Event(
        kind="tool_use",
        harness="claude",
        session_id=session,
        cwd="/repo",
        event_id=f"ev-{session}-{number}",
        hook_event="PostToolUse",
    )


def client_for(th: Thatch, keys: Secrets, **live: float) -> Iterator[TestClient]:
    app = build_app(th, keys, [TEST_HOST])
    for name, value in live.items():
        setattr(app.state.live, name, value)
    with TestClient(app, follow_redirects=False) as client:
        assert client.get(f"/?token={keys.access}").status_code == 303
        yield client
    app.state.live.close()


@pytest.fixture
def client(sessions_th: Thatch) -> Iterator[TestClient]:
    yield from client_for(sessions_th, Secrets())


def test_no_session_file_yet_says_where_sessions_come_from(client: TestClient) -> None:
    page = client.get("/sessions")
    assert page.status_code == 200
    assert "No sessions yet" in page.text
    assert "thatch setup" in page.text


def test_the_list_shows_each_session_and_its_queue(client: TestClient, store: SessionStore) -> None:
    store.record(tool_event("s1", 1), [NewInteraction("Bash", "ls", "a b c")])
    store.record(tool_event("s2", 1), [])
    page = client.get("/sessions").text
    assert 'href="/session?id=s1"' in page
    assert 'href="/session?id=s2"' in page
    assert "claude" in page


def test_a_session_shows_its_queue_what_the_agent_was_told_and_panels_escaped(
    client: TestClient, store: SessionStore
) -> None:
    store.record(tool_event("s1", 1), [NewInteraction("Bash", f"echo {XSS}", "printed")])
    store.note_delivered("s1", "UserPromptSubmit", [Nudge(source="recall", text=f"[thatch] {XSS}")])
    page = client.get("/session", params={"id": "s1"}).text
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "UserPromptSubmit" in page
    assert "recall" in page
    assert "Bash" in page
    assert "printed" in page
    # The panel: one line per value, the threshold dashed, the firing marked.
    assert page.count("<polyline") == 2
    assert "stroke-dasharray" in page
    assert "firing: frustration" in page
    assert "pattern" in page
    assert "stuck" in page
    assert 'data-events="/session/events?id=s1"' in page


def test_an_unknown_session_is_404_naming_the_fix(client: TestClient, store: SessionStore) -> None:
    store.record(tool_event("s1", 1), [])
    answer = client.get("/session", params={"id": "nope"})
    assert answer.status_code == 404
    assert "no session" in answer.text
    assert "thatch setup" in answer.text
    assert client.get("/session").status_code == 400


def test_a_failing_panel_plugin_does_not_break_the_page(
    client: TestClient, store: SessionStore
) -> None:
    store.record(tool_event("boom", 1), [NewInteraction("Read", "a.py", "text")])
    answer = client.get("/session", params={"id": "boom"})
    assert answer.status_code == 200
    assert "Read" in answer.text
    assert '<svg class="chart"' not in answer.text


def events_of(body: str) -> list[tuple[str, str]]:
    """``(event, data)`` of every server-sent event in ``body``."""
    found = []
    for block in body.split("\n\n"):
        lines = block.splitlines()
        names = [line[len("event: ") :] for line in lines if line.startswith("event: ")]
        data = "\n".join(line[len("data: ") :] for line in lines if line.startswith("data: "))
        if names:
            found.append((names[0], data))
    return found


def test_the_live_stream_sends_the_page_again_when_the_session_changes(
    sessions_th: Thatch, store: SessionStore
) -> None:
    store.record(tool_event("s1", 1), [NewInteraction("Bash", "first", "one")])

    def change() -> None:
        store.record(tool_event("s1", 2), [NewInteraction("Edit", "second", "two")])

    timer = threading.Timer(0.4, change)
    for client in client_for(sessions_th, Secrets(), poll_seconds=0.05, stream_seconds=1.2):
        timer.start()
        answer = client.get("/session/events", params={"id": "s1"})
    timer.join()
    assert answer.headers["content-type"].startswith("text/event-stream")
    updates = [data for name, data in events_of(answer.text) if name == "update"]
    # Once at once, once after the change; polls that saw no change sent nothing.
    assert len(updates) == 2
    assert "first" in updates[0]
    assert "second" not in updates[0]
    assert "second" in updates[1]
    assert "<script>alert(1)</script>" not in answer.text


def test_the_live_stream_ends_when_the_session_is_gone(
    sessions_th: Thatch, store: SessionStore
) -> None:
    store.record(tool_event("s1", 1), [])
    for client in client_for(sessions_th, Secrets(), poll_seconds=0.05, stream_seconds=5):
        answer = client.get("/session/events", params={"id": "other"})
    assert [name for name, _ in events_of(answer.text)] == ["gone"]


def test_the_stream_needs_the_token_too(sessions_th: Thatch, store: SessionStore) -> None:
    store.record(tool_event("s1", 1), [])
    app = build_app(sessions_th, Secrets(), [TEST_HOST])
    with TestClient(app, follow_redirects=False) as stranger:
        answer = stranger.get("/session/events", params={"id": "s1"})
    assert answer.status_code == 403
    app.state.live.close()
