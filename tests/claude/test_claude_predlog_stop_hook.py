"""The Stop hook records the session's Predictions: ``thatch hook claude Stop`` in the daemon.

A real runtime (temporary THATCH_HOME, SQLite storage) with the Claude plugin
and core's ``prediction-log`` builtin; the transcripts are Claude Code's shape.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest
import thatch_claude.plugin
from claude_transcripts import messages_of, write_transcript
from daemon_hooks import RuntimeFactory
from predlog_scenarios import SCENARIOS, Scenario
from recorded import recorded
from thatch.daemon.hook_events import handle_hook
from thatch.runtime import Runtime
from thatch.testing import hook_request, send_hook

SESSION = "stop-hook-session"
#: Two subagent Predictions, each shown again by the session: four rows.
COPIED = next(scenario for scenario in SCENARIOS if scenario.name.startswith("11-"))


@pytest.fixture
def app(runtimes: RuntimeFactory) -> Runtime:
    return runtimes(thatch_claude.plugin)


def transcript(folder: Path, scenario: Scenario = COPIED) -> Path:
    return write_transcript(
        folder / f"{SESSION}.jsonl", messages_of(scenario.candidates), session=SESSION
    )


def stop(workdir: Path, path: Path | None, name: str = "stop") -> dict[str, Any]:
    """The recorded ``name`` payload of the session, naming ``path`` (None: no transcript)."""
    where = str(path) if path else None
    return recorded("claude", name, session_id=SESSION, cwd=str(workdir), transcript_path=where)


def logged(app: Runtime) -> list[str]:
    return [row.id for row in app.thatch.prediction_storage.list_prediction_entries(SESSION)]


def test_a_stop_records_the_session_s_predictions(app: Runtime, workdir: Path) -> None:
    assert send_hook(app, "claude", "Stop", stop(workdir, transcript(workdir))) == ""
    assert logged(app) == COPIED.ids_for(SESSION)
    rows = app.thatch.prediction_storage.list_prediction_entries(SESSION)
    assert [row.confidence for row in rows] == list(COPIED.confidences)
    assert {row.source for row in rows} == {"task-notification"}


def test_the_work_waits_until_the_hook_is_answered(app: Runtime, workdir: Path) -> None:
    request = hook_request(stop(workdir, transcript(workdir)), harness="claude", event="Stop")
    assert handle_hook(app, request) == ""
    assert logged(app) == []  # the answer went out first
    app.run_deferred()
    assert logged(app) == COPIED.ids_for(SESSION)


def test_every_stop_reads_the_whole_transcript_and_adds_only_new_rows(
    app: Runtime, workdir: Path
) -> None:
    path = transcript(workdir, SCENARIOS[0])
    send_hook(app, "claude", "Stop", stop(workdir, path))
    first = app.thatch.prediction_storage.list_prediction_entries(SESSION)
    # The session goes on: the same transcript, and more.
    write_transcript(path, messages_of(SCENARIOS[0].candidates + COPIED.candidates), SESSION)
    send_hook(app, "claude", "SubagentStop", stop(workdir, path, "subagent_stop"))
    send_hook(app, "claude", "Stop", stop(workdir, path))
    rows = app.thatch.prediction_storage.list_prediction_entries(SESSION)
    assert [row.id for row in rows] == [f"{SESSION}:{n}" for n in ("1", "2:1", "3:1", "4:1", "5:1")]
    assert rows[0] == first[0]  # kept as first stored


def test_two_stop_hooks_at_once_write_each_row_once(app: Runtime, workdir: Path) -> None:
    path = transcript(workdir)
    start = threading.Barrier(2)

    def one_stop() -> None:
        start.wait()
        send_hook(app, "claude", "Stop", stop(workdir, path))

    threads = [threading.Thread(target=one_stop) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert logged(app) == COPIED.ids_for(SESSION)


def test_a_bad_transcript_is_logged_and_the_hook_still_answers(
    app: Runtime, workdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = transcript(workdir)
    path.write_text(path.read_text() + "{not json\n")
    with caplog.at_level(logging.WARNING, logger="thatch"):
        assert send_hook(app, "claude", "Stop", stop(workdir, path)) == ""
    assert logged(app) == []  # nothing of a transcript that does not read
    assert f"{path}:5: not JSON" in caplog.text


def test_a_missing_transcript_is_logged(
    app: Runtime, workdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="thatch"):
        assert send_hook(app, "claude", "Stop", stop(workdir, workdir / "gone.jsonl")) == ""
    assert "gone.jsonl: missing file" in caplog.text


def test_other_events_and_stops_without_a_transcript_record_nothing(
    app: Runtime, workdir: Path
) -> None:
    path = transcript(workdir)
    send_hook(app, "claude", "SessionEnd", stop(workdir, path, "session_end"))
    send_hook(app, "claude", "Stop", stop(workdir, None))
    assert logged(app) == []


def test_a_stop_cursor_runs_through_claude_s_hooks_reads_no_transcript(
    app: Runtime, workdir: Path
) -> None:
    # Cursor's payload, naming a file that Claude's reader could read: never read.
    path = transcript(workdir)
    body = recorded("claude/cursor", "stop", conversation_id=SESSION, transcript_path=str(path))
    send_hook(app, "claude", "Stop", body)
    assert logged(app) == []
