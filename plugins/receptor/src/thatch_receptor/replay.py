"""``thatch receptor replay``: feed recorded events through a fresh receptor and show what it read.

The input is a file of events in the core event format (one JSON event a
line, see ``docs/receptor.md``), or with ``--format mini-swe-agent`` a
trajectory file or a folder of them (one session per run). Every firing is
a line; ``--summary`` gives one line per session instead: each axis's peak
and mean, and the firing counts by axis.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch.plugin import AXES, Event, InvalidInputError

if TYPE_CHECKING:
    from thatch.plugin import CommandContext

    from thatch_receptor.receptor import Step

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
        "--summary", action="store_true", help="one line per session: axis peaks and means"
    )
    # Also after the subcommand (``thatch receptor replay X --json``); SUPPRESS
    # keeps an absent flag from overriding one given before it.
    replay.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def run(args: argparse.Namespace, context: CommandContext) -> int:
    """``thatch receptor replay``."""
    from thatch_receptor.receptor import Receptor

    sessions = list(_sessions(args.source, args.format))
    receptor = Receptor()
    if args.summary:
        rows = [
            summary(session, [receptor.feed(e) for e in events]) for session, events in sessions
        ]
        context.emit(rows, "\n".join(summary_line(row) for row in rows))
        return 0
    firings = [
        firing(step) for _, events in sessions for step in map(receptor.feed, events) if step.fired
    ]
    context.emit(firings, "\n".join(firing_line(row) for row in firings) or "no firings")
    return 0


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


def firing(step: Step) -> dict[str, Any]:
    """One firing as ``--json`` prints it."""
    return {
        "session": step.session_id,
        "event": step.event_id,
        "at": step.at,
        "fired": sorted(step.fired),
        "pattern": step.pattern,
        "in_flow": step.in_flow,
        "axes": {axis: round(value, 3) for axis, value in step.axes.items()},
    }


def firing_line(row: dict[str, Any]) -> str:
    axes = " ".join(f"{axis}={row['axes'][axis]:.2f}" for axis in row["fired"])
    flow = " (in flow)" if row["in_flow"] else ""
    return f"{row['session']} {row['event']}: {axes} [{row['pattern']}]{flow}"


def summary(session: str, steps: Iterable[Step]) -> dict[str, Any]:
    """One session's peaks, means and firing counts by axis."""
    taken = list(steps)
    fired: Counter[str] = Counter(axis for step in taken for axis in step.fired)
    count = max(len(taken), 1)
    return {
        "session": session,
        "events": len(taken),
        "peak": {axis: round(max((s.axes[axis] for s in taken), default=0.0), 3) for axis in AXES},
        "mean": {axis: round(sum(s.axes[axis] for s in taken) / count, 3) for axis in AXES},
        "fired": {axis: fired[axis] for axis in AXES},
    }


def summary_line(row: dict[str, Any]) -> str:
    parts = [
        f"{axis} peak {row['peak'][axis]:.2f} mean {row['mean'][axis]:.2f} "
        f"fired {row['fired'][axis]}"
        for axis in AXES
    ]
    return f"{row['session']} ({row['events']} events): " + "; ".join(parts)
