"""The cost the receptor adds to a tool hook: the same hook with the receptor plugin on and off.

Two throw-away homes for one project (an empty git repository whose origin
names the store ``acme/web``), each with its own daemon, started and warmed
with ``DaemonClient.ensure_running(warm=True)``: in one the receptor plugin is
loaded (the default), in the other its config says ``[plugins] blocked =
["receptor"]``, so that daemon never loads it.

Each timed run is a whole process, as a harness starts it: ``thatch hook
claude PostToolUseFailure``, the console script found on a PATH of the
interpreter's bin folder and the system's (no virtual environment activated),
with the recorded Claude Code payload of tests/data/claude on stdin (``cwd``
the project, one session per variant, a new tool-use id per run: a streak of
failing test runs, what the receptor reads as frustration). The two variants
alternate, which goes first changing every round, so machine noise hits both
alike; warm-up rounds come first and are not counted. Every run must exit 0.

Prints the median and p90 of each variant and the ratio of the medians.
Goal: none measurable (a ratio of about 1): the hook only forwards the event;
the receptor's work is in the daemon, off the hook path.

    uv run python bench/receptor_hook_cost.py
    uv run python bench/receptor_hook_cost.py --runs 100
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
from pathlib import Path

from homes import bench_env, make_project
from hook_payloads import payload
from measure import percentile
from thatch.daemon.client import DaemonClient

SCRIPT_DIR = Path(sys.executable).parent
HOOK = ["thatch", "hook", "claude", "PostToolUseFailure"]
VARIANTS = ("receptor on", "receptor off")


class Variant:
    """One home, its daemon and hook environment, and the times of its hook runs."""

    def __init__(self, name: str, home: Path, project: Path, *, blocked: bool) -> None:
        self.name = name
        self.project = project
        self.session = f"bench-receptor-{'off' if blocked else 'on'}"
        if blocked:
            config = home / "config" / "config.toml"
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text('[plugins]\nblocked = ["receptor"]\n', encoding="utf-8")
        self.env = bench_env(home, CLAUDE_PROJECT_DIR=str(project))
        self.env.pop("VIRTUAL_ENV", None)
        self.env["PATH"] = os.pathsep.join([str(SCRIPT_DIR), "/usr/local/bin", "/usr/bin", "/bin"])
        self.client = DaemonClient(str(home), environ=self.env)
        self.times: list[float] = []

    def run(self, number: int) -> float:
        """One hook process with the failure payload numbered ``number``; its milliseconds."""
        data = payload(
            "post_tool_use_failure.json",
            self.project,
            session_id=self.session,
            tool_use_id=f"toolu_bench_{number}",
        )
        started = time.perf_counter()
        done = subprocess.run(
            HOOK,
            input=json.dumps(data),
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.project,
            timeout=60,
            check=False,
        )
        elapsed = (time.perf_counter() - started) * 1000
        if done.returncode != 0:
            raise SystemExit(
                f"{self.name}: {' '.join(HOOK)} exited {done.returncode}: "
                f"{(done.stdout + done.stderr).strip()}"
            )
        return elapsed


def measure(variants: list[Variant], runs: int, warm_up: int) -> None:
    """Alternate the variants, which goes first changing every round; keep all but the warm-up."""
    for number in range(warm_up + runs):
        order = variants if number % 2 == 0 else variants[::-1]
        for variant in order:
            elapsed = variant.run(number)
            if number >= warm_up:
                variant.times.append(elapsed)


def report(variants: list[Variant]) -> None:
    print(f"  {'variant':14} {'median ms':>10} {'p90 ms':>8}")
    for variant in variants:
        print(
            f"  {variant.name:14} {statistics.median(variant.times):10.1f} "
            f"{percentile(variant.times, 90):8.1f}"
        )
    on, off = (statistics.median(variant.times) for variant in variants)
    print(f"  median on / off: {on / off:.3f} (goal: about 1, none measurable)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=40, help="timed runs of each variant (40)")
    parser.add_argument("--warm-up", type=int, default=5, help="uncounted rounds first (5)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    with tempfile.TemporaryDirectory(prefix="thatch-receptor-hook-") as tmp:
        root = Path(tmp)
        project = make_project(root / "project")
        variants = [
            Variant(name, root / f"home-{index}", project, blocked=name == "receptor off")
            for index, name in enumerate(VARIANTS)
        ]
        try:
            for variant in variants:
                variant.client.ensure_running(warm=True)
            print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
            print(f"$ {' '.join(HOOK)} < post_tool_use_failure.json, {args.runs} runs each")
            measure(variants, args.runs, args.warm_up)
            report(variants)
            print(f"load average at end: {os.getloadavg()[0]:.2f}")
        finally:
            for variant in variants:
                variant.client.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
