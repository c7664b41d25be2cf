"""``thatch receptor replay`` through the real console script, on events and on trajectories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from receptor_streams import Stream, implementation, trial_and_error
from thatch_receptor.trajectories import read_trajectory, write_events

THATCH = Path(sys.executable).with_name("thatch")
TRAJECTORY = Path(__file__).parents[1] / "data" / "receptor" / "traj_gift_cards.json"


def replay(tmp_path: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "THATCH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    done = subprocess.run(
        [str(THATCH), "receptor", "replay", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def events_file(tmp_path: Path, name: str, events: list) -> Path:
    path = tmp_path / name
    with path.open("w", encoding="utf-8") as stream:
        write_events(events, stream)
    return path


def test_a_trial_and_error_streak_fires_frustration(tmp_path: Path) -> None:
    stuck = list(Stream(session_id="stuck").events(trial_and_error(5)))
    path = events_file(tmp_path, "stuck.jsonl", stuck)
    firings = json.loads(replay(tmp_path, str(path), "--json").stdout)
    frustrated = [f for f in firings if "frustration" in f["fired"]]
    assert frustrated, firings
    assert frustrated[0]["pattern"] == "trial_error"
    assert frustrated[0]["session"] == "stuck"
    assert "frustration=" in replay(tmp_path, str(path)).stdout


def test_the_summary_has_a_line_per_session(tmp_path: Path) -> None:
    stuck = list(Stream(session_id="stuck").events(trial_and_error(5)))
    steady = list(Stream(session_id="steady").events(implementation(4)))
    path = events_file(tmp_path, "two.jsonl", stuck + steady)
    rows = {
        r["session"]: r
        for r in json.loads(replay(tmp_path, str(path), "--summary", "--json").stdout)
    }
    assert set(rows) == {"stuck", "steady"}
    assert rows["stuck"]["events"] == len(stuck)
    assert rows["stuck"]["fired"]["frustration"] >= 1
    assert rows["steady"]["fired"]["frustration"] == 0
    assert rows["steady"]["peak"]["flow"] > rows["stuck"]["peak"]["flow"]
    for row in rows.values():
        assert all(row["peak"][axis] >= row["mean"][axis] for axis in row["peak"])


def test_a_trajectory_reads_as_its_events(tmp_path: Path) -> None:
    as_events = events_file(tmp_path, "run.jsonl", list(read_trajectory(TRAJECTORY)))
    direct = replay(tmp_path, "--format", "mini-swe-agent", str(TRAJECTORY), "--summary", "--json")
    converted = replay(tmp_path, str(as_events), "--summary", "--json")
    assert json.loads(direct.stdout) == json.loads(converted.stdout)


@pytest.mark.parametrize("kind", ["folder", "missing"])
def test_bad_input_names_it_and_the_fix(tmp_path: Path, kind: str) -> None:
    target = tmp_path / ("runs" if kind == "folder" else "nothing.jsonl")
    if kind == "folder":
        target.mkdir()
    done = replay(tmp_path, str(target), check=False)
    assert done.returncode == 2  # as core's commands answer bad input
    assert str(target) in done.stderr
    assert ("--format mini-swe-agent" if kind == "folder" else "no such file") in done.stderr
    assert "Traceback" not in done.stderr
