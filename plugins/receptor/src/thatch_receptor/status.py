"""``thatch receptor status [SESSION]``: what the daemon's receptor reads of a live session.

The daemon's reader writes each session's status to a small JSON file in the
state folder (``receptor/sessions/``, readable by its owner only) at most once
a second and on every firing, so the command needs no daemon round trip and
works while the daemon is busy. Without ``SESSION`` it shows the session
whose status changed last.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch.plugin import AXES, InvalidInputError, make_private_dirs

if TYPE_CHECKING:
    from thatch.plugin import CommandContext

    from thatch_receptor.deliveries import Delivery, Handed
    from thatch_receptor.interpret import Decision
    from thatch_receptor.receptor import Step

#: Status files older than this are removed when the daemon starts.
MAX_AGE_SECONDS = 7 * 24 * 3600.0
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def status_dir(state_dir: Path) -> Path:
    """Where the sessions' status files live."""
    return state_dir / "receptor" / "sessions"


class StatusFiles:
    """The status files of one state folder."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, session_id: str) -> Path:
        """The file of ``session_id``: its name made safe, with a digest so two never share one."""
        digest = hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:10]
        return self.directory / f"{_UNSAFE.sub('_', session_id)[:80]}-{digest}.json"

    def write(self, session_id: str, status: dict[str, Any]) -> None:
        """Replace the session's file at once (a reader never sees half of one)."""
        make_private_dirs(self.directory)
        path = self.path(session_id)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(status, out)
        temporary.replace(path)

    def read(self, session_id: str | None) -> dict[str, Any] | None:
        """The session's status (the latest session's for None); None when there is none."""
        if session_id is not None:
            return _load(self.path(session_id))
        files = sorted(self.directory.glob("*.json"), key=_mtime, reverse=True)
        for path in files:
            found = _load(path)
            if found is not None:
                return found
        return None

    def prune(self, now: float | None = None) -> None:
        """Remove the files of sessions silent for :data:`MAX_AGE_SECONDS`."""
        limit = (time.time() if now is None else now) - MAX_AGE_SECONDS
        for path in self.directory.glob("*.json"):
            if _mtime(path) < limit:
                path.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def snapshot(
    step: Step,
    *,
    firings: Sequence[tuple[Step, Decision]],
    handed: Sequence[Handed],
    pending: Delivery | None,
    offers: Sequence[Delivery],
    unread: int,
    calls: int,
    at: float,
    series: Sequence[tuple[float, Mapping[str, float]]] = (),
) -> dict[str, Any]:
    """A session's status, as its file holds it; ``series``: ``(at, axes)``, oldest first."""
    return {
        "session": step.session_id,
        "updated_at": at,
        "tool_calls": calls,
        "axes": {axis: round(step.axes[axis], 3) for axis in AXES},
        "thresholds": {axis: round(step.thresholds[axis], 3) for axis in AXES},
        "held": sorted(step.held),
        "in_flow": step.in_flow,
        "pattern": step.pattern,
        "firings": [
            {
                "at": fired.at,
                "fired": sorted(fired.fired),
                "pattern": fired.pattern,
                "in_flow": fired.in_flow,
                "rule": decision.interpretation.rule if decision.interpretation else None,
                "mode": decision.mode,
                "score": round(decision.score, 3),
                "why": decision.why,
            }
            for fired, decision in firings
        ],
        "deliveries": [
            {
                "id": item.delivery.id,
                "mode": item.delivery.mode,
                "via": item.via,
                "at": item.at,
                "rule": item.delivery.rule,
                "text": item.delivery.text,
            }
            for item in handed
        ],
        "pending": pending.text if pending is not None else None,
        "offers": [{"id": offer.id, "reason": offer.reason} for offer in offers],
        "unread_notes": unread,
        # The axes over time, for thatch ui's session page (thatch_receptor.panel).
        "series": [{"at": moment, "axes": dict(axes)} for moment, axes in series],
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``thatch receptor status``'s arguments."""
    parser.add_argument("session", nargs="?", help="the session (default: the latest)")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def run(args: argparse.Namespace, context: CommandContext) -> int:
    """``thatch receptor status``."""
    files = StatusFiles(status_dir(context.config.paths.state_dir))
    status = files.read(args.session)
    if status is None:
        if args.session is not None:
            raise InvalidInputError(
                f"no receptor status for session {args.session!r}: the daemon has read no tool "
                "call of it; check the id (thatch receptor status, without one, shows the latest)"
            )
        context.emit(None, "no session yet: the receptor has read no tool call")
        return 0
    if context.json:
        context.emit(status, "")
        return 0
    try:
        text = status_text(status)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        # A file another release wrote (thatch ui's panel allows for one too): say so, and
        # that the daemon writes it anew, rather than end in a traceback.
        session = status.get("session", args.session)
        which = f"session {session!r}" if isinstance(session, str) else "the latest session"
        what = f"no field {error}" if isinstance(error, KeyError) else str(error)
        raise InvalidInputError(
            f"the receptor status of {which} in {files.directory} cannot be shown "
            f"({what}): another version of thatch wrote it; the daemon writes it "
            "anew at the session's next tool call, or delete its file there"
        ) from None
    context.emit(status, text)
    return 0


def status_text(status: dict[str, Any]) -> str:
    """The status as the terminal shows it."""
    age = max(0.0, time.time() - float(status.get("updated_at", 0.0)))
    flow = "deep work (flow holds)" if status["in_flow"] else "not in flow"
    lines = [
        f"session {status['session']}: {status['tool_calls']} tool calls, pattern "
        f"{status['pattern']}, {flow}; updated {age:.0f} s ago",
    ]
    for axis in AXES:
        held = " held" if axis in status["held"] else ""
        value, threshold = status["axes"][axis], status["thresholds"][axis]
        lines.append(f"  {axis:<12} {value:.2f}  (threshold {threshold:.2f}){held}")
    for firing in status["firings"][-5:]:
        lines.append(
            f"  fired {','.join(firing['fired'])} [{firing['pattern']}] -> {firing['mode']}: "
            f"{firing['why']}"
        )
    for item in status["deliveries"][-3:]:
        first = item["text"].splitlines()[0] if item["text"] else ""
        lines.append(f"  delivered {item['mode']} via {item['via']}: {first[:100]}")
    if status["pending"]:
        lines.append("  waiting for the next tool call: one active item")
    if status["offers"] or status["unread_notes"]:
        lines.append(
            f"  {len(status['offers'])} open offer(s), {status['unread_notes']} unread note(s)"
        )
    return "\n".join(lines)
