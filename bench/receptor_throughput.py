"""Replay throughput: events a second through ``Receptor.feed``, embeddings excluded.

Reads the 40 real runs of the receptor sample (``../shared/data/receptor-sample``,
as ``bench/receptor_outcomes.py`` does), then, for each of ``--rounds``
rounds, feeds every run's events, in order, to a fresh
``thatch_receptor.receptor.Receptor`` (the built-in sources, no embedder) and
times the feeding only: reading the files is not timed. Prints events a second
for the best and the median round (goal: at least 20,000).

``--stages`` adds where an event's time goes, from one more pass: the
parsing of its tool calls into actions (``thatch_receptor.actions.actions_of``,
timed on its own over the same events), each signal source's ``read`` (timed
by a wrapper around it inside the receptor), and the rest of ``feed``
(history, accumulator, layers, pattern, the step). The wrappers cost a little
time of their own, so the stage pass is slower than the timed rounds; and as
a wrapper declares no ``speaks_on`` (``thatch_receptor.traits``), the stage
pass calls every source on every event, where the timed rounds call a
built-in source only on the events it can speak about.

``--parse`` times the parsing alone instead: each round turns every event's
tool calls into actions (``actions_of``) and nothing more, so that under
callgrind (below) the parsing's own instructions an event can be counted
apart from the rest of ``feed``.

``--command`` times the whole command instead, as a process:
``thatch receptor replay DIR --format mini-swe-agent --summary --json
--default-rules`` (the shipped rules, whatever the user's rule file says)
with its default ``--jobs`` against the same with ``--jobs 1``, the two
alternating, ``--rounds`` runs each. ``DIR`` is a throw-away folder holding
the sample's trajectories ``--copies`` times (each copy under its own
``instance_id``, so its sessions stay apart), as one run of 1,522 events is
mostly the interpreter's start; events a second count the start, the reading
and the interpreting too. Both outputs must be the same.

    uv run python -m compileall -q core/src plugins   # without it, imports compile every run
    uv run python bench/receptor_throughput.py
    uv run python bench/receptor_throughput.py --rounds 20 --stages
    uv run python bench/receptor_throughput.py --parse --rounds 20
    uv run python bench/receptor_throughput.py --command --rounds 5

Wall time on a shared machine swings; instructions do not. Under
``valgrind --tool=callgrind`` (``.venv/bin/python``, not ``uv run``, so that
the count is of this process), ``--rounds 3`` less ``--rounds 1``, divided
by 3,044 (two rounds of 1,522 events), is an event's cost in instructions.
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
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from receptor_sample import SAMPLE, Run, read_runs
from thatch_receptor.actions import actions_of
from thatch_receptor.receptor import Receptor
from thatch_receptor.signals import builtin_sources

if TYPE_CHECKING:
    from thatch.plugin import Event, EventHistory, SignalReading, SignalSource

GOAL = 20_000


def replay(runs: Sequence[Run], sources: Sequence[SignalSource] | None = None) -> float:
    """Seconds to feed every run to a fresh receptor (of ``sources``, default the built-ins)."""
    elapsed = 0.0
    for run in runs:
        receptor = Receptor(sources=sources)
        start = time.perf_counter()
        for event in run.events:
            receptor.feed(event)
        elapsed += time.perf_counter() - start
    return elapsed


class TimedSource:
    """A signal source that adds the seconds its inner source's ``read`` takes to ``seconds``."""

    def __init__(self, source: SignalSource) -> None:
        self.name = source.name
        self.inner = source
        self.seconds = 0.0

    def read(self, event: Event, history: EventHistory) -> Iterable[SignalReading]:
        start = time.perf_counter()
        readings = list(self.inner.read(event, history))
        self.seconds += time.perf_counter() - start
        return readings


def parse_seconds(runs: Sequence[Run]) -> float:
    """Seconds to turn every event's tool calls into actions."""
    start = time.perf_counter()
    for run in runs:
        for event in run.events:
            actions_of(event)
    return time.perf_counter() - start


def print_stages(runs: Sequence[Run], events: int) -> None:
    """Microseconds an event spends in parsing, in each source and in the rest of feed."""
    parsing = parse_seconds(runs)
    timed = [TimedSource(source) for source in builtin_sources()]
    total = replay(runs, timed)
    reading = sum(source.seconds for source in timed)
    print(f"\nstages (one pass with timed sources: {events / total:,.0f} events/s)")
    print(f"  {'stage':30} {'µs/event':>9} {'share':>6}")
    rows = [("parsing into actions", parsing)]
    rows += [(f"source {source.name}", source.seconds) for source in timed]
    rows.append(("rest of feed", total - reading - parsing))
    for name, seconds in rows:
        print(f"  {name:30} {seconds / events * 1e6:9.1f} {seconds / total:6.0%}")


def copy_sample(sample: Path, target: Path, copies: int) -> None:
    """The sample's trajectories ``copies`` times in ``target``, each copy its own sessions."""
    for file in sorted((sample / "trajs").glob("*.traj.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        name = file.name.removesuffix(".traj.json")
        for copy in range(copies):
            data["instance_id"] = f"{name}-copy{copy}"
            path = target / f"{name}-copy{copy}.traj.json"
            path.write_text(json.dumps(data), encoding="utf-8")


def time_command(command: list[str]) -> tuple[float, str]:
    """Seconds the command takes as a whole process, and its output."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr}")
    return elapsed, done.stdout


def print_command_rates(sample: Path, copies: int, rounds: int, events: int) -> None:
    """Events a second through the whole replay command, default jobs against ``--jobs 1``."""
    thatch = str(Path(sys.executable).with_name("thatch"))
    with tempfile.TemporaryDirectory(prefix="receptor-throughput-") as folder:
        copy_sample(sample, Path(folder), copies)
        base = [thatch, "receptor", "replay", folder, "--format", "mini-swe-agent"]
        base.append("--default-rules")  # the shipped rules: the same work on every machine
        variants = {"default jobs": [*base, "--summary", "--json"]}
        variants["--jobs 1"] = [*variants["default jobs"], "--jobs", "1"]
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        outputs: set[str] = set()
        for turn in range(rounds + 1):  # the first round warms the caches, uncounted
            order = list(variants) if turn % 2 else list(reversed(variants))
            for name in order:
                elapsed, output = time_command(variants[name])
                outputs.add(output)
                if turn:
                    seconds[name].append(elapsed)
    if len(outputs) != 1:
        raise SystemExit("the outputs of default jobs and --jobs 1 differ")
    total = events * copies
    print(f"\nthe whole command on {total:,} events ({copies} copies), {rounds} runs each")
    for name, times in seconds.items():
        print(
            f"  {name:13} best {total / min(times):8,.0f} events/s, "
            f"median {total / statistics.median(times):8,.0f} ({statistics.median(times):.2f} s)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=SAMPLE, help="the sample folder")
    parser.add_argument("--rounds", type=int, default=10, help="timed rounds (10)")
    parser.add_argument("--stages", action="store_true", help="add the per-stage breakdown")
    parser.add_argument(
        "--parse", action="store_true", help="time the parsing into actions alone instead"
    )
    parser.add_argument(
        "--command", action="store_true", help="time the whole replay command instead"
    )
    parser.add_argument("--copies", type=int, default=10, help="sample copies for --command (10)")
    args = parser.parse_args()
    if args.rounds < 1 or args.copies < 1:
        parser.error("--rounds and --copies must be at least 1")

    runs = read_runs(args.data)
    events = sum(len(run.events) for run in runs)
    print(f"{len(runs)} runs, {events:,} events; load {os.getloadavg()[0]:.2f}")
    if args.command:
        print_command_rates(args.data, args.copies, args.rounds, events)
        return 0
    feed = parse_seconds if args.parse else replay
    feed(runs)  # warm-up: imports, caches, the first allocations
    rates = [events / feed(runs) for _ in range(args.rounds)]
    what = "parsing alone" if args.parse else f"goal: {GOAL:,}"
    print(
        f"events/s over {args.rounds} rounds: best {max(rates):,.0f}, "
        f"median {statistics.median(rates):,.0f} ({what})"
    )
    if args.stages:
        print_stages(runs, events)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
