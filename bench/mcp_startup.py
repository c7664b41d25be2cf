"""How long ``thatch mcp`` takes from spawn to its ``initialize`` answer, beside its floors.

A harness starts the MCP server when a session starts and waits for it
before listing its tools; a server that answers late can leave the first
turn without thatch's tools. One throw-away home and project (an empty git
repository whose origin names the store ``acme/web``); a daemon is started
and warmed with ``DaemonClient.ensure_running(warm=True)`` before the first
timed run, as it runs while a user works.

Each timed run is a whole process:

thatch mcp
    The console script ``thatch`` next to this interpreter, started as
    Claude Code starts it (``CLAUDE_PROJECT_DIR`` set, so the setup of that
    harness is checked too). It relays to an MCP session in the daemon,
    whose server (the official SDK's) answers. The clock runs from spawn
    until the first line on its stdout, the answer to an ``initialize``
    request written at spawn.
--in-process
    ``thatch mcp --in-process``, the same way: the SDK's server in the
    process itself, with the tools on a runtime of its own (what ``thatch
    mcp`` falls back to when no daemon can run).
SDK import
    ``python -c "import anyio, mcp.server.lowlevel, mcp.server.stdio; print()"``,
    spawn until that line: what a server built on the SDK costs before it
    can answer anything in its own process (its exit, which tears down some
    600 modules, is not counted, as it is not for the servers).
python -c pass
    The bare start of the same interpreter, spawn to exit: the floor of any
    Python server.

The four run in rotating order, round after round, so machine noise hits
them alike; warm-up rounds come first and are not counted (the first one
also makes the daemon import the SDK, which it does for its first
session). Every process gets a private bytecode cache
(``PYTHONPYCACHEPREFIX`` in the temporary folder,
``PYTHONDONTWRITEBYTECODE`` unset), filled by the warm-up rounds: an
installed thatch has its modules compiled, and timing the compiler would
measure the wrong thing.

    uv run python bench/mcp_startup.py
    uv run python bench/mcp_startup.py --runs 40
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
from collections.abc import Callable, Sequence
from pathlib import Path

from homes import bench_env, make_project
from measure import percentile
from thatch.daemon.client import DaemonClient

THATCH = Path(sys.executable).with_name("thatch")
SDK_IMPORT = "import anyio, mcp.server.lowlevel, mcp.server.stdio; print(flush=True)"
GOAL_MS = 300.0
#: A protocol version the SDK accepts; the server answers with the one it speaks.
PROTOCOL = "2025-06-18"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "mcp_startup", "version": "1"},
    },
}

#: One timed run: milliseconds, and whether it did what it should.
Outcome = tuple[float, bool]


def first_line(
    argv: Sequence[str], stdin: bytes, env: dict[str, str], cwd: Path
) -> tuple[float, bytes]:
    """Spawn ``argv`` with ``stdin`` written at once; ms until its first line, and the line.

    The process is then left to exit (its stdin closed) outside the clock.
    """
    start = time.perf_counter()
    child = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert child.stdin is not None
    assert child.stdout is not None
    child.stdin.write(stdin)
    child.stdin.flush()
    line = child.stdout.readline()
    elapsed = (time.perf_counter() - start) * 1000
    child.stdin.close()
    child.wait(timeout=30)
    return elapsed, line


def initialize_answer(env: dict[str, str], cwd: Path, *options: str) -> Outcome:
    """``thatch mcp [options]`` until it answers ``initialize`` as the thatch server."""
    elapsed, line = first_line(
        [str(THATCH), "mcp", *options], (json.dumps(INITIALIZE) + "\n").encode(), env, cwd
    )
    try:
        answer = json.loads(line)
    except ValueError:
        return elapsed, False
    info = answer.get("result", {}).get("serverInfo", {})
    return elapsed, answer.get("id") == 1 and info.get("name") == "thatch"


def sdk_import(env: dict[str, str], cwd: Path) -> Outcome:
    """The SDK's server modules imported in a fresh interpreter, until it says so."""
    elapsed, line = first_line([sys.executable, "-c", SDK_IMPORT], b"", env, cwd)
    return elapsed, line == b"\n"


def floor(env: dict[str, str], cwd: Path) -> Outcome:
    """``python -c pass``, spawn to exit."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "pass"], env=env, cwd=cwd, capture_output=True)
    return (time.perf_counter() - start) * 1000, done.returncode == 0


def interleaved(
    contenders: dict[str, Callable[[], Outcome]], runs: int, warmup: int
) -> dict[str, list[Outcome]]:
    """Each contender once per round, rotating which goes first; warm-up rounds dropped."""
    names = list(contenders)
    results: dict[str, list[Outcome]] = {name: [] for name in names}
    for number in range(warmup + runs):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            outcome = contenders[name]()
            if number >= warmup:
                results[name].append(outcome)
    return results


def print_table(results: dict[str, list[Outcome]]) -> None:
    """Median, p90 and max of each contender, and its failed runs."""
    print(f"{'what':<16} | {'runs':>4} {'median':>7} {'p90':>7} {'max':>7} | {'failed':>6}")
    print("-" * 58)
    for name, outcomes in results.items():
        times = [elapsed for elapsed, _ in outcomes]
        failed = sum(not ok for _, ok in outcomes)
        print(
            f"{name:<16} | {len(times):>4} {statistics.median(times):>7.1f} "
            f"{percentile(times, 90):>7.1f} {max(times):>7.1f} | {failed:>6}"
        )
    print(
        "ms of wall time per process from spawn: thatch mcp (relay to the daemon) and "
        "--in-process\nuntil their initialize answer, SDK import until it printed, "
        "python -c pass until it exited\n(failed: no such answer)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Warm a daemon, time the four contenders side by side, print the table and the goal."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs of each contender")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    args = parser.parse_args(argv)

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(prefix="thatch-mcp-startup-") as tmp:
        home, project = Path(tmp) / "home", make_project(Path(tmp) / "web")
        env = bench_env(home, CLAUDE_PROJECT_DIR=str(project))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        client = DaemonClient(str(home), environ=env)
        try:
            started = time.perf_counter()
            client.ensure_running(warm=True)
            print(f"  daemon warm in {time.perf_counter() - started:.1f} s")
            results = interleaved(
                {
                    "thatch mcp": lambda: initialize_answer(env, project),
                    "--in-process": lambda: initialize_answer(env, project, "--in-process"),
                    "SDK import": lambda: sdk_import(env, project),
                    "python -c pass": lambda: floor(env, project),
                },
                args.runs,
                args.warmup,
            )
        finally:
            client.stop()
    print(f"load average at end: {os.getloadavg()[0]:.2f}\n")

    print_table(results)
    print(f'SDK import: {sys.executable} -c "{SDK_IMPORT}"')
    medians = {
        name: statistics.median(elapsed for elapsed, _ in outcomes)
        for name, outcomes in results.items()
    }
    base = medians["python -c pass"]
    relay = medians["thatch mcp"]
    print()
    print(
        f"thatch mcp / python -c pass: {relay / base:.1f}x, {relay - base:.1f} ms beyond it; "
        f"--in-process / thatch mcp: {medians['--in-process'] / relay:.1f}x; "
        f"SDK import / python -c pass: {medians['SDK import'] / base:.1f}x"
    )
    met = "met" if relay <= GOAL_MS else "NOT met"
    print(f"goal thatch mcp: median {relay:.1f} ms <= {GOAL_MS:g} ms: {met}")
    within = "within" if medians["--in-process"] <= GOAL_MS else "beyond"
    print(f"--in-process: median {medians['--in-process']:.1f} ms, {within} the goal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
