"""Recording a session's Predictions: its transcript read by its harness, new rows logged.

Called after a Stop hook is answered (:mod:`thatch.builtin.predlog`), and again
by the daemon for a Stop whose write the storage refused (:mod:`thatch.deferred`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thatch.plugin.harness import Harness
    from thatch.plugin.prediction_log import Candidate, LoggedPrediction
    from thatch.runtime import Runtime

log = logging.getLogger("thatch")


def record_session(app: Runtime, harness: Harness, transcript: Path, session_id: str) -> None:
    """Log every Prediction of the session's transcript not logged yet.

    A harness without a transcript reader gives nothing. A transcript that
    cannot be read, or a Prediction that does not load, is logged and skipped:
    the agent's next Stop tries again.

    :raises StorageError: the prediction-log storage failed; the daemon keeps
        the write and tries it again (:mod:`thatch.deferred`).
    """
    from thatch.plugin.errors import StorageError, ThatchError

    try:
        candidates = harness.read_transcript(transcript)
        if candidates is None:
            return
        rows = rows_from(candidates, session_id, transcript)
        if rows:
            added = sum(app.thatch.prediction_storage.record_predictions(rows))
            log.info("prediction log: %d new of %d rows from %s", added, len(rows), transcript)
    except StorageError:
        raise
    except ThatchError as exc:
        log.warning("prediction log: %s not recorded: %s", transcript, exc)
    except Exception:
        log.exception("prediction log: recording %s failed", transcript)


def rows_from(
    candidates: Iterable[Candidate], session_id: str, path: Path
) -> list[LoggedPrediction]:
    """The transcript's rows; a Prediction that cannot be read is named by ``path:line``."""
    from thatch.plugin.errors import InvalidInputError
    from thatch.predlog.blocks import MalformedPrediction
    from thatch.predlog.transcript import rows_of

    try:
        return rows_of(candidates, session_id, datetime.now(UTC))
    except MalformedPrediction as exc:
        where = f"{path}:{exc.line}" if exc.line is not None else str(path)
        raise InvalidInputError(f"{where}: {exc.problem}") from None
