"""The daemon's resident memory with the model loaded and 100k memories.

Two throw-away homes, each with a project (an empty git repository whose
origin names the store ``acme/web``), are measured one after the other:

empty
    Only the 121 real memories of bench/data: what the model, the plugins
    and the interpreter cost on their own.
full
    ``--count`` memories (default 100,000) and ``--matchers`` matchers with
    their predictions (default 1,000): the real ones of bench/data, embedded
    by the model, plus synthetic ones written straight to storage, as in
    recall_latency.py (embedding 100k texts would take over half an hour on
    two cores).

For each, a daemon is started with ``DaemonClient.ensure_running(warm=True)``
(the model loaded and the vector caches filled), and its ``VmRSS`` (resident
now) and ``VmHWM`` (resident at its peak) are read from /proc/<pid>/status,
the pid from the daemon's pid file; resident memory is also split into
anonymous memory (heap, model, vectors) and mapped files (among them the
database pages SQLite reads through mmap). Read once warm, then again after
``--recalls`` ``memory_recall`` tool calls (queries of
bench/data/queries.jsonl, sent as ``thatch mcp`` sends them) and one
``thatch flush-tools`` run with a prompt payload. Linux only (/proc).

    uv run python bench/daemon_memory.py
    uv run python bench/daemon_memory.py --count 200000 --recalls 50
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import thatch
from data_sets import DATA, read_jsonl
from homes import bench_env, fill_home, make_project
from hook_payloads import PROMPT, prompt_payload
from measure import proc_memory
from thatch.daemon.client import DaemonClient

THATCH = Path(sys.executable).with_name("thatch")
GOAL_MB = 400.0


@dataclass(frozen=True)
class Reading:
    """The daemon's memory at one moment, in kB as /proc reports it."""

    home: str
    moment: str
    rss_kb: int
    hwm_kb: int
    anon_kb: int
    file_kb: int


def megabytes(kb: int) -> float:
    """/proc's kB (1,024 bytes) in MB (10^6 bytes), the unit of the goal."""
    return kb * 1024 / 1e6


def daemon_pid(client: DaemonClient) -> int:
    """The running daemon's pid, from its pid file."""
    return int(Path(client.located.pid_path).read_text(encoding="ascii").strip())


def read(client: DaemonClient, home: str, moment: str) -> Reading:
    """VmRSS and VmHWM of the daemon now."""
    sizes = proc_memory(daemon_pid(client))
    return Reading(
        home,
        moment,
        sizes["VmRSS"],
        sizes["VmHWM"],
        sizes.get("RssAnon", 0),
        sizes.get("RssFile", 0) + sizes.get("RssShmem", 0),
    )


def exercise(
    client: DaemonClient, project: Path, queries: Sequence[str], env: dict[str, str]
) -> tuple[int, int]:
    """Recall each query through the daemon's tool, then one flush-tools; (hits, printed chars)."""
    hits = 0
    for query in queries:
        answer = client.call(
            "call",
            tool="memory_recall",
            arguments={"query": query},
            cwd=str(project),
            env={"CLAUDE_PROJECT_DIR": str(project)},
        )
        if answer.get("ok") and not answer.get("is_error"):
            hits += len(answer.get("result") or [])
    done = subprocess.run(
        [str(THATCH), "flush-tools"],
        input=prompt_payload(project, PROMPT, 0),
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        check=False,
    )
    return hits, len(done.stdout)


def measure(
    label: str,
    memories: int,
    matchers: int,
    queries: Sequence[str],
    rng: np.random.Generator,
) -> list[Reading]:
    """Fill a home, start its daemon warm, read its memory before and after some work."""
    print(f"{label}:")
    with tempfile.TemporaryDirectory(prefix="thatch-daemon-memory-") as tmp:
        home, project = Path(tmp) / "home", make_project(Path(tmp) / "web")
        for note in fill_home(home, project, memories, matchers, rng):
            print(f"  {note}")
        env = bench_env(home, CLAUDE_PROJECT_DIR=str(project))
        client = DaemonClient(str(home), environ=env)
        try:
            started = time.perf_counter()
            client.ensure_running(warm=True)
            print(f"  daemon {daemon_pid(client)} warm in {time.perf_counter() - started:.1f} s")
            readings = [read(client, label, "warm")]
            hits, printed = exercise(client, project, queries, env)
            print(
                f"  {len(queries)} recalls returned {hits} memories; flush-tools printed "
                f"{printed} characters"
            )
            readings.append(read(client, label, f"+ {len(queries)} recalls, 1 flush"))
        finally:
            client.stop()
    return readings


def print_readings(readings: Sequence[Reading], count: int, dim: int) -> None:
    """The table, the size of the raw vectors for scale, and the goal."""
    print(f"{'home':<6} {'moment':<25} | {'VmRSS':>7} {'VmHWM':>7} | {'anon':>7} {'file':>7}")
    print("-" * 69)
    for r in readings:
        sizes = (r.rss_kb, r.hwm_kb, r.anon_kb, r.file_kb)
        rss, hwm, anon, file = (megabytes(kb) for kb in sizes)
        print(f"{r.home:<6} {r.moment:<25} | {rss:>7.1f} {hwm:>7.1f} | {anon:>7.1f} {file:>7.1f}")
    print(
        "MB (10^6 bytes) from /proc/<pid>/status: VmRSS = resident now, VmHWM = resident at "
        "the peak so far;\nVmRSS = anon (RssAnon: heap, model, vectors) + file (RssFile + "
        "RssShmem: mapped files, among them\nthe pages of the database SQLite reads through "
        f"mmap). {count:,} float32 vectors of dimension {dim}\nalone take "
        f"{count * dim * 4 / 1e6:.1f} MB"
    )
    full = [r for r in readings if r.home == "full"]
    peak = megabytes(max(r.hwm_kb for r in full))
    now = megabytes(full[-1].rss_kb)
    met = "met" if peak <= GOAL_MB else "NOT met"
    print(
        f"goal at {count:,} memories: peak {peak:.1f} MB (resident at the end {now:.1f} MB) "
        f"<= {GOAL_MB:g} MB: {met}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Measure an empty home's daemon, then a full one's."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="memories in the full home")
    parser.add_argument("--matchers", type=int, default=1_000, help="matchers in the full home")
    parser.add_argument("--recalls", type=int, default=20, help="memory_recall calls")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if not Path("/proc/self/status").exists():
        print("daemon_memory.py reads /proc/<pid>/status: run it on Linux")
        return 0
    rng = np.random.default_rng(args.seed)
    texts = [str(row["query"]) for row in read_jsonl(DATA / "queries.jsonl")]
    queries = [texts[i % len(texts)] for i in range(args.recalls)]

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    readings = measure("empty", 0, 0, queries, rng)
    readings += measure("full", args.count, args.matchers, queries, rng)
    print(f"load average at end: {os.getloadavg()[0]:.2f}\n")
    with tempfile.TemporaryDirectory() as home, thatch.open(home=home) as th:
        dim = th.embedder.dim
    print_readings(readings, args.count, dim)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
