"""A Stop whose prediction log fails to be written is kept, and logged once the storage works."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import thatch_claude.plugin
from claude_transcripts import messages_of, write_transcript
from daemon_hooks import RuntimeFactory
from predlog_scenarios import SCENARIOS
from recorded import recorded
from thatch import deferred
from thatch.plugin.errors import StorageError
from thatch.runtime import Runtime
from thatch.testing import send_hook

SESSION = "kept-stop-session"
SCENARIO = SCENARIOS[0]


@pytest.fixture
def app(runtimes: RuntimeFactory, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    monkeypatch.setattr(deferred, "BACKOFF_SECONDS", (0.0,))
    return runtimes(thatch_claude.plugin)


def stop(app: Runtime, workdir: Path) -> None:
    path = write_transcript(
        workdir / f"{SESSION}.jsonl", messages_of(SCENARIO.candidates), session=SESSION
    )
    body = recorded(
        "claude", "stop", session_id=SESSION, cwd=str(workdir), transcript_path=str(path)
    )
    assert send_hook(app, "claude", "Stop", body) == ""


def logged(app: Runtime) -> list[str]:
    return [row.id for row in app.thatch.prediction_storage.list_prediction_entries(SESSION)]


def failing(app: Runtime, monkeypatch: pytest.MonkeyPatch, times: int) -> None:
    storage = app.thatch.prediction_storage
    real = storage.record_predictions
    left = [times]

    def flaky(rows: Any) -> Any:
        if left[0]:
            left[0] -= 1
            raise StorageError("could not record predictions on PostgreSQL: the server is away")
        return real(rows)

    monkeypatch.setattr(storage, "record_predictions", flaky)


def test_a_stop_that_fails_is_logged_by_the_loop_once_the_storage_works(
    app: Runtime, workdir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    failing(app, monkeypatch, 2)
    with caplog.at_level(logging.WARNING, logger="thatch"):
        stop(app, workdir)
    assert logged(app) == []
    assert f"the prediction log of {workdir / SESSION}.jsonl not recorded yet" in caplog.text
    app.retry_writes()  # fails once more
    assert logged(app) == []
    app.retry_writes()
    assert logged(app) == SCENARIO.ids_for(SESSION)
    assert app.sessions.pending_writes() == []


def test_stops_of_a_session_that_wait_become_one_write(
    app: Runtime, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing(app, monkeypatch, 3)
    for _ in range(3):
        stop(app, workdir)
    assert [w.kind for w in app.sessions.pending_writes()] == ["predlog"]
    app.retry_writes()
    assert logged(app) == SCENARIO.ids_for(SESSION)
