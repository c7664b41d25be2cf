"""``thatch receptor replay`` through the real console script, on events and on trajectories."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from receptor_cli import receptor
from receptor_streams import Stream, implementation, trial_and_error
from thatch_receptor.trajectories import read_trajectory, write_events

TRAJECTORY = Path(__file__).parents[1] / "data" / "receptor" / "traj_gift_cards.json"


def replay(tmp_path: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = receptor(tmp_path, "replay", *args)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def json_lines(stdout: str) -> list[dict]:
    """``--summary --json``'s output: one JSON object a line."""
    return [json.loads(line) for line in stdout.splitlines()]


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
        for r in json_lines(replay(tmp_path, str(path), "--summary", "--json").stdout)
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
    assert json_lines(direct.stdout) == json_lines(converted.stdout)


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


def test_a_trajectory_without_its_format_is_told_the_format(tmp_path: Path) -> None:
    done = replay(tmp_path, str(TRAJECTORY), check=False)
    assert done.returncode == 2
    assert "--format" not in done.stderr  # a name without the suffix: no guess
    run = tmp_path / "django__django-1.traj.json"
    run.write_bytes(TRAJECTORY.read_bytes())
    done = replay(tmp_path, str(run), check=False)
    assert done.returncode == 2
    assert f"{run} line 1: not JSON" in done.stderr
    assert "looks like a mini-swe-agent trajectory: add --format mini-swe-agent" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_events_file_without_events_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    assert replay(tmp_path, str(empty)).stdout == "no firings\n"
    assert replay(tmp_path, str(empty), "--summary").stdout == "no sessions\n"
    assert replay(tmp_path, str(empty), "--summary", "--json").stdout == ""


def test_an_events_file_that_is_not_utf8_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"kind": "stop", "harness": "h", "session_id": "caf\xe9"}\n')
    done = replay(tmp_path, str(path), check=False)
    assert done.returncode == 2
    assert f"{path}: cannot be read (not UTF-8 text)" in done.stderr
    assert "Traceback" not in done.stderr


def stuck_file(tmp_path: Path) -> Path:
    return events_file(
        tmp_path, "stuck.jsonl", list(Stream(session_id="stuck").events(trial_and_error(5)))
    )


def rules_file(tmp_path: Path, *rules: dict) -> Path:
    path = tmp_path / "my-rules.json"
    path.write_text(json.dumps({"rules": list(rules)}), encoding="utf-8")
    return path


def test_each_firing_carries_its_decision(tmp_path: Path) -> None:
    path = stuck_file(tmp_path)
    firings = json.loads(replay(tmp_path, str(path), "--json").stdout)
    streak = next(f for f in firings if f["pattern"] == "trial_error")
    decision = streak["decision"]
    assert (decision["rule"], decision["trigger"], decision["mode"]) == (
        "failing-streak",
        "error_context",
        "active",
    )
    assert "at or over the delivery threshold" in decision["why"]
    assert 0.0 <= decision["score"] <= 1.0
    line = replay(tmp_path, str(path)).stdout.splitlines()[0]
    assert "-> failing-streak: score" in line


QUIETER = {
    "name": "failing-streak",
    "when": {"fired": ["frustration"]},
    "trigger": "error_context",
    "mode": "notification",
    "reason": "still failing ({pattern})",
    "score": {"base": 0.9},
}


def test_a_rule_file_overrides_the_defaults(tmp_path: Path) -> None:
    rules = rules_file(tmp_path, QUIETER, {"name": "knowledge-gap", "enabled": False})
    firings = json.loads(
        replay(tmp_path, str(stuck_file(tmp_path)), "--rules", str(rules), "--json").stdout
    )
    decisions = [f["decision"] for f in firings if f["pattern"] == "trial_error"]
    assert decisions
    assert decisions[0]["mode"] == "notification"
    assert decisions[0]["reason"] == "still failing (trial_error)"


def users_rules(tmp_path: Path, *rules: dict) -> Path:
    """The user's rule file, where the daemon reads it: the config folder of the test's home."""
    config = tmp_path / "home" / "config"
    config.mkdir(parents=True, exist_ok=True)
    path = config / "receptor-rules.json"
    path.write_text(json.dumps({"rules": list(rules)}), encoding="utf-8")
    return path


def streak_modes(done: subprocess.CompletedProcess[str]) -> list[str]:
    firings = json.loads(done.stdout)
    return [f["decision"]["mode"] for f in firings if f["decision"]["rule"] == "failing-streak"]


def test_the_users_rule_file_decides_as_in_the_daemon(tmp_path: Path) -> None:
    mine = users_rules(tmp_path, QUIETER)
    events = str(stuck_file(tmp_path))
    done = replay(tmp_path, events, "--json")
    assert streak_modes(done)
    assert set(streak_modes(done)) == {"notification"}
    assert str(mine) in done.stderr  # said, so that no one is surprised
    shipped = replay(tmp_path, events, "--json", "--default-rules")
    assert "active" in streak_modes(shipped)
    assert shipped.stderr == ""
    louder = rules_file(tmp_path, {**QUIETER, "mode": "active", "reason": "--rules"})
    given = json.loads(replay(tmp_path, events, "--json", "--rules", str(louder)).stdout)
    assert {f["decision"]["reason"] for f in given if f["pattern"] == "trial_error"} == {"--rules"}


def stuck_trajectories(tmp_path: Path, *instances: str) -> Path:
    """A folder of runs that edit and fail their test six times, one per instance id."""
    runs = tmp_path / "stuck-trajs"
    runs.mkdir()
    data = json.loads(TRAJECTORY.read_text(encoding="utf-8"))
    messages = data["messages"][:2]  # the system prompt and the task
    for attempt in range(6):
        messages += [
            {"role": "assistant", "content": f'```bash\nsed -i "s/a/{attempt}/" shop/pay.py\n```'},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
            {"role": "assistant", "content": "```bash\npytest tests/test_pay.py\n```"},
            {"role": "user", "content": "<returncode>1</returncode>\n<output>\nFAILED\n</output>"},
        ]
    for number, instance in enumerate(instances):
        (runs / f"run-{number}.traj.json").write_text(
            json.dumps({**data, "instance_id": instance, "messages": messages}), encoding="utf-8"
        )
    return runs


def test_worker_processes_read_the_users_rule_file(tmp_path: Path) -> None:
    users_rules(tmp_path, QUIETER)
    runs = stuck_trajectories(tmp_path, "acme__shop-1", "acme__shop-2", "acme__shop-3")
    args = [str(runs), "--format", "mini-swe-agent", "--json"]
    workers = replay(tmp_path, *args, "--jobs", "2")
    assert workers.stdout == replay(tmp_path, *args, "--jobs", "1").stdout
    assert set(streak_modes(workers)) == {"notification"}
    assert len(streak_modes(workers)) >= 3
    assert "active" in streak_modes(replay(tmp_path, *args, "--jobs", "2", "--default-rules"))


def test_a_bad_users_rule_file_is_refused_by_name(tmp_path: Path) -> None:
    mine = users_rules(tmp_path, {**QUIETER, "when": {"patterns": ["trial_eror"]}})
    done = replay(tmp_path, str(stuck_file(tmp_path)), check=False)
    assert done.returncode == 2
    assert f"rule file {mine}: rule 'failing-streak' (#1)" in done.stderr
    assert "Traceback" not in done.stderr


def test_rules_and_default_rules_do_not_go_together(tmp_path: Path) -> None:
    done = replay(tmp_path, "x.jsonl", "--rules", "r.json", "--default-rules", check=False)
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr


def test_a_bad_rule_file_names_the_rule_and_field(tmp_path: Path) -> None:
    bad = rules_file(tmp_path, {"name": "loud", "trigger": "x", "mode": "shout", "reason": "r"})
    done = replay(tmp_path, str(stuck_file(tmp_path)), "--rules", str(bad), check=False)
    assert done.returncode == 2
    assert str(bad) in done.stderr
    assert "rule 'loud' (#1): field 'mode'" in done.stderr
    assert "use one of drop, silent, passive, notification, active" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_summary_counts_decisions_by_mode(tmp_path: Path) -> None:
    (row,) = json_lines(replay(tmp_path, str(stuck_file(tmp_path)), "--summary", "--json").stdout)
    assert set(row["modes"]) == {"drop", "silent", "passive", "notification", "active"}
    assert row["modes"]["active"] >= 1
    assert sum(row["modes"].values()) >= row["fired"]["frustration"]
    text = replay(tmp_path, str(stuck_file(tmp_path)), "--summary").stdout
    assert "modes: drop" in text


def test_summary_json_is_one_line_per_run_with_its_id_and_axes(tmp_path: Path) -> None:
    runs = tmp_path / "trajs"
    runs.mkdir()
    data = json.loads(TRAJECTORY.read_text(encoding="utf-8"))
    for instance in ("acme__shop-42", "acme__shop-43"):
        (runs / f"{instance}.traj.json").write_text(
            json.dumps({**data, "instance_id": instance}), encoding="utf-8"
        )
    out = replay(tmp_path, str(runs), "--format", "mini-swe-agent", "--summary", "--json").stdout
    lines = out.splitlines()
    assert len(lines) == 2
    rows = [json.loads(line) for line in lines]
    assert [row["session"] for row in rows] == ["acme__shop-42", "acme__shop-43"]
    for row in rows:
        assert (
            set(row["peak"])
            == set(row["mean"])
            == {
                "frustration",
                "seeking",
                "uncertainty",
                "fatigue",
                "isolation",
                "flow",
            }
        )


def test_plot_writes_a_png(tmp_path: Path) -> None:
    stuck = list(Stream(session_id="stuck").events(trial_and_error(5)))
    steady = list(Stream(session_id="steady").events(implementation(4)))
    path = events_file(tmp_path, "two.jsonl", stuck + steady)
    plot = tmp_path / "receptor.png"
    done = replay(tmp_path, str(path), "--summary", "--plot", str(plot))
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert f"plot written to {plot}" in done.stderr
    assert "stuck" in done.stdout  # the summary still prints


@pytest.mark.parametrize(
    ("name", "says"), [("plot.svg", "does not end in .png"), ("no/p.png", "does not exist")]
)
def test_a_bad_plot_target_is_refused_before_the_replay(
    tmp_path: Path, name: str, says: str
) -> None:
    done = replay(tmp_path, str(stuck_file(tmp_path)), "--plot", str(tmp_path / name), check=False)
    assert done.returncode == 2
    assert says in done.stderr
    assert done.stdout == ""


def trajectory_folder(tmp_path: Path, *instances: str) -> Path:
    """A folder of the test trajectory under each instance id (cut shorter each time)."""
    runs = tmp_path / "trajs"
    runs.mkdir()
    data = json.loads(TRAJECTORY.read_text(encoding="utf-8"))
    for number, instance in enumerate(instances):
        messages = data["messages"][: len(data["messages"]) - 2 * number]
        (runs / f"run-{number}.traj.json").write_text(
            json.dumps({**data, "instance_id": instance, "messages": messages}), encoding="utf-8"
        )
    return runs


@pytest.mark.parametrize("output", [["--summary", "--json"], ["--json"], []])
def test_worker_processes_print_what_one_process_prints(tmp_path: Path, output: list) -> None:
    runs = trajectory_folder(tmp_path, "acme__shop-1", "acme__shop-2", "acme__shop-3")
    args = [str(runs), "--format", "mini-swe-agent", *output]
    workers = replay(tmp_path, *args, "--jobs", "2").stdout
    assert workers == replay(tmp_path, *args, "--jobs", "1").stdout
    assert workers.strip()


def test_files_of_one_session_name_replay_as_in_one_process(tmp_path: Path) -> None:
    # One receptor holds a session's state by name: two runs of one name share it.
    runs = trajectory_folder(tmp_path, "acme__shop-1", "acme__shop-1")
    args = [str(runs), "--format", "mini-swe-agent", "--summary", "--json"]
    rows = json_lines(replay(tmp_path, *args, "--jobs", "2").stdout)
    assert rows == json_lines(replay(tmp_path, *args, "--jobs", "1").stdout)
    assert [row["session"] for row in rows] == ["acme__shop-1", "acme__shop-1"]


def test_a_bad_file_fails_in_a_worker_as_in_one_process(tmp_path: Path) -> None:
    runs = trajectory_folder(tmp_path, "acme__shop-1", "acme__shop-2")
    bad = runs / "run-9.traj.json"
    bad.write_text("{not json", encoding="utf-8")
    args = [str(runs), "--format", "mini-swe-agent", "--summary"]
    workers = replay(tmp_path, *args, "--jobs", "2", check=False)
    alone = replay(tmp_path, *args, "--jobs", "1", check=False)
    assert workers.returncode == alone.returncode == 2
    assert workers.stderr == alone.stderr
    assert str(bad) in workers.stderr
    assert "Traceback" not in workers.stderr


def test_jobs_must_be_at_least_one(tmp_path: Path) -> None:
    done = replay(
        tmp_path, str(TRAJECTORY), "--format", "mini-swe-agent", "--jobs", "0", check=False
    )
    assert done.returncode == 2
    assert "--jobs takes a whole number of at least 1, got '0'" in done.stderr
