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

``--variant NAME=SETTINGS`` adds a daemon to compare beside the shipped one,
each on its own copy of the filled home, all in the same rounds. SETTINGS is
a comma-separated list of ``VAR=VALUE`` (an environment variable of that
daemon), ``module:NAME=VALUE`` (a module constant, a Python literal, set
in that daemon before it starts) and ``config:TABLE.KEY=VALUE`` (a key of the
variant's config file, a TOML value), e.g. ``--variant
one-thread=thatch_fastembed.embedder:QUERY_THREADS=1`` or ``--variant
float32=config:embedder.fastembed.query_products='"float32"'``. For each daemon the
table gives the hook, its request alone and the client's part: the hook's
median minus its request's, and that minus the baseline's (what the hook
process costs beyond starting the interpreter), and CPU time: the hook
process's and the daemon's per flush, which a loaded machine inflates less
than wall time. ``--exit-at-once`` also times the shipped hook ending with
``os._exit`` (no interpreter clean-up), in sessions of its own; since every
hook command ends that way itself (``thatch.cli.console_main``), the two
now run the same code, and the option measures only the spread between
two sets of runs of it.
``--filled DIR`` keeps the filled home for the next run.

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
    uv run python bench/hook_latency.py --no-cold --variant blas-1=OPENBLAS_NUM_THREADS=1
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import resource
import shutil
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
from homes import append_config, bench_env, fill_home, make_project
from hook_payloads import PROMPT, prompt_payload, tool_payload
from measure import percentile
from thatch import daemon_lock, rundir
from thatch.daemon.client import DaemonClient
from thatch.decisions.nudge import HEADER as DECISION_HEADER
from thatch.nudges.recall import HEADER as RECALL_HEADER

THATCH = Path(sys.executable).with_name("thatch")
BASELINE = [sys.executable, "-c", "import json, socket"]
#: The console script's work, ending without the interpreter's clean-up (--exit-at-once).
EXIT_AT_ONCE = [
    sys.executable,
    "-c",
    "import os, sys\n"
    "sys.argv = ['thatch', 'flush-tools']\n"
    "from thatch.cli import console_main\n"
    "try:\n"
    "    console_main()\n"
    "except SystemExit as end:\n"
    "    os._exit(end.code or 0)\n",
]
#: The session whose tool calls are spooled while no daemon runs.
COLD_SESSION = "bench-buffer-cold"
GOAL_RATIO = 1.5
GOAL_NO_DAEMON_MS = 300.0
#: Pasted after the bench prompt by --long-prompt: a CI log, 330 word pieces in all.
CI_LOG = (
    " Here is the end of the CI log from the last failing run:\n"
    " FAIL  src/checkout/total.test.ts > checkout total > applies the discount before tax\n"
    "AssertionError: expected 107.99 to be 108.00 // Object.is equality\n"
    " - Expected  108.00\n"
    " + Received  107.99\n"
    " ❯ src/checkout/total.test.ts:42:31\n"
    '     40|     const cart = buildCart([{ sku: "A-1", price: 19.99, qty: 3 }, { '
    'sku: "B-7", price: 49.99, qty: 1 }])\n'
    '     41|     const total = await computeTotal(cart, { discount: "SPRING10", region: "DE" })\n'
    "     42|     expect(total.amount).toBe(108.00)\n"
    " ⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯\n"
    " Test Files  1 failed | 87 passed (88)\n"
    "      Tests  1 failed | 612 passed (613)\n"
    "   Start at  09:14:02\n"
    "   Duration  41.37s (transform 2.10s, setup 9.80s, collect 12.44s, tests "
    "18.02s, environment 21.19s, prepare 6.33s)\n"
    "Error: Process completed with exit code 1.\n"
    "The exchange-rate mock in src/test/setup.ts returns a rate fetched at import "
    "time, and the tax table is loaded lazily on first use.\n"
)
#: The first command-line word of this script run as a variant's daemon (see serve_variant).
SERVE_VARIANT = "--serve-variant"
SHIPPED = "shipped"


#: One timed run: milliseconds, exit status (0 = fine), what it printed, CPU ms of its process.
Outcome = tuple[float, int, str, float]
#: A contender: round number -> its outcome.
Run = Callable[[int], Outcome]


@dataclass
class Runs:
    """Wall times (ms) of one command and what its runs printed and returned."""

    name: str
    times: list[float] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)
    #: CPU ms (user + system) of each run's process (0 for a request from this process).
    cpu: list[float] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        """Record one run."""
        elapsed, code, printed, cpu = outcome
        self.times.append(elapsed)
        self.cpu.append(cpu)
        self.codes.append(code)
        self.printed.append(printed)


def run_once(argv: Sequence[str], stdin: str, env: dict[str, str], cwd: Path) -> Outcome:
    """One process, from start to exit, with ``stdin`` as its input."""
    before = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = (time.perf_counter() - start) * 1000
    return elapsed, done.returncode, done.stdout, _children_cpu() - before


def _children_cpu() -> float:
    """CPU ms of this process's waited-for children so far (the runs are one at a time)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def daemon_cpu(pid: int | None) -> float:
    """CPU ms the process ``pid`` has run so far, its ended threads' included; nan without /proc.

    In clock ticks (10 ms here): the daemon serves each connection on a
    thread that ends with it, so only the process's own count has them all.
    """
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    # utime and stime, fields 14 and 15 of proc(5), after the name's closing parenthesis.
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


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
    return elapsed, 0 if answer.get("ok") else 1, str(answer.get("output", "")), 0.0


def interleaved(
    contenders: Sequence[tuple[Runs, Run]],
    runs: int,
    warmup: int,
    pause: float = 0.0,
    after_round: Callable[[bool], None] = lambda counted: None,
) -> None:
    """Run each contender once per round, rotating which goes first; warm-up rounds dropped.

    ``pause`` seconds before each run let what one contender leaves running
    (a daemon's threads spinning down) end before the next one starts.
    ``after_round(counted)`` is called once before the first round and after each.
    """
    after_round(False)
    for number in range(warmup + runs):
        shift = number % len(contenders)
        for runs_of, run in [*contenders[shift:], *contenders[:shift]]:
            if pause:
                time.sleep(pause)
            outcome = run(number)
            if number >= warmup:
                runs_of.add(outcome)
        after_round(number >= warmup)


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


@dataclass
class Variant:
    """One daemon under test: its settings, and its own copy of the filled home once started."""

    name: str
    #: Environment variables of the daemon process.
    environ: dict[str, str] = field(default_factory=dict)
    #: (module, constant) -> value, set in the daemon process before it starts.
    patches: dict[tuple[str, str], Any] = field(default_factory=dict)
    #: (table, key) -> TOML value, written to the variant's config file before it starts.
    config: dict[tuple[str, str], str] = field(default_factory=dict)
    home: Path = Path()
    client: DaemonClient | None = None

    @classmethod
    def parse(cls, spec: str) -> Variant:
        """``NAME=VAR=VALUE,module:NAME=VALUE,...`` (see the module docstring)."""
        name, _, settings = spec.partition("=")
        variant = cls(name)
        for setting in filter(None, settings.split(",")):
            key, _, value = setting.partition("=")
            module, _, constant = key.rpartition(":")
            if module == "config":
                table, _, name = constant.rpartition(".")
                variant.config[(table, name)] = value
            elif module:
                variant.patches[(module, constant)] = ast.literal_eval(value)
            else:
                variant.environ[key] = value
        return variant

    def start(self, env: dict[str, str]) -> float:
        """Start this variant's daemon and wait until it is warm; returns the seconds it took."""
        started = time.perf_counter()
        for (table, name), value in self.config.items():
            append_config(self.home, table, {name: value})
        daemon_env = {**env, **self.environ}
        self.client = DaemonClient(str(self.home), environ=daemon_env)
        if self.patches:
            # This script runs the daemon itself (serve_variant); ensure_running
            # then finds the lock held and only waits for it to be warm.
            patches = json.dumps([[m, c, repr(v)] for (m, c), v in self.patches.items()])
            subprocess.Popen(
                [sys.executable, __file__, SERVE_VARIANT, patches],
                env=daemon_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
            lock_path = rundir.locate(daemon_env, home=str(self.home)).lock_path
            deadline = time.monotonic() + 30
            while not daemon_lock.is_held(lock_path) and time.monotonic() < deadline:
                time.sleep(0.05)
        self.client.ensure_running(warm=True)
        return time.perf_counter() - started


def serve_variant(patches: str) -> int:
    """Run the daemon (``thatch daemon run``) with a variant's constants set first."""
    from thatch.cli import main as thatch_main

    for module, constant, value in json.loads(patches):
        setattr(importlib.import_module(module), constant, ast.literal_eval(value))
    return thatch_main(["daemon", "run"])


@dataclass
class Measured:
    """The warm-daemon runs of one variant."""

    variant: Variant
    flush: Runs
    alone: Runs
    #: CPU ms of the daemon process in each round, whatever its threads ran after
    #: answering included.
    daemon_cpu: list[float] = field(default_factory=list)
    #: Flushes it serves a round: the hook's, the request's (and --exit-at-once's).
    flushes: int = 2


def warm_runs(
    variants: Sequence[Variant], env: dict[str, str], project: Path, args: argparse.Namespace
) -> tuple[list[Measured], Runs, list[Runs]]:
    """Each variant's flush-tools and its request alone, beside one baseline; then
    buffer-tool (the shipped daemon) and its baseline. The last of the returned
    runs is the shipped flush-tools ending at once (empty without --exit-at-once)."""
    total = args.warmup + args.runs
    # A round's payload (a new session, a new prompt) serves every hook and the baseline.
    prompts = [prompt_payload(project, args.prompt, n) for n in range(total)]
    # The requests alone get prompts no process sent, so none is remembered.
    fresh = [prompt_payload(project, args.prompt, total + n) for n in range(total)]
    flush_base = Runs("baseline")
    measured: list[Measured] = []
    contenders: list[tuple[Runs, Run]] = [(flush_base, process(BASELINE, prompts, env, project))]
    for variant in variants:
        assert variant.client is not None
        m = Measured(variant, Runs(f"flush-tools {variant.name}"), Runs("request"))
        measured.append(m)
        hook_env = {**env, "THATCH_HOME": str(variant.home)}
        client = variant.client
        contenders += [
            (m.flush, process([str(THATCH), "flush-tools"], prompts, hook_env, project)),
            (m.alone, lambda n, c=client: request_alone(c, project, fresh[n])),
        ]
    at_once = Runs("flush-tools, os._exit")
    if args.exit_at_once:
        # Sessions of their own: the shipped hook's would have seen the memories already.
        own = [prompt_payload(project, args.prompt, 2 * total + n) for n in range(total)]
        shipped_home = {**env, "THATCH_HOME": str(variants[0].home)}
        contenders.append((at_once, process(EXIT_AT_ONCE, own, shipped_home, project)))
        measured[0].flushes += 1
    pids = [m.variant.client.holder_pid() if m.variant.client else None for m in measured]
    last = [daemon_cpu(pid) for pid in pids]

    def sample(counted: bool) -> None:
        for index, (m, pid) in enumerate(zip(measured, pids, strict=True)):
            now = daemon_cpu(pid)
            if counted:
                m.daemon_cpu.append(now - last[index])
            last[index] = now

    interleaved(contenders, args.runs, args.warmup, args.pause / 1000, sample)
    tools = [tool_payload(project, "bench-buffer-warm", n) for n in range(total)]
    buffer, buffer_base = Runs("buffer-tool"), Runs("baseline")
    shipped_env = {**env, "THATCH_HOME": str(variants[0].home)}
    interleaved(
        [
            (buffer, process([str(THATCH), "buffer-tool"], tools, shipped_env, project)),
            (buffer_base, process(BASELINE, tools, env, project)),
        ],
        args.runs,
        args.warmup,
        args.pause / 1000,
    )
    return measured, flush_base, [buffer, buffer_base, at_once]


def print_variants(measured: Sequence[Measured], base: Runs) -> None:
    """Per daemon: the hook's ratio, its request alone, and the client's part."""
    base_ms, base_cpu = statistics.median(base.times), statistics.median(base.cpu)
    print(
        f"{'daemon':<16} | {'flush':>6} {'ratio':>5} | {'request':>7} {'p95':>6} | "
        f"{'client':>6} {'- base':>6} | {'cpu hook':>8} {'daemon':>6} {'ratio':>5}"
    )
    print("-" * 88)
    for m in measured:
        flush_ms, alone_ms = statistics.median(m.flush.times), statistics.median(m.alone.times)
        # Clock ticks are coarser than a flush: their mean over the rounds, per flush.
        hook_cpu = statistics.median(m.flush.cpu)
        daemon = statistics.mean(m.daemon_cpu) / m.flushes
        print(
            f"{m.variant.name:<16} | {flush_ms:>6.1f} {flush_ms / base_ms:>5.2f} | "
            f"{alone_ms:>7.1f} {percentile(m.alone.times, 95):>6.1f} | "
            f"{flush_ms - alone_ms:>6.1f} {flush_ms - alone_ms - base_ms:>6.1f} | "
            f"{hook_cpu:>8.1f} {daemon:>6.1f} {(hook_cpu + daemon) / base_cpu:>5.2f}"
        )
    print(
        f"medians, ms; baseline {base_ms:.1f} ms wall, {base_cpu:.1f} ms CPU. client: flush-tools "
        "minus its request alone;\n- base: that minus the baseline (what the hook process adds "
        "to an interpreter start);\ncpu: CPU time of the hook process (median), and of the daemon "
        "per flush (mean), its threads'\nwork after answering included; ratio: their sum over the "
        "baseline's CPU time"
    )
    for m in measured:
        if m.variant.environ or m.variant.patches:
            settings = [f"{k}={v}" for k, v in m.variant.environ.items()]
            settings += [f"{mod}:{c}={v!r}" for (mod, c), v in m.variant.patches.items()]
            print(f"  {m.variant.name}: {', '.join(settings)}")


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
    """Fill a home, time the hooks against warm daemons and against none, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--matchers", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=40, help="timed runs of each command")
    parser.add_argument("--warmup", type=int, default=5, help="untimed rounds first")
    parser.add_argument("--prompt", default=PROMPT)
    parser.add_argument(
        "--long-prompt",
        action="store_true",
        help="the prompt followed by a pasted CI log (330 word pieces with the bench prompt)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", action="store_true", help="print the last flush's output")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=SETTINGS",
        help="another daemon beside the shipped one (see the module docstring)",
    )
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        metavar="MS",
        help="idle time before each warm-daemon run, as between a user's prompts",
    )
    parser.add_argument("--no-cold", action="store_true", help="skip the no-daemon runs")
    parser.add_argument(
        "--exit-at-once",
        action="store_true",
        help="also time flush-tools ending with os._exit, skipping the interpreter's clean-up",
    )
    parser.add_argument(
        "--filled",
        type=Path,
        metavar="DIR",
        help="keep the filled home in DIR, and copy it from there on later runs "
        "(same --memories, --matchers and --seed)",
    )
    args = parser.parse_args(argv)
    if args.long_prompt:
        args.prompt += CI_LOG
    rng = np.random.default_rng(args.seed)
    variants = [Variant(SHIPPED), *(Variant.parse(spec) for spec in args.variant)]

    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(prefix="thatch-hooks-") as tmp:
        home, project = Path(tmp) / "home", make_project(Path(tmp) / "web")
        if args.filled is not None and args.filled.exists():
            shutil.copytree(args.filled, home, symlinks=True)
            print(f"  home copied from {args.filled}")
        else:
            for note in fill_home(home, project, args.memories, args.matchers, rng):
                print(f"  {note}")
            if args.filled is not None:
                shutil.copytree(home, args.filled, symlinks=True)
        env = bench_env(home, CLAUDE_PROJECT_DIR=str(project))
        for number, variant in enumerate(variants):
            variant.home = home if number == 0 else Path(tmp) / f"home-{number}"
            if number:
                shutil.copytree(home, variant.home, symlinks=True)
        client = DaemonClient(str(home), environ=env)
        try:
            for variant in variants:
                took = variant.start({**env, "THATCH_HOME": str(variant.home)})
                print(f"  daemon {variant.name} warm in {took:.1f} s")
            measured, flush_base, (buffer, buffer_base, at_once) = warm_runs(
                variants, env, project, args
            )
            for variant in variants:
                assert variant.client is not None
                variant.client.stop()
            if not args.no_cold:
                before = spooled(home)
                cold_flush, cold_buffer = cold_runs(env, project, args)
                in_spool = spooled(home) - before
                # Back again, the daemon must take every spooled tool call, once.
                client.ensure_running(warm=True)
                status = wait_for_replay(client)
                queued = {s["session_id"]: s["pending"] for s in status.get("sessions", [])}
        finally:
            for variant in variants:
                if variant.client is not None:
                    variant.client.stop()
            client.stop()
    print(f"load average at end: {os.getloadavg()[0]:.2f}\n")

    flush, alone = measured[0].flush, measured[0].alone
    rows = [
        ("warm daemon: flush-tools", flush),
        ("  baseline, interleaved", flush_base),
        ("  its daemon request alone", alone),
        *([("  the same, ending with os._exit", at_once)] if at_once.times else []),
        ("warm daemon: buffer-tool", buffer),
        ("  baseline, interleaved", buffer_base),
    ]
    if not args.no_cold:
        rows += [("no daemon: flush-tools", cold_flush), ("no daemon: buffer-tool", cold_buffer)]
    print_table(rows)
    print(f'baseline: {sys.executable} -c "{BASELINE[2]}"\n')
    print_variants(measured, flush_base)
    print()
    sizes = [len(text) for text in flush.printed]
    recall = sum(RECALL_HEADER in text for text in flush.printed)
    decisions = sum(DECISION_HEADER in text for text in flush.printed)
    print(
        f"flush-tools injected {statistics.median(sizes):.0f} characters (median; "
        f"min {min(sizes)}, max {max(sizes)}); recall nudge in {recall}/{len(sizes)} runs, "
        f"decision nudge in {decisions}/{len(sizes)}"
    )
    for m in measured[1:]:
        pairs = zip(m.flush.printed, flush.printed, strict=True)
        same = sum(_items(a) == _items(b) for a, b in pairs)
        print(
            f"  {m.variant.name}: the same memories and predictions as the shipped daemon "
            f"in {same}/{len(sizes)} runs"
        )
    if args.show:
        print(f"--- output of the last flush-tools ---\n{flush.printed[-1]}---")
    if not args.no_cold:
        printed_cold = sum(bool(text.strip()) for text in cold_flush.printed + cold_buffer.printed)
        events = len(cold_flush.times) + len(cold_buffer.times)
        print(
            f"no daemon: {in_spool} of {events} events spooled; {printed_cold} runs printed "
            f"anything; after restart the daemon queued {queued.get(COLD_SESSION, 0)} of "
            f"{len(cold_buffer.times)} spooled tool calls"
        )
    print()
    print(ratio_line(flush, flush_base))
    for m in measured[1:]:
        print(f"  {ratio_line(m.flush, flush_base)}")
    if at_once.times:
        print(
            f"  {ratio_line(at_once, flush_base)} (CPU {statistics.median(at_once.cpu):.1f} ms, "
            f"flush-tools {statistics.median(flush.cpu):.1f} ms)"
        )
    print(ratio_line(buffer, buffer_base))
    if args.no_cold:
        return 0
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


def _items(output: str) -> list[str]:
    """The listed memories and predictions of a flush's output (not its framing's nonce)."""
    return [line for line in output.splitlines() if line.startswith("- ")]


if __name__ == "__main__":
    if sys.argv[1:2] == [SERVE_VARIANT]:
        raise SystemExit(serve_variant(sys.argv[2]))
    raise SystemExit(main())
