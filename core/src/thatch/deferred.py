"""Writes made after a hook's answer, kept and tried again while the storage backend fails.

The daemon answers a hook first and writes its bookkeeping after: the
recall counts of the memories shown, the decision model's fire log, a
Stop's prediction log. A write that fails with StorageError (a PostgreSQL
server away for longer than ``[storage.postgres] retry_seconds``) is not
dropped: it is kept in the local session store as its kind and JSON
arguments (ids, times, a transcript path; never tool output), and the
daemon's loop tries it again with growing waits until it is made, across
daemon restarts. ``thatch daemon status`` counts the writes that wait.

Trying again is safe for what is written here: recall counts and fires go
through the backend's request ids within each call, and the prediction log
drops rows it already holds. One case is not: a call cut off while its
COMMIT was in flight may have been saved, and trying it again counts a
recall or a fire twice. That is rarer and cheaper than losing every count
made during an outage.

Other work deferred with :meth:`thatch.runtime.Runtime.defer` (a plugin's
``Nudge.on_delivered``) is a closure, which cannot be stored: it runs once
and a failure is logged.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from thatch.plugin.errors import StorageError

if TYPE_CHECKING:
    from thatch.runtime import Runtime

log = logging.getLogger("thatch")

#: Writes kept at most; the oldest beyond are dropped, with an error in the log
#: naming them. A prompt keeps two (recall counts, fires) and a Stop one, so this
#: covers a long working day of a backend away. Past that the backend is not
#: coming back soon, and statistics that old are worth less than a session store
#: that grows without end and a backlog that takes long to work off; a dropped
#: prediction log is written again by the session's next Stop, which rereads the
#: whole transcript.
MAX_WAITING = 1000
#: The waits after each failed try, in seconds; the last repeats. Each try while
#: the backend is away holds the daemon's loop for its retry time, so the waits
#: grow to a minute; the first is short, as a restarting server is back soon.
BACKOFF_SECONDS: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
#: Kept writes tried per tick at most, so a long backlog does not hold the loop's other steps.
BATCH = 100


@attrs.frozen
class Write:
    """One write to the storage backend, as data the session store can keep."""

    #: Which write (a key of :data:`KINDS`).
    kind: str
    #: Its arguments, JSON-serializable.
    args: Mapping[str, Any]
    #: Writes of the same kind and key: a newer one makes a waiting one moot.
    key: str | None = None


def recall_counts(memory_ids: Sequence[int], at: datetime) -> Write:
    """Count ``memory_ids`` as recalled at ``at`` (they were shown to an agent)."""
    return Write("recall", {"ids": list(memory_ids), "at": at.isoformat()})


def fire_log(
    cwd: str | None,
    session_id: str | None,
    fires: Sequence[tuple[int, float, float]],
    at: datetime,
) -> Write:
    """Log the predictions a decision nudge showed: (prediction id, confidence, score) each."""
    return Write(
        "fires",
        {
            "cwd": cwd,
            "session": session_id,
            "fires": [list(fire) for fire in fires],
            "at": at.isoformat(),
        },
    )


def prediction_log(harness: str, transcript: Path, session_id: str) -> Write:
    """Log the Predictions of a session's transcript (read again when the write is made)."""
    # Each Stop reads the whole transcript: the newest write covers an older one.
    return Write(
        "predlog",
        {"harness": harness, "transcript": str(transcript), "session": session_id},
        key=f"{session_id}\n{transcript}",
    )


def make(app: Runtime, write: Write, clock: Callable[[], float] = time.time) -> None:
    """Make ``write`` now; kept to try again if the storage backend fails. Never raises.

    While kept writes wait out a failure that just happened, a new one joins
    them untried: trying it would hold this thread for the backend's whole
    retry time, for an answer the last try just gave.
    """
    now = clock()
    waiting_until = app.sessions.next_write_at()
    if waiting_until is not None and waiting_until > now:
        _keep(app, write, "the storage failed moments ago", waiting_until)
        log.info(
            "%s not recorded yet: kept with the writes that wait for the storage",
            describe(write),
        )
        return
    try:
        KINDS[write.kind].apply(app, write.args)
    except StorageError as exc:
        wait = BACKOFF_SECONDS[0]
        _keep(app, write, str(exc), now + wait)
        log.warning(
            "%s not recorded yet: %s; kept, tried again in %g s", describe(write), exc, wait
        )
    except Exception:
        log.exception("%s failed; not tried again", describe(write))


def retry_due(app: Runtime, clock: Callable[[], float] = time.time) -> int:
    """Try the kept writes that are due, oldest first, up to the first that fails.

    :return: how many were made.
    """
    made = 0
    for pending in app.sessions.due_writes(clock(), BATCH):
        write = Write(pending.kind, {})
        try:
            write = Write(pending.kind, json.loads(pending.args))
            KINDS[write.kind].apply(app, write.args)
        except StorageError as exc:
            wait = BACKOFF_SECONDS[min(pending.tries, len(BACKOFF_SECONDS) - 1)]
            app.sessions.write_failed(pending.id, str(exc), clock() + wait)
            log.warning(
                "%s still not recorded after %d tries: %s; tried again in %g s",
                describe(write),
                pending.tries + 1,
                exc,
                wait,
            )
            return made
        except Exception:
            # A bug or data that no longer fits: trying again would fail the same way.
            log.exception("%s failed; dropped", describe(write))
        else:
            made += 1
        app.sessions.write_done(pending.id)
    if made:
        log.info("made %d writes that waited for the storage", made)
    return made


def status(app: Runtime) -> dict[str, Any]:
    """The writes that wait, for ``thatch daemon status``."""
    pending = app.sessions.pending_writes()
    return {
        "waiting": len(pending),
        "oldest_at": pending[0].created_at if pending else None,
        "next_try_at": max((p.next_at for p in pending), default=None),
        "last_error": pending[-1].last_error if pending else None,
    }


def describe(write: Write) -> str:
    """What the write records, for the log."""
    kind = KINDS.get(write.kind)
    if kind is None:
        return f"a write of unknown kind {write.kind!r}"
    try:
        return kind.describe(write.args)
    except (KeyError, TypeError):
        return f"a {write.kind} write with arguments {dict(write.args)}"


def _keep(app: Runtime, write: Write, error: str, next_at: float) -> None:
    dropped = app.sessions.keep_write(
        write.kind,
        write.key,
        json.dumps(dict(write.args)),
        error=error,
        next_at=next_at,
        limit=MAX_WAITING,
    )
    for old in dropped:
        log.error(
            "dropped %s, which waited since %s: over %d writes wait for the storage",
            describe(Write(old.kind, json.loads(old.args))),
            datetime.fromtimestamp(old.created_at).isoformat(timespec="seconds"),
            MAX_WAITING,
        )


# -- the kinds ---------------------------------------------------------------


@attrs.frozen
class _Kind:
    apply: Callable[[Runtime, Mapping[str, Any]], None]
    describe: Callable[[Mapping[str, Any]], str]


def _record_recall(app: Runtime, args: Mapping[str, Any]) -> None:
    ids = [int(memory_id) for memory_id in args["ids"]]
    app.thatch.memory_storage.record_recall(ids, datetime.fromisoformat(args["at"]))


def _record_fires(app: Runtime, args: Mapping[str, Any]) -> None:
    fires = [(int(pid), float(shown), float(score)) for pid, shown, score in args["fires"]]
    storage = app.project(args["cwd"]).decision_storage
    storage.record_fires(args["session"], fires, datetime.fromisoformat(args["at"]))


def _record_predictions(app: Runtime, args: Mapping[str, Any]) -> None:
    from thatch.predlog.recording import record_session

    harness = app.plugins.harness(args["harness"])
    if harness is None:
        log.warning(
            "prediction log: %s not recorded: the harness %r is no longer installed",
            args["transcript"],
            args["harness"],
        )
        return
    record_session(app, harness, Path(args["transcript"]), args["session"])


KINDS: Mapping[str, _Kind] = {
    "recall": _Kind(_record_recall, lambda args: f"the recall counts of memories {args['ids']}"),
    "fires": _Kind(
        _record_fires,
        lambda args: (
            f"the fire log of predictions {[fire[0] for fire in args['fires']]} "
            f"shown to session {args['session']}"
        ),
    ),
    "predlog": _Kind(
        _record_predictions, lambda args: f"the prediction log of {args['transcript']}"
    ),
}
