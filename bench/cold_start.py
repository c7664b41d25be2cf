"""What a session start and the first prompt get when no daemon is warm, beside a warm daemon.

One throw-away home and project (an empty git repository whose origin names
the store ``acme/web``), filled by ``fill_home`` of homes.py: the real
memories and decision set of bench/data, embedded by the model, plus
synthetic ones written straight to storage. Every run is a whole process,
as Claude Code starts it: ``thatch hook claude EVENT`` by the console script
next to this interpreter, a recorded payload of tests/data/claude on stdin
(a new ``session_id`` per run, ``cwd`` the project), the default hook cap
and cold-start allowance, and THATCH_NO_AUTOSTART unset, so the hook starts
the daemon itself. Timed from the process start to the first byte it prints
(its answer), and to its exit.

Each round, in this order:

no daemon: SessionStart
    No daemon runs; the hook spools the event, starts the daemon, sends the
    event as soon as the daemon listens and prints the reminder (which needs
    no model). Then the daemon is stopped.
no daemon: UserPromptSubmit
    No daemon runs; the same, but the answer (recall and decision nudges)
    needs the model, so the hook also waits out the model load.
daemon warming: UserPromptSubmit
    The daemon was just started (``DaemonClient.spawn``) and answers pings
    but is still loading its model: the hook hears that at once and waits.
warm daemon: UserPromptSubmit
    The same prompt text, once the daemon is warm.

A run counts as answered when it printed the reminder (session start) or
the recall nudge (prompts). The daemon's own warm-up times are read from its
log. The goal: every run answered (and every exit 0).

``--no-bytecode-cache`` runs hooks and daemons with an empty, read-only
bytecode cache (``PYTHONPYCACHEPREFIX`` on a fresh folder and
``PYTHONDONTWRITEBYTECODE=1``), as the first start after an install is.

    uv run python bench/cold_start.py
    uv run python bench/cold_start.py --runs 20 --memories 10000
    uv run python bench/cold_start.py --no-bytecode-cache
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from homes import bench_env, fill_home, make_project
from hook_payloads import PROMPT, payload
from measure import percentile
from thatch import rundir
from thatch.daemon.client import DaemonClient
from thatch.decisions.nudge import HEADER as DECISION_HEADER
from thatch.hookcmd import cap
from thatch.nudges.recall import HEADER as RECALL_HEADER

THATCH = Path(sys.executable).with_name("thatch")
#: The first line of the session-start reminder (thatch.nudges.reminder).
REMINDER_HEADER = "[thatch] Memory for this session"
WARM_LINE = re.compile(r"warm in ([0-9.]+) s")


@dataclass
class Runs:
    """One kind of run: ms to the first printed byte and to exit, and whether it answered."""

    name: str
    wanted: str
    first_output: list[float] = field(default_factory=list)
    exits: list[float] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    decisions: int = 0

    def add(self, first: float | None, exit_ms: float, code: int, printed: str) -> None:
        """Record one run (``first`` is None when it printed nothing)."""
        self.first_output.append(exit_ms if first is None else first)
        self.exits.append(exit_ms)
        self.answered.append(self.wanted in printed)
        self.codes.append(code)
        self.decisions += DECISION_HEADER in printed


#: One run: ms to the first printed byte (None: printed nothing), ms to exit, status, output.
Outcome = tuple[float | None, float, int, str]


def run_hook(event: str, stdin: str, env: dict[str, str], cwd: Path) -> Outcome:
    """One ``thatch hook claude EVENT`` process, fed ``stdin``."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [str(THATCH), "hook", "claude", event],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(stdin.encode())
    process.stdin.close()
    first: float | None = None
    chunks: list[bytes] = []
    while chunk := os.read(process.stdout.fileno(), 65536):
        if first is None:
            first = (time.perf_counter() - start) * 1000
        chunks.append(chunk)
    code = process.wait()
    process.stdout.close()
    return first, (time.perf_counter() - start) * 1000, code, b"".join(chunks).decode()


def start_payload(project: Path) -> str:
    """A SessionStart payload of a new session."""
    return json.dumps(payload("session_start.json", project, session_id=str(uuid.uuid4())))


def prompt_of(project: Path, prompt: str) -> str:
    """A UserPromptSubmit payload of a new session (so no memory is held back as shown)."""
    return json.dumps(
        payload("user_prompt_submit.json", project, session_id=str(uuid.uuid4()), prompt=prompt)
    )


def wait_listening_cold(client: DaemonClient, timeout: float = 60.0) -> bool:
    """Wait until the daemon answers pings; True if it was still warming up then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = client.ping()
        if answer and answer.get("ok"):
            return not answer.get("warm")
        time.sleep(0.005)
    raise RuntimeError("the daemon did not start")


def one_round(
    client: DaemonClient, env: dict[str, str], project: Path, prompt: str, runs: list[Runs]
) -> int:
    """One run of each kind, in order; returns how many warming runs found the daemon warm."""
    started, cold, warming, warm = runs
    started.add(*run_hook("SessionStart", start_payload(project), env, project))
    client.stop()
    cold.add(*run_hook("UserPromptSubmit", prompt_of(project, prompt), env, project))
    client.stop()
    client.spawn()
    missed = 0 if wait_listening_cold(client) else 1
    warming.add(*run_hook("UserPromptSubmit", prompt_of(project, prompt), env, project))
    client.ensure_running(warm=True)
    warm.add(*run_hook("UserPromptSubmit", prompt_of(project, prompt), env, project))
    client.stop()
    return missed


def warm_ups(home: Path) -> list[float]:
    """The daemon's warm-up times, in seconds, from its log."""
    log = Path(rundir.locate({}, home=str(home)).log_path)
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return [float(found) for found in WARM_LINE.findall(text)]


def print_table(rows: Sequence[Runs]) -> None:
    """Answered runs and the time to the answer (median, p95, max) of each kind of run."""
    print(
        f"{'what':<34} | {'answered':>8} | {'median':>7} {'p95':>7} {'max':>7} "
        f"| {'exit med':>8} | {'exit != 0':>9}"
    )
    print("-" * 92)
    for r in rows:
        print(
            f"{r.name:<34} | {sum(r.answered):>3}/{len(r.answered):<4} | "
            f"{statistics.median(r.first_output):>7.0f} {percentile(r.first_output, 95):>7.0f} "
            f"{max(r.first_output):>7.0f} | {statistics.median(r.exits):>8.0f} | "
            f"{sum(code != 0 for code in r.codes):>9}"
        )
    print(
        "ms of wall time per process, from its start to the first byte it printed (median, p95,\n"
        "max) and to its exit (median); answered: printed the reminder or the recall nudge"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Fill a home, run the rounds, print the table and the goal lines."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=1_000)
    parser.add_argument("--matchers", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10, help="rounds (one run of each kind)")
    parser.add_argument("--prompt", default=PROMPT)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--no-bytecode-cache", action="store_true", help="compile every module on every start"
    )
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    runs = [
        Runs("no daemon: SessionStart", REMINDER_HEADER),
        Runs("no daemon: UserPromptSubmit", RECALL_HEADER),
        Runs("daemon warming: UserPromptSubmit", RECALL_HEADER),
        Runs("warm daemon: UserPromptSubmit", RECALL_HEADER),
    ]

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(prefix="thatch-cold-") as tmp:
        home, project = Path(tmp) / "home", make_project(Path(tmp) / "web")
        for note in fill_home(home, project, args.memories, args.matchers, rng):
            print(f"  {note}")
        env = bench_env(home, CLAUDE_PROJECT_DIR=str(project))
        if args.no_bytecode_cache:
            empty = Path(tmp) / "no-pycache"
            empty.mkdir()
            env.update(PYTHONPYCACHEPREFIX=str(empty), PYTHONDONTWRITEBYTECODE="1")
        allowance, _ = cap.cold_start_ms(env)
        client = DaemonClient(str(home), environ=env)
        missed = 0
        try:
            client.stop()
            for _ in range(args.runs):
                missed += one_round(client, env, project, args.prompt, runs)
        finally:
            client.stop()
        warm_times = warm_ups(home)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.no_bytecode_cache:
        print("no bytecode cache: every hook and daemon compiled its modules")
    print()

    print_table(runs)
    print(
        f"daemon warm-up, from its log: median {statistics.median(warm_times):.2f} s, "
        f"max {max(warm_times):.2f} s over {len(warm_times)} starts; cold-start allowance "
        f"{allowance} ms, hook cap {cap.DEFAULT_TIMEOUT_MS} ms"
    )
    if missed:
        print(f"({missed} 'daemon warming' runs found the daemon warm already)")
    for r in runs[1:]:
        print(f"{r.name}: decision nudge in {r.decisions}/{len(r.answered)} runs")
    print()
    for r in runs:
        answered = sum(r.answered)
        exits = not any(r.codes)
        met = "met" if answered == len(r.answered) and exits else "NOT met"
        print(
            f"goal {r.name}: {answered}/{len(r.answered)} answered, all exit 0 "
            f"({'yes' if exits else 'no'}; slowest exit {max(r.exits):.0f} ms): {met}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
