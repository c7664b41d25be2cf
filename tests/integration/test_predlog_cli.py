"""``thatch predlog`` through the real console script, on Claude Code transcripts.

The Done-when scenarios of the prediction log (``tests/predlog_scenarios.py``)
are written as transcript files and appended with ``--log`` (a JSONL file in
the test's folder); the stored log is used only under the test's THATCH_HOME.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from claude_transcripts import assistant, messages_of, prompt, transcript_lines, write_transcript
from predlog_scenarios import SCENARIOS, Scenario, message, shape0
from thatch.plugin.prediction_log import LoggedPrediction
from thatch.predlog.jsonl import row_line

from .conftest import Runner, as_json

SESSION = "predlog-cli-session"
#: Items 1–12 of the issue's Done-when list, and the two stated-confidence ones.
BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "predictions.jsonl"


def transcript_of(folder: Path, scenario: Scenario) -> Path:
    path = folder / "transcripts" / f"{scenario.name}.jsonl"
    return write_transcript(path, messages_of(scenario.candidates), session=SESSION)


def listed(thatch: Runner, log: Path, *args: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = as_json(
        thatch("predlog", "list", "--log", str(log), "--json", *args)
    )
    return rows


def row(row_id: str, confidence: int = 75, session: str = SESSION) -> LoggedPrediction:
    when = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
    return LoggedPrediction(
        row_id, session, "accept", "logged before", confidence, "assistant", when
    )


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[scenario.name for scenario in SCENARIOS])
def test_each_scenario_appends_its_rows_once(
    thatch: Runner, tmp_path: Path, log: Path, scenario: Scenario
) -> None:
    path = transcript_of(tmp_path, scenario)
    if scenario.logged_before:
        log.write_bytes(
            b"".join(row_line(row(f"{SESSION}:{tail}")) for tail in scenario.logged_before)
        )
    for _ in range(scenario.runs):
        done = thatch("predlog", "append", str(path), "--log", str(log), check=False)
        assert done.returncode == scenario.exit, done.stderr
        if scenario.error:
            assert scenario.error in done.stderr
        rows = listed(thatch, log) if log.exists() else []
        assert [entry["id"] for entry in rows] == scenario.ids_for(SESSION)
    if scenario.logged_before:
        # Kept as first stored: the transcript's copy added nothing.
        assert [entry["toward"] for entry in rows] == ["logged before"]
    else:
        assert [entry["confidence"] for entry in rows] == list(scenario.confidences)
        assert [entry["source"] for entry in rows] == list(scenario.sources)
    assert {entry["session_id"] for entry in rows} <= {SESSION}


def test_a_second_run_adds_nothing_and_says_so(thatch: Runner, tmp_path: Path, log: Path) -> None:
    scenario = BY_NAME["11-two-subagents-each-copied"]
    path = transcript_of(tmp_path, scenario)
    first = as_json(thatch("predlog", "append", str(path), "--log", str(log), "--json"))
    assert first == {"session_id": SESSION, "rows": 4, "added": scenario.ids_for(SESSION)}
    again = thatch("predlog", "append", str(path), "--log", str(log))
    assert "added 0 of 4 rows" in again.stdout
    assert "logged already" in again.stdout


def test_the_rows_keep_their_text_and_fields(thatch: Runner, tmp_path: Path, log: Path) -> None:
    path = transcript_of(tmp_path, BY_NAME["2-shape2-two-items"])
    thatch("predlog", "append", str(path), "--log", str(log))
    first, second = listed(thatch, log)
    assert (first["toward"], second["toward"]) == ("use sqlite", "write the test first")
    assert first["fields"] == {"triggers": ["review"]}  # never the decision text
    assert first["action"] == "accept"
    assert first["actual"] is None


def test_the_session_is_the_transcript_s_else_its_file_name(
    thatch: Runner, tmp_path: Path, log: Path
) -> None:
    text = message(shape0(60, "keep it"))
    named = write_transcript(tmp_path / "named.jsonl", [assistant(text)], session="from-lines")
    nameless = tmp_path / "file-stem.jsonl"
    lines = transcript_lines([assistant(text)]).splitlines()
    nameless.write_text("".join(_without_session(line) for line in lines))
    chosen = write_transcript(tmp_path / "chosen.jsonl", [assistant(text)])
    thatch("predlog", "append", str(named), "--log", str(log))
    thatch("predlog", "append", str(nameless), "--log", str(log))
    thatch("predlog", "append", str(chosen), "--log", str(log), "--session", "given")
    assert [entry["id"] for entry in listed(thatch, log)] == [
        "from-lines:1",
        "file-stem:1",
        "given:1",
    ]
    assert [entry["id"] for entry in listed(thatch, log, "--session", "given")] == ["given:1"]


def _without_session(line: str) -> str:
    data = json.loads(line)
    del data["sessionId"]
    return json.dumps(data) + "\n"


def test_the_harness_may_be_named(thatch: Runner, tmp_path: Path, log: Path) -> None:
    path = transcript_of(tmp_path, BY_NAME["1-shape1"])
    thatch("predlog", "append", str(path), "--log", str(log), "--harness", "claude")
    assert len(listed(thatch, log)) == 1
    unknown = thatch(
        "predlog", "append", str(path), "--log", str(log), "--harness", "x", check=False
    )
    assert unknown.returncode == 2
    assert "--harness x: no such harness; installed: " in unknown.stderr


# -- bad input changes nothing -----------------------------------------------------------


def test_a_transcript_line_that_is_not_json_is_named_and_the_log_is_unchanged(
    thatch: Runner, tmp_path: Path, log: Path
) -> None:
    log.write_bytes(row_line(row(f"{SESSION}:1")))
    before = log.read_bytes()
    path = tmp_path / "broken.jsonl"
    good = transcript_lines(messages_of(BY_NAME["6-three-prediction-blocks"].candidates))
    path.write_text(transcript_lines([prompt("go")]) + "{this is not json\n" + good)
    done = thatch("predlog", "append", str(path), "--log", str(log), check=False)
    assert done.returncode == 2
    assert f"{path}:2: not JSON" in done.stderr
    assert log.read_bytes() == before


def test_a_missing_transcript_names_the_path(thatch: Runner, tmp_path: Path, log: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    done = thatch("predlog", "append", str(missing), "--log", str(log), check=False)
    assert done.returncode == 2
    assert f"{missing}: missing file" in done.stderr
    assert not log.exists()


def test_a_log_line_that_is_not_a_row_is_named_and_the_log_is_unchanged(
    thatch: Runner, tmp_path: Path, log: Path
) -> None:
    log.write_bytes(row_line(row(f"{SESSION}:1")) + b'{"id": "half a row"}\n')
    before = log.read_bytes()
    path = transcript_of(tmp_path, BY_NAME["9-two-assistant-messages-same-confidence"])
    for command in (("append", str(path)), ("list",), ("report",), ("export",)):
        done = thatch("predlog", *command, "--log", str(log), check=False)
        assert done.returncode == 2, command
        assert f"{log}:2" in done.stderr, command
    assert log.read_bytes() == before


def test_a_prediction_that_does_not_load_names_the_transcript_line(
    thatch: Runner, tmp_path: Path, log: Path
) -> None:
    path = transcript_of(tmp_path, BY_NAME["14-last-block-shape2-bad-confidence"])
    done = thatch("predlog", "append", str(path), "--log", str(log), check=False)
    assert done.returncode == 2
    assert f"{path}:1: " in done.stderr
    assert "'high'" in done.stderr
    assert not log.exists()


def test_an_action_other_than_accept_or_correct_names_the_transcript_line(
    thatch: Runner, tmp_path: Path, log: Path
) -> None:
    body = "```yaml\nprediction:\n  action: maybe\n  toward: t\n  confidence: 60\n```"
    path = write_transcript(
        tmp_path / "maybe.jsonl", [prompt("go"), assistant(body)], session=SESSION
    )
    done = thatch("predlog", "append", str(path), "--log", str(log), check=False)
    assert done.returncode == 2
    assert f"{path}:2: action 'maybe' is not accept or correct" in done.stderr
    assert not log.exists()


# -- score, report, export ---------------------------------------------------------------


def test_score_records_what_the_user_did(thatch: Runner, tmp_path: Path, log: Path) -> None:
    path = transcript_of(tmp_path, BY_NAME["2-shape2-two-items"])
    thatch("predlog", "append", str(path), "--log", str(log))
    done = thatch("predlog", "score", f"{SESSION}:2:1", "--actual", "correct", "--log", str(log))
    assert f"scored {SESSION}:2:1" in done.stdout
    actual = {entry["id"]: entry["actual"] for entry in listed(thatch, log)}
    assert actual == {f"{SESSION}:1": None, f"{SESSION}:2:1": "correct"}
    text = thatch("predlog", "list", "--log", str(log)).stdout
    header = ["ID", "SESSION", "ACTION", "CONF", "SOURCE", "ACTUAL", "TOWARD"]
    assert text.splitlines()[0].split() == header
    assert text.splitlines()[1].split()[:3] == [f"{SESSION}:1", SESSION, "accept"]
    assert "correct" in text


def test_an_id_of_several_sessions_needs_session(thatch: Runner, tmp_path: Path, log: Path) -> None:
    # The same row id in two sessions: scoring it without --session is refused.
    rows = [row("shared:1", session=session) for session in ("s-one", "s-two")]
    log.write_bytes(b"".join(row_line(each) for each in rows))
    before = log.read_bytes()
    score = ["predlog", "score", "shared:1", "--actual", "accept", "--log", str(log)]
    done = thatch(*score, check=False)
    assert done.returncode != 0
    assert "'s-one', 's-two'" in done.stderr
    assert "add --session" in done.stderr
    assert log.read_bytes() == before
    thatch(*score, "--session", "s-two")
    actual = {entry["session_id"]: entry["actual"] for entry in listed(thatch, log)}
    assert actual == {"s-one": None, "s-two": "accept"}


def test_scoring_an_unknown_id_says_how_to_list_them(
    thatch: Runner, tmp_path: Path, log: Path
) -> None:
    path = transcript_of(tmp_path, BY_NAME["1-shape1"])
    thatch("predlog", "append", str(path), "--log", str(log))
    before = log.read_bytes()
    done = thatch("predlog", "score", "s:99", "--actual", "accept", "--log", str(log), check=False)
    assert done.returncode == 1
    assert "no prediction 's:99'" in done.stderr
    assert "thatch predlog list" in done.stderr
    bad = thatch(
        "predlog", "score", f"{SESSION}:1", "--actual", "maybe", "--log", str(log), check=False
    )
    assert bad.returncode == 2
    assert log.read_bytes() == before


def test_the_report_counts_rows_and_shows_their_calibration(
    thatch: Runner, tmp_path: Path, log: Path
) -> None:
    # 80 then 30, both "accept": the user accepts the first and corrects the second.
    path = transcript_of(tmp_path, BY_NAME["4-shape4-two-keys"])
    thatch("predlog", "append", str(path), "--log", str(log))
    empty = as_json(thatch("predlog", "report", "--log", str(log), "--json"))
    assert (empty["rows"], empty["scored"], empty["calibration"]["brier"]) == (2, 0, None)
    thatch("predlog", "score", f"{SESSION}:1", "--actual", "accept", "--log", str(log))
    thatch("predlog", "score", f"{SESSION}:2:1", "--actual", "correct", "--log", str(log))
    report = as_json(thatch("predlog", "report", "--log", str(log), "--json"))
    assert report["by_action"] == {"accept": 2}
    assert report["by_source"] == {"assistant": 2}
    assert report["by_actual"] == {"accept": 1, "correct": 1}
    # (0.8 - 1)² and (0.3 - 0)², averaged.
    assert report["calibration"]["brier"] == pytest.approx((0.04 + 0.09) / 2)
    counts = [b["count"] for b in report["calibration"]["bins"]]
    assert counts == [0, 0, 0, 1, 0, 0, 0, 0, 1, 0]
    text = thatch("predlog", "report", "--log", str(log)).stdout
    assert "rows: 2, scored: 2, Brier score: 0.0650" in text
    assert "0.8-0.9     1     0.800      1.000" in text


def test_export_and_log_files_are_interchangeable(
    thatch: Runner, tmp_path: Path, log: Path
) -> None:
    path = transcript_of(tmp_path, BY_NAME["11-two-subagents-each-copied"])
    thatch("predlog", "append", str(path), "--log", str(log))
    thatch("predlog", "score", f"{SESSION}:3:1", "--actual", "accept", "--log", str(log))
    exported = thatch("predlog", "export", "--log", str(log)).stdout
    assert exported.encode() == log.read_bytes()  # the file's own form
    copy = tmp_path / "copy.jsonl"
    copy.write_text(exported)
    assert listed(thatch, copy) == listed(thatch, log)


def test_the_stored_log_exports_what_a_log_file_holds(
    thatch: Runner, tmp_path: Path, home: Path, log: Path
) -> None:
    # The stored log of the test's own THATCH_HOME, never the user's.
    path = transcript_of(tmp_path, BY_NAME["5-shape4-subagent-then-shape5"])
    done = thatch("predlog", "append", str(path))
    assert "to the prediction log" in done.stdout
    thatch("predlog", "score", f"{SESSION}:1", "--actual", "accept")
    log.write_text(thatch("predlog", "export").stdout)
    stored = as_json(thatch("predlog", "list", "--json"))
    assert listed(thatch, log) == stored
    assert [entry["id"] for entry in stored] == [f"{SESSION}:1", f"{SESSION}:2:1"]
    assert (
        as_json(thatch("predlog", "append", str(path), "--log", str(log), "--json"))["added"] == []
    )


def test_two_appenders_at_once_write_each_row_once(
    thatch: Runner, tmp_path: Path, log: Path
) -> None:
    path = transcript_of(tmp_path, BY_NAME["11-two-subagents-each-copied"])
    added: list[list[str]] = []

    def append() -> None:
        done = thatch("predlog", "append", str(path), "--log", str(log), "--json")
        added.append(as_json(done)["added"])

    threads = [threading.Thread(target=append) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(len(ids) for ids in added) == [0, 4]
    assert [entry["id"] for entry in listed(thatch, log)] == BY_NAME[
        "11-two-subagents-each-copied"
    ].ids_for(SESSION)
