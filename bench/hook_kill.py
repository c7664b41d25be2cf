"""Hook events while the daemon is killed with kill -9 again and again, on a busy machine.

One throw-away home and project (an empty git repository whose origin names
the store ``acme/web``). A daemon is started and warmed; two busy loops
(``python -c "while True: pass"``) take the machine's two cores; then
``--events`` ``thatch buffer-tool`` processes run, ``--parallel`` at a time,
each with its own PostToolUse payload (its own tool-use id and command) of
one session, and the console script found on PATH, as a harness starts it.
The daemon is killed with SIGKILL ``--kills`` times, evenly spread over the
events (every ~100 events by default); the hooks start it again themselves
(``THATCH_NO_AUTOSTART`` is unset), and each kill waits until a daemon
answers, so every kill hits a live one.

Once every hook has exited the busy loops stop, a daemon is made sure of,
and the script waits until the spool folder is empty (the daemon replays
what the hooks spooled while it was down). The daemon is then stopped and
the session store (``sessions.db``) is read directly: an event is kept when
its tool-use id is in the session's queue, doubled when it is there more
than once. Goal: every event kept, none doubled.

    uv run python bench/hook_kill.py
    uv run python bench/hook_kill.py --events 60 --kills 2
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from data_sets import ROOT
from homes import bench_env, make_project
from measure import percentile
from thatch import daemon_lock as lock
from thatch import rundir
from thatch.daemon.client import DaemonClient, DaemonUnavailableError

SCRIPT_DIR = Path(sys.executable).parent
PAYLOAD = ROOT / "tests" / "data" / "claude" / "post_tool_use.json"
SESSION = "bench-kill"
BUSY_LOOP = [sys.executable, "-c", "while True: pass"]
#: How long the end waits for the daemon to replay the spool.
SETTLE_SECONDS = 300.0


@dataclass
class Hooks:
    """What the hook processes did: wall time (ms), exit status, whether they printed."""

    times: list[float] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    printed: int = 0
    #: What the hooks that failed or printed wrote, for the report (the first few).
    complaints: list[str] = field(default_factory=list)
    done: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, elapsed_ms: float, code: int, output: str) -> None:
        """Record one finished hook: its time, status and everything it printed."""
        with self.lock:
            self.times.append(elapsed_ms)
            self.codes.append(code)
            self.printed += bool(output)
            if (code or output) and len(self.complaints) < 3:
                self.complaints.append(f"exit {code}: {output[-1500:]}")
            self.done += 1


def call_id(number: int) -> str:
    """The tool-use id of event ``number``: what the session queue is searched for."""
    return f"toolu_kill_{number:05d}"


def payload(project: Path, number: int) -> str:
    """The recorded PostToolUse payload, made event ``number``'s own."""
    data = json.loads(PAYLOAD.read_text(encoding="utf-8"))
    data.update(
        session_id=SESSION,
        cwd=str(project),
        tool_use_id=call_id(number),
        tool_name="Bash",
        tool_input={"command": f"echo event {number}"},
        tool_response={"stdout": f"event {number}\n", "stderr": ""},
    )
    return json.dumps(data)


def run_hook(env: dict[str, str], project: Path, number: int, hooks: Hooks) -> None:
    """One ``thatch buffer-tool`` process, found on PATH, with event ``number``."""
    started = time.perf_counter()
    done = subprocess.run(
        ["thatch", "buffer-tool"],
        input=payload(project, number),
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=120,
        check=False,
    )
    elapsed = (time.perf_counter() - started) * 1000
    hooks.add(elapsed, done.returncode, (done.stdout + done.stderr).strip())


def daemon_pid(client: DaemonClient) -> int | None:
    """The pid of the daemon holding the lock, if a live one does."""
    if not lock.is_held(client.located.lock_path):
        return None
    try:
        pid = int(Path(client.located.pid_path).read_text(encoding="ascii"))
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if b"daemon" in cmdline else None


def kill_when_up(client: DaemonClient, timeout: float = 60.0) -> int | None:
    """Wait until a daemon answers, then SIGKILL it; its pid (None if none came)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = daemon_pid(client)
        if pid is not None and client.running():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            return pid
        time.sleep(0.05)
    return None


def killer(
    client: DaemonClient, hooks: Hooks, marks: Sequence[int], killed: list[int | None]
) -> None:
    """Kill the daemon each time the count of finished hooks passes a mark."""
    for mark in marks:
        while hooks.done < mark:
            time.sleep(0.01)
        killed.append(kill_when_up(client))


def kill_marks(events: int, kills: int) -> list[int]:
    """After how many finished events each kill comes, evenly spread."""
    return [round(events * (n + 1) / (kills + 1)) for n in range(kills)]


def spool_files(home: Path) -> dict[str, int]:
    """Files left in the spool folder, by kind: waiting, failed to replay, half-written."""
    folder = Path(rundir.locate({}, home=str(home)).spool_dir)
    names = os.listdir(folder) if folder.is_dir() else []
    return {
        "waiting": sum(name.endswith(".json") for name in names),
        "failed": sum(name.endswith(".failed") for name in names),
        "half-written": sum(name.endswith(".tmp") for name in names),
    }


def settle(client: DaemonClient, home: Path) -> float:
    """Make sure a daemon runs and wait until the spool is replayed; seconds it took."""
    started = time.monotonic()
    client.ensure_running(warm=True)
    while time.monotonic() - started < SETTLE_SECONDS:
        if spool_files(home)["waiting"] == 0:
            break
        time.sleep(0.2)
    return time.monotonic() - started


def stop_daemons(client: DaemonClient) -> None:
    """Stop the daemon, and any spare a hook started that takes the lock after it.

    A spare waits for the lock (up to the daemon's lock wait) and serves the
    moment the first one lets go, so one stop may not leave the lock free.
    """
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(DaemonUnavailableError):
            client.stop(timeout=5)
        time.sleep(0.5)
        if not lock.is_held(client.located.lock_path):
            return


def queued(home: Path) -> dict[str, int]:
    """How many times each tool-use id is in the session's queue (read from sessions.db)."""
    path = rundir.locate({}, home=str(home)).sessions_db
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT call_id, COUNT(*) FROM interactions WHERE session_id = ? GROUP BY call_id",
            (SESSION,),
        ).fetchall()
    return {str(call): int(count) for call, count in rows}


def hook_log_lines(home: Path) -> tuple[int, int]:
    """Lines the hooks wrote to the log: all of them, and those saying an event is lost."""
    path = Path(rundir.locate({}, home=str(home)).log_path)
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    hooks = [line for line in lines if " thatch.hook WARNING " in line]
    return len(hooks), sum("lost" in line for line in hooks)


def run(args: argparse.Namespace, home: Path, project: Path) -> None:
    """Run the events against a daemon killed ``args.kills`` times; print what was kept."""
    env = bench_env(home, CLAUDE_PROJECT_DIR=str(project))
    # The installed console script first, as a harness finds it; no THATCH_NO_AUTOSTART.
    env["PATH"] = os.pathsep.join([str(SCRIPT_DIR), "/usr/local/bin", "/usr/bin", "/bin"])
    client = DaemonClient(str(home), environ=env)
    client.ensure_running(warm=True)
    busy = [subprocess.Popen(BUSY_LOOP) for _ in range(args.busy)]
    hooks, killed = Hooks(), []
    started = time.monotonic()
    try:
        marks = kill_marks(args.events, args.kills)
        kills = threading.Thread(target=killer, args=(client, hooks, marks, killed))
        kills.start()
        with ThreadPoolExecutor(max_workers=args.parallel) as pool:
            for number in range(args.events):
                pool.submit(run_hook, env, project, number, hooks)
        kills.join()
        hooks_seconds = time.monotonic() - started
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()
    try:
        settle_seconds = settle(client, home)
    finally:
        stop_daemons(client)
    report(args, home, hooks, killed, hooks_seconds, settle_seconds)


def report(
    args: argparse.Namespace,
    home: Path,
    hooks: Hooks,
    killed: list[int | None],
    hooks_seconds: float,
    settle_seconds: float,
) -> None:
    """Print the hooks' figures and what the session store holds."""
    counts = queued(home)
    expected = {call_id(number) for number in range(args.events)}
    kept = len(expected & counts.keys())
    doubled = sum(count > 1 for call, count in counts.items() if call in expected)
    strangers = len(counts.keys() - expected)
    left = spool_files(home)
    log_lines, lost_lines = hook_log_lines(home)
    hit = sum(pid is not None for pid in killed)
    print(
        f"{args.events} events, {args.parallel} at a time, {args.busy} busy loops, "
        f"daemon killed {hit} of {len(killed)} times (kill -9)"
    )
    print(f"hooks ran in {hooks_seconds:.1f} s; the spool settled {settle_seconds:.1f} s later")
    print(
        f"hook wall time: median {statistics.median(hooks.times):.1f} ms, "
        f"p95 {percentile(hooks.times, 95):.1f}, max {max(hooks.times):.1f}; "
        f"exit != 0: {sum(code != 0 for code in hooks.codes)}; printed anything: {hooks.printed}"
    )
    for complaint in hooks.complaints:
        print(f"  a hook: {complaint}")
    print(f"hook log lines: {log_lines} ({lost_lines} saying an event is lost)")
    print(
        f"spool left: {left['waiting']} waiting, {left['failed']} failed, "
        f"{left['half-written']} half-written"
    )
    print(
        f"events: {args.events} sent, {kept} kept, {args.events - kept} lost, "
        f"{doubled} doubled ({strangers} unknown ids in the queue)"
    )
    met = "met" if kept == args.events and doubled == 0 else "NOT met"
    print(f"goal: every event kept once ({kept}/{args.events}, {doubled} doubled): {met}")


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run in a throw-away home, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000, help="hook processes to run")
    parser.add_argument("--kills", type=int, help="kill -9 the daemon this often (events/100)")
    parser.add_argument("--parallel", type=int, default=2, help="hooks running at once")
    parser.add_argument("--busy", type=int, default=2, help="busy loops beside them")
    args = parser.parse_args(argv)
    if args.kills is None:
        args.kills = max(args.events // 100, 1)
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="thatch-kill-") as tmp:
        home, project = Path(tmp) / "home", make_project(Path(tmp) / "web")
        run(args, home, project)
    print(f"load average at end: {os.getloadavg()[0]:.2f}; {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
