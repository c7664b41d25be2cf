"""Built-in ``prediction-log``: ``thatch predlog``, and recording on the Stop hook.

Every Prediction an agent shows becomes one row of the prediction log
(:mod:`thatch.plugin.prediction_log`). The rows come from the session's
transcript, which its harness reads (``Harness.read_transcript``), and go to
the configured prediction-log storage, or with ``--log FILE`` to a JSONL file
(:class:`thatch.predlog.jsonl.JsonlPredictionLog`): ``thatch predlog export``
writes the stored log in that same form, so the two are interchangeable.

On the daemon's Stop and SubagentStop events the whole transcript is read
again, after the hook is answered; the storage's dedupe on (id, session)
makes the rows already logged free, even when two Stop hooks of a session
arrive at once. A Stop whose write fails because the storage is away is kept
and tried again by the daemon until it is made.
"""

from __future__ import annotations

import argparse
import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch.plugin.specs import hookimpl

if TYPE_CHECKING:
    from thatch.plugin.commands import Command, CommandContext
    from thatch.plugin.events import Event
    from thatch.plugin.harness import Harness
    from thatch.plugin.prediction_log import Candidate, LoggedPrediction, PredictionStorage
    from thatch.plugins import Plugins
    from thatch.runtime import Runtime

log = logging.getLogger("thatch")

#: The events whose transcript is read for new Predictions.
RECORDING_KINDS = frozenset({"stop", "subagent_stop"})
#: The counts ``predlog report`` breaks the rows down by.
BREAKDOWNS = ("by_action", "by_source", "by_actual")
#: How to see the ids a command can name.
LIST_HINT = "'thatch predlog list' shows the ids"


# -- the Stop hook ---------------------------------------------------------------


@hookimpl
def thatch_ingest(event: Event, app: Runtime) -> None:
    """On Stop / SubagentStop, record the session's Predictions once the hook is answered."""
    if event.kind not in RECORDING_KINDS or not event.transcript_path:
        return
    harness = app.plugins.harness(event.harness)
    if harness is not None:
        from thatch.deferred import prediction_log

        transcript = Path(event.transcript_path)
        app.defer_write(prediction_log(harness.name, transcript, event.session_id))


# -- thatch predlog --------------------------------------------------------------


@hookimpl
def thatch_commands() -> tuple[Command, ...]:
    """``thatch predlog append|list|score|report|export``."""
    from thatch.plugin.commands import Command

    return (
        Command(
            name="predlog",
            help="the prediction log: record a transcript's Predictions, list, score, report",
            run=run,
            arguments=add_arguments,
        ),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``predlog``'s subcommands, each with ``--log FILE`` and ``--json``."""
    commands = parser.add_subparsers(dest="predlog_command", metavar="COMMAND", required=True)
    log_file = argparse.ArgumentParser(add_help=False)
    log_file.add_argument(
        "--log",
        metavar="FILE",
        type=Path,
        help="a JSONL prediction log instead of the configured storage",
    )
    # Also after the subcommand (``thatch predlog list --json``); SUPPRESS keeps
    # the value given before it.
    log_file.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON"
    )

    def add(name: str, help: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help, description=help, parents=[log_file])

    append = add("append", "record the Predictions a transcript shows (each row once)")
    append.add_argument("transcript", metavar="TRANSCRIPT", type=Path)
    append.add_argument(
        "--session", help="the session id (default: the transcript's, else its file name)"
    )
    append.add_argument(
        "--harness", help="whose transcript it is (default: the first harness that reads it)"
    )
    listing = add("list", "the logged rows, oldest first")
    listing.add_argument("--session", help="only this session's rows")
    score = add("score", "record what the user did about a Prediction")
    score.add_argument("id", metavar="ID")
    score.add_argument("--actual", required=True, choices=("accept", "correct"))
    score.add_argument("--session", help="the session of the row (ids repeat across sessions)")
    add("report", "counts, and the Brier score and reliability table of the scored rows")
    add("export", "the log as JSONL, one row a line (the form --log FILE reads)")


def run(args: argparse.Namespace, context: CommandContext) -> int:
    """Run the subcommand the user named."""
    commands = {
        "append": append,
        "list": list_rows,
        "score": score,
        "report": report,
        "export": export,
    }
    with _storage(args, context) as (storage, plugins):
        return commands[args.predlog_command](args, context, storage, plugins)


@contextmanager
def _storage(
    args: argparse.Namespace, context: CommandContext
) -> Iterator[tuple[PredictionStorage, Plugins]]:
    """The log the command works on (``--log FILE``, else the configured one), closed after."""
    th = context.open()
    try:
        if args.log is None:
            yield th.prediction_storage, th.plugins
            return
        from thatch.predlog.jsonl import JsonlPredictionLog

        jsonl = JsonlPredictionLog(args.log)
        try:
            yield jsonl, th.plugins
        finally:
            jsonl.close()
    finally:
        th.close()


def append(
    args: argparse.Namespace,
    context: CommandContext,
    storage: PredictionStorage,
    plugins: Plugins,
) -> int:
    """``predlog append TRANSCRIPT``: the transcript's rows, those not logged yet added."""
    from thatch.predlog.recording import rows_from
    from thatch.predlog.transcript import require_rows

    path: Path = args.transcript
    harness, candidates = _read(path, plugins, args.harness)
    session = args.session or _session_of(harness, path)
    rows = require_rows(rows_from(candidates, session, path), path)
    new = storage.record_predictions(rows)
    added = [row.id for row, is_new in zip(rows, new, strict=True) if is_new]
    where = args.log or "the prediction log"
    text = f"added {len(added)} of {len(rows)} rows (session {session}) to {where}"
    context.emit(
        {"session_id": session, "rows": len(rows), "added": added},
        text + (": " + ", ".join(added) if added else "; all were logged already"),
    )
    return 0


def _read(path: Path, plugins: Plugins, name: str | None) -> tuple[Harness, list[Candidate]]:
    """The harness whose reader reads ``path`` (the one named, else the first), and its texts.

    :raises InvalidInputError: no such file, no such harness or reader, or no
        reader reads it (the error of the first that tried).
    """
    from thatch.plugin.errors import InvalidInputError

    if not path.is_file():
        raise InvalidInputError(f"{path}: missing file; name a transcript file")
    if name is not None:
        return _named_reader(path, plugins, name)
    first_error: InvalidInputError | None = None
    for harness in sorted(plugins.harnesses().values(), key=lambda harness: harness.name):
        try:
            candidates = harness.read_transcript(path)
            if candidates is not None:
                # Read whole here: a reader may be lazy, and a bad line must fail this one.
                return harness, list(candidates)
        except InvalidInputError as exc:
            first_error = first_error or exc
    if first_error is not None:
        raise first_error
    raise InvalidInputError(f"{path}: no installed harness reads transcripts")


def _named_reader(path: Path, plugins: Plugins, name: str) -> tuple[Harness, list[Candidate]]:
    from thatch.plugin.errors import InvalidInputError

    harness = plugins.harness(name)
    if harness is None:
        installed = ", ".join(sorted(plugins.harnesses()))
        raise InvalidInputError(f"--harness {name}: no such harness; installed: {installed}")
    candidates = harness.read_transcript(path)
    if candidates is None:
        raise InvalidInputError(f"--harness {name}: {harness.title} has no transcript reader")
    return harness, list(candidates)


def _session_of(harness: Harness, path: Path) -> str:
    """The session the transcript names (when its harness can tell), else the file name's stem."""
    return harness.transcript_session(path) or path.stem


def list_rows(
    args: argparse.Namespace,
    context: CommandContext,
    storage: PredictionStorage,
    plugins: Plugins,
) -> int:
    """``predlog list``: the rows, oldest first."""
    from thatch.textfit import cut, one_line

    rows = storage.list_prediction_entries(args.session)
    if not rows and not context.json:
        context.note("the prediction log has no rows" + _of_session(args.session))
        return 0
    table = [
        (
            row.id,
            row.session_id,
            row.action,
            str(row.confidence),
            row.source,
            row.actual or "-",
            cut(one_line(row.toward), 60),
        )
        for row in rows
    ]
    text = aligned(table, ("ID", "SESSION", "ACTION", "CONF", "SOURCE", "ACTUAL", "TOWARD"))
    context.emit([row.to_json() for row in rows], text)
    return 0


def aligned(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """``rows`` under ``headers``, each column as wide as its widest cell."""
    from thatch.safetext import visible

    # Made visible before measuring, so the columns line up as printed.
    table = [[visible(cell) for cell in row] for row in [headers, *rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in table
    )


def score(
    args: argparse.Namespace,
    context: CommandContext,
    storage: PredictionStorage,
    plugins: Plugins,
) -> int:
    """``predlog score ID --actual accept|correct``: what the user did."""
    from thatch.plugin.errors import InvalidInputError, NotFoundError

    if args.session is None:
        # Ids repeat across sessions: without --session the row must be the only one.
        sessions = sorted(
            {row.session_id for row in storage.list_prediction_entries() if row.id == args.id}
        )
        if len(sessions) > 1:
            raise InvalidInputError(
                f"prediction {args.id!r} is in {len(sessions)} sessions "
                f"({', '.join(map(repr, sessions))}); add --session SESSION to pick one"
            )
    if not storage.score_prediction(args.id, args.actual, datetime.now(UTC), args.session):
        raise NotFoundError(
            f"no prediction {args.id!r} in the log{_of_session(args.session)}; {LIST_HINT}"
        )
    context.emit(
        {"id": args.id, "actual": args.actual}, f"scored {args.id}: the user did {args.actual}"
    )
    return 0


def report(
    args: argparse.Namespace,
    context: CommandContext,
    storage: PredictionStorage,
    plugins: Plugins,
) -> int:
    """``predlog report``: counts, then the calibration of the scored rows."""
    from thatch.decisions.calibration import reliability, reliability_rows

    rows = storage.list_prediction_entries()
    calibration = reliability(_forecasts(rows), showings=len(rows))
    counts = {
        "rows": len(rows),
        "scored": calibration.scored,
        "by_action": dict(Counter(row.action for row in rows)),
        "by_source": dict(Counter(row.source for row in rows)),
        "by_actual": dict(Counter(row.actual for row in rows if row.actual)),
    }
    brier = "n/a (no scored rows yet)" if calibration.brier is None else f"{calibration.brier:.4f}"
    lines = [f"rows: {len(rows)}, scored: {calibration.scored}, Brier score: {brier}"]
    lines += [f"{key.replace('_', ' ')}: {_counted(counts[key])}" for key in BREAKDOWNS]
    if calibration.scored:
        headers = ("CONFIDENCE", "ROWS", "MEAN CONF", "MEAN OUTCOME")
        lines.append(aligned(reliability_rows(calibration), headers))
    context.emit({**counts, "calibration": calibration}, "\n".join(lines))
    return 0


def _forecasts(rows: Sequence[LoggedPrediction]) -> list[tuple[float, float]]:
    """Each scored row's (confidence 0–1, outcome): 1 when the user did what it predicted."""
    return [
        (row.confidence / 100, 1.0 if row.actual == row.action else 0.0)
        for row in rows
        if row.actual is not None
    ]


def _counted(counts: Any) -> str:
    return ", ".join(f"{count} {name}" for name, count in sorted(counts.items())) or "none"


def export(
    args: argparse.Namespace,
    context: CommandContext,
    storage: PredictionStorage,
    plugins: Plugins,
) -> int:
    """``predlog export``: the rows as a JSONL log file holds them (``--json`` changes nothing)."""
    from thatch.predlog.jsonl import row_line
    from thatch.safetext import visible

    for row in storage.list_prediction_entries():
        # visible() keeps the JSON valid and the data exact (see thatch.safetext).
        print(visible(row_line(row).decode("utf-8")), end="")
    return 0


def _of_session(session: str | None) -> str:
    return f" for session {session!r}" if session else ""
