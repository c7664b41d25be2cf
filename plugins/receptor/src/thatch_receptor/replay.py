"""``thatch receptor replay``: feed recorded events through a fresh receptor and show what it read.

The input is a file of events in the core event format (one JSON event a
line, see ``docs/receptor.md``), or with ``--format mini-swe-agent`` a
trajectory file or a folder of them (one session per run). Every firing is
a line with its decision (rule, mode, score and why), made by the built-in
rules (:mod:`thatch_receptor.rules`) and, with ``--rules FILE``, that file's
over them; no plugin is loaded. ``--summary`` gives one line per session
instead: each axis's peak and mean, and the firing counts by axis and by
mode (under ``--json`` one JSON object a line). ``--plot FILE.png`` draws
each session's axes with its firings and deliveries (:mod:`thatch_receptor.plot`).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    replay.add_argument(
        "--rules",
        type=Path,
        metavar="FILE",
        help="a JSON rule file over the built-in rules (its rules replace those of their name)",
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


@attrs.frozen
class SessionReplay:
    """One session replayed: every step, and each composition's decision with its step."""

    session_id: str
    steps: tuple[Step, ...]
    decisions: tuple[tuple[Step, Decision], ...]


def run(args: argparse.Namespace, context: CommandContext) -> int:
    """``thatch receptor replay``."""
    from thatch_receptor.interpret import Interpreter
    from thatch_receptor.receptor import Receptor
    from thatch_receptor.rules import rules_for

    interpreter = Interpreter(rules_for(None, rules_file=args.rules))  # a bad file: before the work
    sessions = list(_sessions(args.source, args.format))
    if args.plot is not None:
        from thatch_receptor.plot import check_plot_target

        check_plot_target(args.plot, len(sessions))
    receptor = Receptor()
    replays = [replay_session(s, events, receptor, interpreter) for s, events in sessions]
    if args.plot is not None:
        from thatch_receptor.plot import draw_sessions

        draw_sessions([trace(one) for one in replays], args.plot)
        context.note(f"plot written to {args.plot}")
    if args.summary:
        _emit_summary(context, [summary(one) for one in replays])
        return 0
    firings = [firing(step, decision) for one in replays for step, decision in one.decisions]
    context.emit(firings, "\n".join(firing_line(row) for row in firings) or "no firings")
    return 0


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
        context.emit(rows, "\n".join(summary_line(row) for row in rows))
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
    from thatch_receptor.trajectories import read_events

    with source.open(encoding="utf-8") as lines:
        events = tuple(read_events(lines, source=str(source)))
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
