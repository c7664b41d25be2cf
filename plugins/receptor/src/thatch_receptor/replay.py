"""``thatch receptor replay``: feed recorded events through a fresh receptor and show what it read.

The input is a file of events in the core event format (one JSON event a
line, see ``docs/receptor.md``), or with ``--format mini-swe-agent`` a
trajectory file or a folder of them (one session per run). Every firing is
a line with its decision (rule, mode, score and why), made as the daemon
makes it (:mod:`thatch_receptor.rules`): by the built-in rules with the
user's rule file over them (``receptor-rules.json`` in the config folder),
or ``--rules FILE``'s instead of the user's; ``--default-rules`` leaves the
user's out. No plugin is loaded, so no plugin's rules apply. ``--summary``
gives one line per session instead: each axis's peak and mean, and the
firing counts by axis and by mode (under ``--json`` one JSON object a line).
``--plot FILE.png`` draws each session's axes with its firings and
deliveries (:mod:`thatch_receptor.plot`).

Sessions are independent, so a folder of trajectories is replayed in
``--jobs`` worker processes (default: the cores available), each reading its
own files; the output is the same, in the same order, as in one process. A
single file, or ``--jobs 1``, is replayed in the command's own process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import attrs
from thatch.plugin import AXES, DELIVERY_MODES, Event, InvalidInputError

if TYPE_CHECKING:
    from thatch.plugin import CommandContext

    from thatch_receptor.interpret import Decision, Interpreter
    from thatch_receptor.plot import SessionTrace
    from thatch_receptor.receptor import Receptor, Step

FORMATS = ("events", "mini-swe-agent")


def add_arguments(replay: argparse.ArgumentParser) -> None:
    """``thatch receptor replay``'s arguments."""
    replay.add_argument("source", type=Path, help="an events file, a trajectory file or a folder")
    replay.add_argument(
        "--format",
        choices=FORMATS,
        default="events",
        help="events: one core event a line (default); mini-swe-agent: trajectory files",
    )
    replay.add_argument(
        "--summary",
        action="store_true",
        help="one line per session: axis peaks and means, firings by axis and by mode",
    )
    # The rule file's name written out, not imported: every plugin command builds this
    # parser, and the rules module's imports would cost each of them.
    rules = replay.add_mutually_exclusive_group()
    rules.add_argument(
        "--rules",
        type=Path,
        metavar="FILE",
        help="a JSON rule file over the built-in rules, instead of your receptor-rules.json "
        "(its rules replace those of their name)",
    )
    rules.add_argument(
        "--default-rules",
        action="store_true",
        help="the built-in rules alone, without your receptor-rules.json: "
        "the same answer wherever it runs",
    )
    replay.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.png",
        help="draw each session's axes, firings and deliveries (needs thatch-receptor[plot])",
    )
    # Also after the subcommand (``thatch receptor replay X --json``); SUPPRESS
    # keeps an absent flag from overriding one given before it.
    replay.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    replay.add_argument(
        "--jobs",
        type=_jobs,
        default=None,
        metavar="N",
        help="worker processes for a folder of trajectories (default: the cores available)",
    )


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"--jobs takes a whole number of at least 1, got {text!r}")
    return jobs


def available_cores() -> int:
    """The cores this process may run on (``--jobs``'s default)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@attrs.frozen
class SessionReplay:
    """One session replayed: every step, and each composition's decision with its step."""

    session_id: str
    steps: tuple[Step, ...]
    decisions: tuple[tuple[Step, Decision], ...]


@attrs.frozen
class SessionOutcome:
    """What the command prints and draws of one replayed session (a worker sends it back)."""

    session_id: str
    firings: tuple[dict[str, Any], ...]
    summary: dict[str, Any] | None = None
    trace: SessionTrace | None = None


def run(args: argparse.Namespace, context: CommandContext) -> int:
    """``thatch receptor replay``."""
    from thatch_receptor.interpret import Interpreter
    from thatch_receptor.rules import rules_for

    rules_file = _rules_file(args, context)
    interpreter = Interpreter(rules_for(None, rules_file=rules_file))  # a bad file: before the work
    want = _Wanted(summary=args.summary, plot=args.plot is not None)
    files = _trajectory_files(args.source, args.format)
    jobs = min(available_cores() if args.jobs is None else args.jobs, len(files))
    if jobs > 1:
        _check_plot(args.plot, len(files))
        outcomes = _outcomes_in_workers(files, jobs, rules_file, want)
    else:
        sessions = list(_sessions(args.source, args.format))
        _check_plot(args.plot, len(sessions))
        outcomes = _outcomes(sessions, interpreter, want)
    if args.plot is not None:
        from thatch_receptor.plot import draw_sessions

        draw_sessions([one.trace for one in outcomes if one.trace is not None], args.plot)
        context.note(f"plot written to {args.plot}")
    if args.summary:
        _emit_summary(context, [one.summary for one in outcomes if one.summary is not None])
        return 0
    firings = [row for one in outcomes for row in one.firings]
    context.emit(firings, "\n".join(firing_line(row) for row in firings) or "no firings")
    return 0


def _rules_file(args: argparse.Namespace, context: CommandContext) -> Path | None:
    """The rule file over the built-in rules: ``--rules``, else the daemon's (the user's).

    The user's is said on stderr: a replay that decides otherwise than the
    shipped rules would should not surprise anyone comparing it with another.
    """
    if args.rules is not None or args.default_rules:
        return cast("Path | None", args.rules)
    from thatch_receptor.rules import user_rules_file

    found = user_rules_file(context.config.paths.config_dir)
    if found is not None:
        context.note(f"rules: the built-in ones with {found} over them (--default-rules: without)")
    return found


@attrs.frozen
class _Wanted:
    """What an outcome must hold: the summary line, the plot's trace (firings always)."""

    summary: bool
    plot: bool


def _check_plot(target: Path | None, sessions: int) -> None:
    if target is not None:
        from thatch_receptor.plot import check_plot_target

        check_plot_target(target, sessions)


def _outcomes(
    sessions: Sequence[tuple[str, Sequence[Event]]], interpreter: Interpreter, want: _Wanted
) -> list[SessionOutcome]:
    """Replay sessions one after the other through one receptor."""
    from thatch_receptor.receptor import Receptor

    receptor = Receptor()
    return [
        outcome(replay_session(session, events, receptor, interpreter), want)
        for session, events in sessions
    ]


def outcome(replayed: SessionReplay, want: _Wanted) -> SessionOutcome:
    """A replayed session as the command prints and draws it."""
    return SessionOutcome(
        session_id=replayed.session_id,
        firings=tuple(firing(step, decision) for step, decision in replayed.decisions),
        summary=summary(replayed) if want.summary else None,
        trace=trace(replayed) if want.plot else None,
    )


def _trajectory_files(source: Path, kind: str) -> list[Path]:
    """A folder's trajectory files, which workers can share out; else none (one process)."""
    if kind != "mini-swe-agent" or not source.is_dir():
        return []
    from thatch_receptor.trajectories import TRAJECTORY_SUFFIX

    return sorted(source.glob(f"*{TRAJECTORY_SUFFIX}"))


def _outcomes_in_workers(
    files: Sequence[Path], jobs: int, rules_file: Path | None, want: _Wanted
) -> list[SessionOutcome]:
    """Replay each file in one of ``jobs`` processes; the outcomes in file order.

    Each worker reads its own files (no event crosses a process) and feeds each
    to a fresh receptor. A worker's error (a malformed file) is raised here, the
    first file's first, as in one process. Sessions are independent only when
    their names differ: two files of one session name (their ``instance_id``)
    share a receptor's state in one process, so then the files are replayed
    again in this one.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork: a worker starts with the modules already loaded, in milliseconds.
    methods = multiprocessing.get_all_start_methods()
    start = "fork" if sys.platform == "linux" and "fork" in methods else None
    with ProcessPoolExecutor(
        jobs,
        mp_context=multiprocessing.get_context(start),
        initializer=_start_worker,
        initargs=(rules_file, want),
    ) as pool:
        chunk = max(1, len(files) // (jobs * 4))
        outcomes = list(pool.map(_replay_file, files, chunksize=chunk))
    names = [one.session_id for one in outcomes]
    if len(set(names)) == len(names):
        return outcomes
    from thatch_receptor.interpret import Interpreter
    from thatch_receptor.rules import rules_for
    from thatch_receptor.trajectories import read_trajectories

    sessions = [session for file in files for session in read_trajectories(file)]
    return _outcomes(sessions, Interpreter(rules_for(None, rules_file=rules_file)), want)


#: A worker's interpreter and wanted outcome (set by ``_start_worker``).
_worker: tuple[Interpreter, _Wanted] | None = None


def _start_worker(rules_file: Path | None, want: _Wanted) -> None:
    from thatch_receptor.interpret import Interpreter
    from thatch_receptor.rules import rules_for

    global _worker
    _worker = (Interpreter(rules_for(None, rules_file=rules_file)), want)


def _replay_file(file: Path) -> SessionOutcome:
    """One trajectory file replayed in a worker, through a receptor of its own."""
    from thatch_receptor.receptor import Receptor
    from thatch_receptor.trajectories import read_trajectories

    assert _worker is not None, "a worker starts with _start_worker"
    interpreter, want = _worker
    ((session, events),) = read_trajectories(file)
    return outcome(replay_session(session, events, Receptor(), interpreter), want)


def replay_session(
    session_id: str, events: Sequence[Event], receptor: Receptor, interpreter: Interpreter
) -> SessionReplay:
    """Feed one session's events and decide on every composition, counting its tool calls."""
    decide = interpreter.session().decide
    steps: list[Step] = []
    decisions: list[tuple[Step, Decision]] = []
    tool_calls = 0
    for event in events:
        tool_calls += len(event.tool_calls)
        step = receptor.feed(event)
        steps.append(step)
        decisions += [(step, decide(c, tool_calls=tool_calls)) for c in step.compositions]
    return SessionReplay(session_id, tuple(steps), tuple(decisions))


def _emit_summary(context: CommandContext, rows: list[dict[str, Any]]) -> None:
    """A line per session; under ``--json`` one JSON object a line (JSON Lines)."""
    if not context.json:
        context.emit(rows, "\n".join(summary_line(row) for row in rows) or "no sessions")
        return
    for row in rows:
        # ASCII-only JSON escapes every control character: as safe for a
        # terminal as core's own JSON output, and one object a line.
        print(json.dumps(row, ensure_ascii=True), flush=True)


def _sessions(source: Path, kind: str) -> Iterator[tuple[str, tuple[Event, ...]]]:
    if not source.exists():
        raise InvalidInputError(f"{source}: no such file or folder; give an events file")
    if kind == "mini-swe-agent":
        from thatch_receptor.trajectories import read_trajectories

        yield from read_trajectories(source)
        return
    if source.is_dir():
        raise InvalidInputError(
            f"{source} is a folder; give an events file, or --format mini-swe-agent for "
            "a folder of trajectories"
        )
    from thatch_receptor.trajectories import TRAJECTORY_SUFFIX, read_events

    try:
        with source.open(encoding="utf-8") as lines:
            events = tuple(read_events(lines, source=str(source)))
    except (OSError, UnicodeDecodeError) as error:
        # The lines are decoded as they are read, so this comes from inside read_events.
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise InvalidInputError(
            f"{source}: cannot be read ({reason}); give an events file of UTF-8 JSON lines"
        ) from None
    except InvalidInputError as error:
        if not source.name.endswith(TRAJECTORY_SUFFIX):
            raise
        # A trajectory read as events fails on its first line, which says nothing of --format.
        raise InvalidInputError(
            f"{error}; {source.name} looks like a mini-swe-agent trajectory: "
            "add --format mini-swe-agent"
        ) from None
    by_session: dict[str, list[Event]] = {}
    for event in events:
        by_session.setdefault(event.session_id, []).append(event)
    for session, its_events in by_session.items():
        yield session, tuple(its_events)


def firing(step: Step, decision: Decision) -> dict[str, Any]:
    """One firing and its decision as ``--json`` prints it."""
    found = decision.interpretation
    return {
        "session": step.session_id,
        "event": step.event_id,
        "at": step.at,
        "fired": sorted(step.fired),
        "held": sorted(decision.composition.fired),
        "pattern": step.pattern,
        "in_flow": step.in_flow,
        "axes": {axis: round(value, 3) for axis, value in step.axes.items()},
        "decision": {
            "rule": found.rule if found else None,
            "trigger": found.trigger if found else None,
            "mode": decision.mode,
            "score": round(decision.score, 3),
            "why": decision.why,
            "reason": found.reason if found else None,
        },
    }


def firing_line(row: dict[str, Any]) -> str:
    axes = " ".join(f"{axis}={row['axes'][axis]:.2f}" for axis in row["fired"])
    flow = " (in flow)" if row["in_flow"] else ""
    decision = row["decision"]
    rule = decision["rule"] or "no rule"
    return (
        f"{row['session']} {row['event']}: {axes} [{row['pattern']}]{flow} -> "
        f"{rule}: {decision['why']}"
    )


def summary(replayed: SessionReplay) -> dict[str, Any]:
    """One session's peaks, means, firing counts by axis and decisions by mode."""
    taken = replayed.steps
    fired: Counter[str] = Counter(axis for step in taken for axis in step.fired)
    modes: Counter[str] = Counter(decision.mode for _, decision in replayed.decisions)
    count = max(len(taken), 1)
    return {
        "session": replayed.session_id,
        "events": len(taken),
        "peak": {axis: round(max((s.axes[axis] for s in taken), default=0.0), 3) for axis in AXES},
        "mean": {axis: round(sum(s.axes[axis] for s in taken) / count, 3) for axis in AXES},
        "fired": {axis: fired[axis] for axis in AXES},
        "modes": {mode: modes[mode] for mode in DELIVERY_MODES},
    }


def summary_line(row: dict[str, Any]) -> str:
    parts = [
        f"{axis} peak {row['peak'][axis]:.2f} mean {row['mean'][axis]:.2f} "
        f"fired {row['fired'][axis]}"
        for axis in AXES
    ]
    modes = " ".join(f"{mode} {row['modes'][mode]}" for mode in DELIVERY_MODES)
    return f"{row['session']} ({row['events']} events): " + "; ".join(parts) + f"; modes: {modes}"


def trace(replayed: SessionReplay) -> SessionTrace:
    """What ``--plot`` draws of one session."""
    from thatch_receptor.plot import SessionTrace

    steps = replayed.steps
    return SessionTrace(
        session_id=replayed.session_id,
        at=tuple(step.at for step in steps),
        axes={axis: tuple(step.axes[axis] for step in steps) for axis in AXES},
        firings=tuple(step.at for step in steps if step.fired),
        decisions=tuple((step.at, decision.mode) for step, decision in replayed.decisions),
    )
