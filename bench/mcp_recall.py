"""``memory_recall`` round trips through a real MCP client session, beside recall itself.

For each size, a throw-away home and project (an empty git repository whose
origin names the store ``acme/web``) get that many memories: the 121 real
ones of bench/data, embedded by the model, and synthetic ones written
straight to storage (see ``fill_home`` in homes.py). Then three ways of
recalling run side by side, one query at a time, the order rotating:

daemon
    ``thatch mcp`` (the console script next to this interpreter) driven by
    the ``mcp`` SDK's stdio client (``stdio_client`` + ``ClientSession``);
    the tool runs in the shared daemon, started and warmed beforehand.
in-process
    ``thatch mcp --in-process``: the same server, the tool run in its own
    process (no socket hop, but a model per session).
recall
    ``Thatch.recall`` called in this process, the work the daemon does for
    the tool: what is left of a round trip after this is the MCP and socket
    overhead.
ping
    One ``ping`` request to the daemon from this process
    (``DaemonClient.request``): the cost of one socket round trip, for scale
    (``DaemonClient.call``, which ``thatch mcp`` uses, pings before each call).

Each call is ``memory_recall(query)`` with its defaults (the project's store
and global, limit 5, recall counted), or the same ``Thatch.recall``. The
queries are the texts of bench/data/queries.jsonl, cycled; each is embedded
anew (the daemon remembers only its last 32 prompts). Warm-up calls load the
in-process server's model and are not counted.

    uv run python bench/mcp_recall.py
    uv run python bench/mcp_recall.py --sizes 1000,10000,100000 --queries 300
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import numpy as np
import thatch
from data_sets import DATA, read_jsonl
from homes import bench_env, fill_home, make_project
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from measure import percentile
from thatch.daemon.client import DaemonClient

THATCH = Path(sys.executable).with_name("thatch")
MODES = ("daemon", "in-process", "recall", "ping")
WARMUP = 20


@dataclass
class Timings:
    """Milliseconds per call of each mode, and how many hits each call returned."""

    size: int
    times: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in MODES})
    hits: dict[str, list[int]] = field(default_factory=lambda: {m: [] for m in MODES})
    errors: int = 0


async def tool_recall(session: ClientSession, query: str) -> tuple[int, bool]:
    """One ``memory_recall`` call: the number of hits and whether it was an error."""
    result = await session.call_tool("memory_recall", {"query": query})
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    if result.is_error:
        return 0, True
    return len(json.loads(text)), False


async def measure(
    sessions: dict[str, ClientSession],
    recall: Callable[[str], int],
    ping: Callable[[], object],
    queries: Sequence[str],
    size: int,
) -> Timings:
    """Every query in every mode, rotating which mode goes first; warm-up calls dropped."""
    timings = Timings(size)
    for number, query in enumerate(queries):
        shift = number % len(MODES)
        for mode in MODES[shift:] + MODES[:shift]:
            start = time.perf_counter()
            if mode == "recall":
                hits, failed = recall(query), False
            elif mode == "ping":
                hits, failed = 0, not ping()
            else:
                hits, failed = await tool_recall(sessions[mode], query)
            elapsed = (time.perf_counter() - start) * 1000
            if number >= WARMUP:
                timings.times[mode].append(elapsed)
                timings.hits[mode].append(hits)
                timings.errors += failed
    return timings


async def run_size(
    home: Path, project: Path, client: DaemonClient, queries: Sequence[str], size: int
) -> Timings:
    """Open both MCP sessions and this process's Thatch, then time every query."""
    env = bench_env(home, CLAUDE_PROJECT_DIR=str(project))
    servers = {
        "daemon": StdioServerParameters(command=str(THATCH), args=["mcp"], env=env, cwd=project),
        "in-process": StdioServerParameters(
            command=str(THATCH), args=["mcp", "--in-process"], env=env, cwd=project
        ),
    }
    async with contextlib.AsyncExitStack() as stack:
        sessions = {}
        for mode, params in servers.items():
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions[mode] = session
        th = stack.enter_context(thatch.open(home=home, cwd=project, environ=env))
        return await measure(
            sessions, lambda q: len(th.recall(q, limit=5)), client.running, queries, size
        )


def one_size(size: int, queries: Sequence[str], rng: np.random.Generator) -> Timings:
    """Fill a fresh home with ``size`` memories, warm its daemon, and time the queries."""
    with tempfile.TemporaryDirectory(prefix="thatch-mcp-recall-") as tmp:
        home, project = Path(tmp) / "home", make_project(Path(tmp) / "web")
        for note in fill_home(home, project, size, 0, rng):
            print(f"  {note}")
        client = DaemonClient(str(home), environ=bench_env(home))
        try:
            started = time.perf_counter()
            client.ensure_running(warm=True)
            print(f"  daemon warm in {time.perf_counter() - started:.1f} s")
            return anyio.run(run_size, home, project, client, queries, size)
        finally:
            client.stop()


def print_rows(rows: Sequence[Timings]) -> None:
    """The latency table and the overhead of the MCP round trip over recall itself."""
    print(f"{'memories':>9} {'mode':<11} | {'p50':>7} {'p95':>7} {'mean':>7} | {'hits':>5}")
    print("-" * 56)
    for r in rows:
        for mode in MODES:
            times = r.times[mode]
            hits = "-" if mode == "ping" else f"{float(np.mean(r.hits[mode])):.2f}"
            print(
                f"{r.size:>9,} {mode:<11} | {percentile(times, 50):>7.2f} "
                f"{percentile(times, 95):>7.2f} {float(np.mean(times)):>7.2f} | {hits:>5}"
            )
    print(
        "ms per call; daemon = MCP client -> thatch mcp -> daemon socket; in-process = MCP "
        "client ->\nthatch mcp --in-process; recall = Thatch.recall in this process; ping = "
        "one ping request to\nthe daemon from this process; hits = mean memories returned"
    )
    for r in rows:
        recall = percentile(r.times["recall"], 50)
        daemon = percentile(r.times["daemon"], 50)
        local = percentile(r.times["in-process"], 50)
        print(
            f"at {r.size:,}: MCP round trip p50 {daemon:.2f} ms (daemon), {local:.2f} ms "
            f"(in-process); overhead over recall p50 {recall:.2f} ms: {daemon - recall:.2f} ms "
            f"(daemon), {local - recall:.2f} ms (in-process); tool errors: {r.errors}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Time MCP recall round trips at each size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated memory counts")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    rng = np.random.default_rng(args.seed)
    texts = [str(row["query"]) for row in read_jsonl(DATA / "queries.jsonl")]
    queries = [texts[i % len(texts)] for i in range(WARMUP + args.queries)]

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    rows = []
    for size in sizes:
        print(f"{size:,} memories:")
        rows.append(one_size(size, queries, rng))
    print(f"load average at end: {os.getloadavg()[0]:.2f}\n")
    print_rows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
