"""Wall time of the hook commands, beside the bare start of the same Python interpreter.

One throw-away home and project (an empty git repository whose origin names
the store ``acme/web``). The home gets 10k memories and 1k matchers with
their predictions (see ``fill_home`` in homes.py): the real memories and
decision set of bench/data, embedded by the model, plus synthetic ones
written straight to storage. A daemon is started with
``DaemonClient.ensure_running(warm=True)``, so the model and caches are
loaded before the first timed run.

Each timed run is a whole process, as a harness starts it: the console script
``thatch`` next to this interpreter, with the recorded Claude Code payload of
tests/data/claude on stdin (``cwd`` set to the project, a new ``session_id``
per run so each run shows its memories, and a prompt that the real data
answers with a recall and a decision-model nudge). Every prompt ends with the
run's number: the daemon keeps the vectors of its last prompts, and a user
does not send the same prompt forty times. The baseline is ``python -c
"import json, socket"`` by ``sys.executable``: the least any Python hook can
cost. Hook and baseline run in rotating order, round after round, so machine
noise hits both alike (for flush-tools, with a third contender: the same
request sent straight to the daemon's socket from this process, the daemon's
part of the time); warm-up rounds come first and are not counted.

Measured, in order:

warm daemon
    ``thatch flush-tools`` (recall + decision nudges) and ``thatch buffer-tool``
    (the PostToolUse payload), each against its own interleaved baseline.
    Goal: median / baseline median <= 1.5.
no daemon
    The daemon stopped and ``THATCH_NO_AUTOSTART=1``: ``flush-tools`` and
    ``buffer-tool`` alternate. Goal: every run exits 0 within 300 ms, and
    every event is in the spool folder. The daemon is then started again and
    the script checks that it took every spooled tool call into the session's
    queue.

    uv run python bench/hook_latency.py
    uv run python bench/hook_latency.py --runs 100 --memories 1000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from homes import bench_env, fill_home, make_project
from hook_payloads import PROMPT, prompt_payload, tool_payload
from measure import percentile
from thatch import rundir
from thatch.daemon.client import DaemonClient
from thatch.decisions.nudge import HEADER as DECISION_HEADER
from thatch.nudges.recall import HEADER as RECALL_HEADER

THATCH = Path(sys.executable).with_name("thatch")
BASELINE = [sys.executable, "-c", "import json, socket"]
#: The session whose tool calls are spooled while no daemon runs.
COLD_SESSION = "bench-buffer-cold"
GOAL_RATIO = 1.5
GOAL_NO_DAEMON_MS = 300.0


#: One timed run: milliseconds, exit status (0 = fine), what it printed.
Outcome = tuple[float, int, str]
#: A contender: round number -> its outcome.
Run = Callable[[int], Outcome]


@dataclass
class Runs:
    """Wall times (ms) of one command and what its runs printed and returned."""

    name: str
    times: list[float] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        """Record one run."""
        elapsed, code, printed = outcome
        self.times.append(elapsed)
        self.codes.append(code)
        self.printed.append(printed)


def run_once(argv: Sequence[str], stdin: str, env: dict[str, str], cwd: Path) -> Outcome:
    """One process, from start to exit, with ``stdin`` as its input."""
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd)
    return (time.perf_counter() - start) * 1000, done.returncode, done.stdout


def request_alone(client: DaemonClient, project: Path, stdin: str) -> Outcome:
    """The daemon's part of flush-tools: the request the hook sends, from this process."""
    start = time.perf_counter()
    answer = client.request(
        "hook",
        command="flush-tools",
        harness=None,
        event=None,
        payload=json.loads(stdin),
        event_id=uuid.uuid4().hex,
        received_at=time.time(),
        cwd=str(project),
        env={"CLAUDE_PROJECT_DIR": str(project)},
        json=False,
    )
    elapsed = (time.perf_counter() - start) * 1000
    return elapsed, 0 if answer.get("ok") else 1, str(answer.get("output", ""))


def interleaved(contenders: Sequence[tuple[Runs, Run]], runs: int, warmup: int) -> None:
    """Run each contender once per round, rotating which goes first; warm-up rounds dropped."""
    for number in range(warmup + runs):
        shift = number % len(contenders)
        for runs_of, run in [*contenders[shift:], *contenders[:shift]]:
            outcome = run(number)
            if number >= warmup:
                runs_of.add(outcome)


def spooled(home: Path) -> int:
    """Events waiting in the spool folder of ``home``."""
    folder = Path(rundir.locate({}, home=str(home)).spool_dir)
    return len(list(folder.glob("*.json"))) if folder.is_dir() else 0


def wait_for_replay(client: DaemonClient, timeout: float = 60.0) -> dict[str, Any]:
    """The daemon's status once its spool backlog is empty."""
    deadline = time.monotonic() + timeout
    while True:
        status = client.call("status")
        if status.get("spool_backlog") == 0 or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def ratio_line(hook: Runs, base: Runs) -> str:
    """The goal line of a warm-daemon comparison."""
    ratio = statistics.median(hook.times) / statistics.median(base.times)
    met = "met" if ratio <= GOAL_RATIO else "NOT met"
    return f"goal {hook.name}: median ratio {ratio:.2f} <= {GOAL_RATIO:g}: {met}"


def print_table(rows: Sequence[tuple[str, Runs]]) -> None:
    """Median, p95 and max wall time of each set of runs, and their exit codes."""
    print(f"{'what':<34} | {'runs':>4} {'median':>7} {'p95':>7} {'max':>7} | {'exit != 0':>9}")
    print("-" * 75)
    for label, r in rows:
        p95 = percentile(r.times, 95)
        print(
            f"{label:<34} | {len(r.times):>4} {statistics.median(r.times):>7.1f} {p95:>7.1f} "
            f"{max(r.times):>7.1f} | {sum(code != 0 for code in r.codes):>9}"
        )
    print(
        "ms of wall time per process, start to exit (subprocess.run); the daemon request "
        "alone is\nthe same flush sent over the socket from this process (exit != 0: not ok)"
    )


def process(argv: Sequence[str], stdins: Sequence[str], env: dict[str, str], cwd: Path) -> Run:
    """A contender that runs ``argv`` with round n's input ``stdins[n]``."""
    return lambda number: run_once(argv, stdins[number], env, cwd)


def warm_runs(
    client: DaemonClient, env: dict[str, str], project: Path, args: argparse.Namespace
) -> list[Runs]:
    """flush-tools, its baseline and its request alone; buffer-tool and its baseline."""
    total = args.warmup + args.runs
    flush, flush_base, alone = Runs("flush-tools"), Runs("baseline"), Runs("request")
    # A round's payload (a new session, a new prompt) serves the hook and its baseline.
    prompts = [prompt_payload(project, args.prompt, n) for n in range(total)]
    # The request alone gets prompts no process sent, so none is remembered.
    fresh = [prompt_payload(project, args.prompt, total + n) for n in range(total)]
    interleaved(
        [
            (flush, process([str(THATCH), "flush-tools"], prompts, env, project)),
            (flush_base, process(BASELINE, prompts, env, project)),
            (alone, lambda number: request_alone(client, project, fresh[number])),
        ],
        args.runs,
        args.warmup,
    )
    tools = [tool_payload(project, "bench-buffer-warm", n) for n in range(total)]
    buffer, buffer_base = Runs("buffer-tool"), Runs("baseline")
    interleaved(
        [
            (buffer, process([str(THATCH), "buffer-tool"], tools, env, project)),
            (buffer_base, process(BASELINE, tools, env, project)),
        ],
        args.runs,
        args.warmup,
    )
    return [flush, flush_base, alone, buffer, buffer_base]


def cold_runs(env: dict[str, str], project: Path, args: argparse.Namespace) -> list[Runs]:
    """flush-tools and buffer-tool alternating, with no daemon and autostart off."""
    cold_env = {**env, "THATCH_NO_AUTOSTART": "1"}
    prompts = [prompt_payload(project, args.prompt, n) for n in range(args.runs)]
    tools = [tool_payload(project, COLD_SESSION, n) for n in range(args.runs)]
    flush, buffer = Runs("flush-tools"), Runs("buffer-tool")
    interleaved(
        [
            (flush, process([str(THATCH), "flush-tools"], prompts, cold_env, project)),
            (buffer, process([str(THATCH), "buffer-tool"], tools, cold_env, project)),
        ],
        args.runs,
        0,
    )
    return [flush, buffer]


def main(argv: Sequence[str] | None = None) -> int:
    """Fill a home, time the hooks against a warm daemon and against none, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--matchers", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=40, help="timed runs of each command")
    parser.add_argument("--warmup", type=int, default=5, help="untimed rounds first")
    parser.add_argument("--prompt", default=PROMPT)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", action="store_true", help="print the last flush's output")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(prefix="thatch-hooks-") as tmp:
        home, project = Path(tmp) / "home", make_project(Path(tmp) / "web")
        for note in fill_home(home, project, args.memories, args.matchers, rng):
            print(f"  {note}")
        env = bench_env(home, CLAUDE_PROJECT_DIR=str(project))
        client = DaemonClient(str(home), environ=env)
        try:
            started = time.perf_counter()
            client.ensure_running(warm=True)
            print(f"  daemon warm in {time.perf_counter() - started:.1f} s")
            flush, flush_base, alone, buffer, buffer_base = warm_runs(client, env, project, args)
            client.stop()
            before = spooled(home)
            cold_flush, cold_buffer = cold_runs(env, project, args)
            in_spool = spooled(home) - before
            # Back again, the daemon must take every spooled tool call, once.
            client.ensure_running(warm=True)
            status = wait_for_replay(client)
            queued = {s["session_id"]: s["pending"] for s in status.get("sessions", [])}
        finally:
            client.stop()
    print(f"load average at end: {os.getloadavg()[0]:.2f}\n")

    print_table(
        [
            ("warm daemon: flush-tools", flush),
            ("  baseline, interleaved", flush_base),
            ("  its daemon request alone", alone),
            ("warm daemon: buffer-tool", buffer),
            ("  baseline, interleaved", buffer_base),
            ("no daemon: flush-tools", cold_flush),
            ("no daemon: buffer-tool", cold_buffer),
        ]
    )
    print(f'baseline: {sys.executable} -c "{BASELINE[2]}"')
    sizes = [len(text) for text in flush.printed]
    recall = sum(RECALL_HEADER in text for text in flush.printed)
    decisions = sum(DECISION_HEADER in text for text in flush.printed)
    print(
        f"flush-tools injected {statistics.median(sizes):.0f} characters (median; "
        f"min {min(sizes)}, max {max(sizes)}); recall nudge in {recall}/{len(sizes)} runs, "
        f"decision nudge in {decisions}/{len(sizes)}"
    )
    if args.show:
        print(f"--- output of the last flush-tools ---\n{flush.printed[-1]}---")
    printed_cold = sum(bool(text.strip()) for text in cold_flush.printed + cold_buffer.printed)
    events = len(cold_flush.times) + len(cold_buffer.times)
    print(
        f"no daemon: {in_spool} of {events} events spooled; {printed_cold} runs printed "
        f"anything; after restart the daemon queued {queued.get(COLD_SESSION, 0)} of "
        f"{len(cold_buffer.times)} spooled tool calls"
    )
    print()
    print(ratio_line(flush, flush_base))
    print(ratio_line(buffer, buffer_base))
    for r in (cold_flush, cold_buffer):
        worst = max(r.times)
        exits = all(code == 0 for code in r.codes)
        met = "met" if worst <= GOAL_NO_DAEMON_MS and exits else "NOT met"
        print(
            f"goal no daemon {r.name}: max {worst:.1f} ms <= {GOAL_NO_DAEMON_MS:g} ms, "
            f"all exit 0 ({'yes' if exits else 'no'}): {met}"
        )
    kept = "met" if in_spool == events else "NOT met"
    print(f"goal no daemon: nothing lost ({in_spool}/{events} spooled): {kept}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
