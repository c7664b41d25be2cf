"""The prediction log in a JSONL file: the storage contract, and the file's own rules.

Locking against concurrent appenders (threads and processes), interrupted
appends, bad lines that change nothing, atomic scoring and the file's mode.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from thatch.plugin import InvalidInputError, LoggedPrediction
from thatch.predlog.jsonl import JsonlPredictionLog, row_line
from thatch.testing.contracts import PredictionStorageContract, at, logged


class TestJsonlPredictionLog(PredictionStorageContract):
    def open_backend(self, directory: Path) -> Any:
        return JsonlPredictionLog(directory / "predictions.jsonl")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "predictions.jsonl"


@pytest.fixture
def log(path: Path) -> JsonlPredictionLog:
    return JsonlPredictionLog(path)


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- the file --------------------------------------------------------------------


def test_each_row_is_one_line_of_its_json_form(log: JsonlPredictionLog, path: Path) -> None:
    rows = [logged(1, toward="ünïcode «kept» as is"), logged(2, fields={"levers": ["a"]})]
    log.record_predictions(rows)
    assert lines_of(path) == [row.to_json() for row in rows]
    assert "ünïcode «kept»" in path.read_text(encoding="utf-8")
    assert path.read_bytes().endswith(b"\n")


def test_a_new_file_is_private(log: JsonlPredictionLog, path: Path) -> None:
    log.record_predictions([logged()])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_missing_file_has_no_entries_and_is_not_created(
    log: JsonlPredictionLog, path: Path
) -> None:
    assert log.list_prediction_entries() == []
    assert log.get_prediction_entry("s1:1") is None
    assert not log.score_prediction("s1:1", "accept", at(1))
    assert log.integrity_problems() == []
    assert not path.exists()


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "log.jsonl"
    with pytest.raises(InvalidInputError, match=re.escape(f"no folder {target.parent} ")):
        JsonlPredictionLog(target).record_predictions([logged()])


def test_blank_lines_are_skipped(log: JsonlPredictionLog, path: Path) -> None:
    path.write_bytes(b"\n" + row_line(logged(1)) + b"   \n" + row_line(logged(2)))
    assert log.list_prediction_entries() == [logged(1), logged(2)]
    assert log.integrity_problems() == []


# -- interrupted appends -----------------------------------------------------------


def test_an_interrupted_append_is_ignored_then_cut_off(log: JsonlPredictionLog, path: Path) -> None:
    log.record_predictions([logged(1)])
    whole = path.read_bytes()
    half = row_line(logged(2))[:40]
    with path.open("ab") as out:  # what a writer killed mid-write leaves
        out.write(half)
    assert log.list_prediction_entries() == [logged(1)]
    assert log.get_prediction_entry(logged(2).id) is None
    assert log.integrity_problems() == []

    assert log.record_predictions([logged(2), logged(1)]) == [True, False]
    assert path.read_bytes() == whole + row_line(logged(2))


def test_a_file_holding_only_an_interrupted_append_is_empty(
    log: JsonlPredictionLog, path: Path
) -> None:
    path.write_bytes(row_line(logged(1))[:-1])  # all but the newline
    assert log.list_prediction_entries() == []
    assert log.record_predictions([logged(1)]) == [True]
    assert path.read_bytes() == row_line(logged(1))


def test_a_recording_that_adds_nothing_leaves_the_file_alone(
    log: JsonlPredictionLog, path: Path
) -> None:
    log.record_predictions([logged(1)])
    with path.open("ab") as out:
        out.write(b'{"id": "s1:2')
    before = path.read_bytes()
    assert log.record_predictions([logged(1)]) == [False]
    assert path.read_bytes() == before


# -- bad lines ---------------------------------------------------------------------

BAD_LINES = {
    b"not json at all": "is not JSON",
    b"[1, 2]": "is not a JSON object",
    b"\xff\xfe": "is not UTF-8",
    b'{"id": "s1:9"}': "missing 'session_id'",
}


@pytest.mark.parametrize(("line", "problem"), list(BAD_LINES.items()))
def test_a_line_that_is_not_a_row_is_named_and_changes_nothing(
    log: JsonlPredictionLog, path: Path, line: bytes, problem: str
) -> None:
    path.write_bytes(row_line(logged(1)) + line + b"\n" + row_line(logged(2)))
    before = path.read_bytes()
    where = f"{path}:2"
    for attempt in (
        log.list_prediction_entries,
        lambda: log.get_prediction_entry("s1:1"),
        lambda: log.record_predictions([logged(3)]),
        lambda: log.score_prediction("s1:1", "accept", at(5)),
    ):
        with pytest.raises(InvalidInputError) as caught:
            attempt()
        assert str(caught.value).startswith(where)
        assert problem in str(caught.value)
    assert path.read_bytes() == before
    [found] = log.integrity_problems()
    assert found.startswith(where)


def test_integrity_names_every_bad_line_and_every_duplicate(
    log: JsonlPredictionLog, path: Path
) -> None:
    # A hand-merged file: a row twice, and two lines that are not rows.
    path.write_bytes(row_line(logged(1)) + b"oops\n" + row_line(logged(1, minutes=3)) + b"{}\n")
    problems = log.integrity_problems()
    assert [problem.split(" ")[0] for problem in problems] == [
        f"{path}:2",
        f"{path}:3:",
        f"{path}:4:",
    ]
    assert "already on line 1" in problems[1]


# -- scoring -----------------------------------------------------------------------


def test_scoring_replaces_the_file_keeping_its_mode(log: JsonlPredictionLog, path: Path) -> None:
    log.record_predictions([logged(1), logged(2)])
    path.chmod(0o640)
    before = path.stat().st_ino
    assert log.score_prediction("s1:2:1", "correct", at(9))
    assert path.stat().st_ino != before
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    scored = {**logged(2).to_json(), "actual": "correct", "scored_at": at(9).isoformat()}
    assert lines_of(path) == [logged(1).to_json(), scored]
    assert sorted(item.name for item in path.parent.iterdir()) == [path.name]


def test_scoring_a_symlinked_log_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    log = JsonlPredictionLog(link)
    log.record_predictions([logged()])
    assert log.score_prediction("s1:1", "accept", at(1))
    assert link.is_symlink()
    assert JsonlPredictionLog(real).list_prediction_entries()[0].actual == "accept"


def test_appends_during_scoring_reach_the_new_file(log: JsonlPredictionLog, path: Path) -> None:
    # A writer that waited on the file scoring replaced must lock the new one.
    log.record_predictions([logged(1)])
    rows = [logged(number) for number in range(2, 42)]
    errors: list[BaseException] = []

    def append() -> None:
        try:
            for row in rows:
                JsonlPredictionLog(path).record_predictions([row])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def score() -> None:
        try:
            for minute in range(40):
                JsonlPredictionLog(path).score_prediction("s1:1", "accept", at(minute))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=append), threading.Thread(target=score)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    entries = log.list_prediction_entries()
    assert [entry.id for entry in entries] == [logged(1).id] + [row.id for row in rows]
    assert entries[0].scored_at == at(39)


# -- concurrent appenders ----------------------------------------------------------


def _append_from_another_process(path: str, worker: int, start: Any, out: str) -> None:
    """Runs in a spawned process: record the same rows as the other worker, in batches."""
    rows = [logged(number, minutes=number % 7) for number in range(1, 61)]
    order = rows if worker == 0 else rows[::-1]
    log = JsonlPredictionLog(Path(path))
    start.wait()
    flags = [
        flag
        for batch in range(0, len(order), 3)
        for flag in log.record_predictions(order[batch : batch + 3])
    ]
    Path(out).write_text(json.dumps(flags if worker == 0 else flags[::-1]))


def test_two_processes_appending_the_same_rows_leave_each_once(tmp_path: Path) -> None:
    # Two Stop hooks of one session at once, on a file neither has created yet.
    path = tmp_path / "predictions.jsonl"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    outs = [tmp_path / f"flags-{worker}.json" for worker in (0, 1)]
    processes = [
        context.Process(
            target=_append_from_another_process, args=(str(path), worker, start, str(outs[worker]))
        )
        for worker in (0, 1)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [process.exitcode for process in processes] == [0, 0]

    first, second = (json.loads(out.read_text()) for out in outs)
    assert [int(a) + int(b) for a, b in zip(first, second, strict=True)] == [1] * 60
    ids = [line["id"] for line in lines_of(path)]
    assert sorted(ids) == sorted(logged(number).id for number in range(1, 61))
    assert JsonlPredictionLog(path).integrity_problems() == []
    assert os.stat(path).st_size == len(
        b"".join(row_line(row) for row in JsonlPredictionLog(path).list_prediction_entries())
    )


def test_an_exported_log_reads_back_equal(log: JsonlPredictionLog, tmp_path: Path) -> None:
    # What `thatch predlog export` writes, another storage reads: interchangeable.
    rows = [logged(1, actual="accept", scored_at=at(3)), logged(2, "s2", minutes=1)]
    log.record_predictions(rows)
    copy = JsonlPredictionLog(tmp_path / "copy.jsonl")
    assert copy.record_predictions(log.list_prediction_entries()) == [True, True]
    assert copy.list_prediction_entries() == rows
    assert (tmp_path / "copy.jsonl").read_bytes() == (tmp_path / "predictions.jsonl").read_bytes()
    assert [LoggedPrediction.from_json(line, "x:1") for line in lines_of(log.path)] == rows
