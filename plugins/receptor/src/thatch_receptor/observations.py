"""Stage 1 of the receptor: tool calls kept as observations, in a local SQLite file.

Every tool call becomes an :class:`Observation`: its action's short text
(:attr:`thatch_receptor.actions.Action.text`), redacted, with the session, the
repository and the time. The daemon embeds the texts off the hook path and
stores both in an :class:`ObservationStore`; the batch analysis of
:mod:`thatch_receptor.insights` reads them back and stores the insights it
finds there too, so each is offered once.

The file is owner-only (it holds tool output the redactor may have missed),
in WAL mode, and every write is one transaction: several writers may share
it, and a process killed mid-write leaves the last committed state.
Vectors are float32 blobs stored with their dimension; the readers return
only rows of the newest dimension, so a model change never mixes two.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt
from thatch.plugin import Event, StorageError, ToolCall, redact_secrets
from thatch.plugin.sqlite import (
    create_private,
    erase_on_delete,
    migrate_schema,
    retry_when_busy,
    use_wal,
)

from thatch_receptor.actions import MAX_PART, Action, action_of
from thatch_receptor.insights import Insight

#: Longest observation text kept (an action's text is already cut per part).
MAX_TEXT = 400
#: Milliseconds a writer waits for another connection's transaction.
BUSY_TIMEOUT_MS = 10_000
#: Observations a store keeps when the daemon prunes it (newest first):
#: about 45 MB with 384-dimension vectors (2.1 kB a row).
DEFAULT_MAX_ROWS = 20_000

# Terminal colour codes: test runners print them, and they only add noise to
# the text that is embedded and shown.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]|\[\d{1,3}(?:;\d{1,3})*m")

# The line a Python traceback ends with (``ValueError: I/O operation on
# closed file.``): what went wrong, where the first telling line is only
# ``Traceback (most recent call last):``.
_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b:?.*$", re.MULTILINE
)

Matrix = npt.NDArray[np.float32]


@attrs.frozen
class Observation:
    """One tool call as stage 1 keeps it."""

    session_id: str
    #: The repository the session works in, when known.
    repo: str | None
    #: Epoch seconds (or a nominal step time for a replay).
    at: float
    #: The call's short text, redacted (``bash: pytest -q -> exit 1: ...``).
    text: str
    #: The action's kind (``run``, ``edit``, ``search``, ...).
    kind: str
    #: The call went wrong.
    failed: bool
    #: The store's row id; 0 until stored.
    id: int = 0
    #: The files the call touched, redacted (what a struggle's edits name).
    paths: tuple[str, ...] = ()


def observations_of(event: Event, *, repo: str | None, at: float) -> list[Observation]:
    """The observations of an event's tool calls: one per call, redacted, empty ones dropped."""
    found = []
    for call in event.tool_calls:
        action = with_exception(action_of(call), call)
        text = clean_text(action.text)
        if not text:
            continue
        found.append(
            Observation(
                session_id=event.session_id,
                repo=repo,
                at=at,
                text=text,
                kind=action.kind,
                failed=action.failed,
                paths=tuple(p for p in (clean_text(path) for path in action.paths) if p),
            )
        )
    return found


def with_exception(action: Action, call: ToolCall) -> Action:
    """A failed action whose error is a traceback's start, with the exception it ends in."""
    if not action.failed or not (action.error or "").startswith("Traceback"):
        return action
    lines = _EXCEPTION_LINE.findall("\n".join(_call_texts(call)))
    if not lines:
        return action
    line = " ".join(lines[-1].split())
    return attrs.evolve(action, error=line if len(line) <= MAX_PART else line[: MAX_PART - 1] + "…")


def _call_texts(call: ToolCall) -> list[str]:
    """A call's error and its response's output texts."""
    texts = [call.error or ""]
    response = call.response
    if isinstance(response, str):
        texts.append(response)
    elif isinstance(response, dict):
        texts += [
            v
            for k, v in response.items()
            if k in ("stdout", "stderr", "output") and isinstance(v, str)
        ]
    return texts


def clean_text(text: str) -> str:
    """``text`` redacted, colour codes and runs of blanks out, cut to :data:`MAX_TEXT`."""
    text = " ".join(_ANSI.sub("", redact_secrets(text)).split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


# --- the store ----------------------------------------------------------------

# v1: observations (vector NULL until embedded; dim says how many floats the
# blob holds) and the insights offered from them (key: one offer per cluster).
_V1 = (
    """
    CREATE TABLE observations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        repo TEXT,
        at REAL NOT NULL,
        text TEXT NOT NULL,
        kind TEXT NOT NULL,
        failed INTEGER NOT NULL CHECK (failed IN (0, 1)),
        paths TEXT NOT NULL DEFAULT '[]',
        dim INTEGER,
        vector BLOB
    )
    """,
    "CREATE INDEX observations_session ON observations (session_id, id)",
    "CREATE INDEX observations_repo ON observations (repo, id)",
    """
    CREATE TABLE insights (
        key TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        repo TEXT,
        session_ids TEXT NOT NULL,
        observation_ids TEXT NOT NULL,
        created_at REAL NOT NULL,
        delivered_at REAL
    )
    """,
)
#: ``MIGRATIONS[n]`` takes the file from version ``n`` to ``n + 1``. Append
#: steps; never edit one that was released.
MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1,)
SCHEMA_VERSION = len(MIGRATIONS)

_COLUMNS = "id, session_id, repo, at, text, kind, failed, paths"


class ObservationStore:
    """Observations and insights in one owner-only SQLite file.

    One connection, usable from any thread (calls are serialized by a lock);
    other processes may open the same file at the same time.

    :raises StorageError: the file cannot be created, opened or migrated.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn = _open(path)

    # --- observations ---------------------------------------------------------

    def add(self, observations: Sequence[Observation], vectors: Matrix | None) -> list[int]:
        """Store observations (with one vector row each, or none) and return their new ids."""
        if vectors is not None and len(vectors) != len(observations):
            raise ValueError(
                f"{len(observations)} observations but {len(vectors)} vectors; "
                "give one vector row per observation, or None"
            )
        rows = [
            (
                o.session_id,
                o.repo,
                o.at,
                clean_text(o.text),
                o.kind,
                int(o.failed),
                json.dumps([clean_text(p) for p in o.paths]),
                *_blob(None if vectors is None else vectors[i]),
            )
            for i, o in enumerate(observations)
        ]
        with self._write() as conn:
            ids = []
            for row in rows:
                cursor = conn.execute(
                    "INSERT INTO observations (session_id, repo, at, text, kind, failed, paths,"
                    " dim, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                ids.append(int(cursor.lastrowid or 0))
        return ids

    def recent(self, session_id: str, limit: int = 50) -> list[Observation]:
        """A session's newest observations, oldest first."""
        rows = self._read(
            # The columns and clauses put in SQL text are this module's own constants.
            f"SELECT {_COLUMNS} FROM observations WHERE session_id = ?"  # noqa: S608
            " ORDER BY id DESC LIMIT ?",
            (session_id, limit),
        )
        return [_observation(row) for row in reversed(rows)]

    def world(
        self, repo: str | None, *, limit: int = 500, exclude_session: str | None = None
    ) -> tuple[list[Observation], Matrix]:
        """The newest observations with a vector (of the newest dimension), oldest first.

        :param repo: only this repository's; None: every repository's.
        :param exclude_session: leave this session's out (the probe's own problem).
        """
        where, params = _filters(repo, exclude_session=exclude_session)
        return self._with_vectors(where, params, limit=limit)

    def for_clustering(
        self, repo: str | None, since: float | None
    ) -> tuple[list[Observation], Matrix]:
        """Every observation with a vector (newest dimension) from ``since`` on, oldest first."""
        where, params = _filters(repo, since=since)
        return self._with_vectors(where, params, limit=None)

    def count(self) -> int:
        """How many observations the store holds."""
        return int(self._read("SELECT count(*) FROM observations", ())[0][0])

    def prune(self, max_rows: int) -> int:
        """Delete all but the newest ``max_rows`` observations; return how many went."""
        with self._write() as conn:
            cursor = conn.execute(
                "DELETE FROM observations WHERE id NOT IN "
                "(SELECT id FROM observations ORDER BY id DESC LIMIT ?)",
                (max(max_rows, 0),),
            )
            return cursor.rowcount

    # --- insights -------------------------------------------------------------

    def save_insight(self, insight: Insight) -> bool:
        """Store an insight; False when one with its key exists (each is offered once)."""
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO insights (key, kind, text, repo, session_ids,"
                " observation_ids, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    insight.key,
                    insight.kind,
                    clean_text(insight.text),
                    insight.repo,
                    json.dumps(list(insight.session_ids)),
                    json.dumps(list(insight.observation_ids)),
                    insight.created_at,
                ),
            )
            return cursor.rowcount == 1

    def insights(self, *, repo: str | None = None, pending_only: bool = False) -> list[Insight]:
        """The stored insights, oldest first: of one repository (None: all), undelivered only."""
        clauses = ["delivered_at IS NULL"] if pending_only else []
        params: list[object] = []
        if repo is not None:
            clauses.append("repo = ?")
            params.append(repo)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._read(
            "SELECT key, kind, text, repo, session_ids, observation_ids, created_at"  # noqa: S608
            f" FROM insights {where} ORDER BY created_at, rowid",
            params,
        )
        return [
            Insight(
                key=row[0],
                kind=row[1],
                text=row[2],
                repo=row[3],
                session_ids=tuple(json.loads(row[4])),
                observation_ids=tuple(json.loads(row[5])),
                created_at=row[6],
            )
            for row in rows
        ]

    def mark_delivered(self, key: str, at: float | None = None) -> None:
        """Record that an insight reached the agent (it leaves the pending ones)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE insights SET delivered_at = ? WHERE key = ? AND delivered_at IS NULL",
                (time.time() if at is None else at, key),
            )

    def close(self) -> None:
        """Close the connection (the store is unusable afterwards)."""
        with self._lock:
            self._conn.close()

    # --- plumbing -------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once so concurrent writers queue on the lock."""
        with self._lock:
            conn = self._conn
            try:
                retry_when_busy(lambda: conn.execute("BEGIN IMMEDIATE"), BUSY_TIMEOUT_MS)
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _read(self, sql: str, params: Iterable[object]) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    def _with_vectors(
        self, where: list[str], params: list[object], *, limit: int | None
    ) -> tuple[list[Observation], Matrix]:
        """The rows matching ``where`` whose vector has the newest dimension among them."""
        clause = " AND ".join(["vector IS NOT NULL", *where])
        with self._lock:
            newest = self._conn.execute(
                f"SELECT dim FROM observations WHERE {clause} ORDER BY id DESC LIMIT 1",  # noqa: S608
                params,
            ).fetchone()
            if newest is None:
                return [], np.zeros((0, 0), dtype=np.float32)
            dim = int(newest[0])
            rows = self._conn.execute(
                f"SELECT {_COLUMNS}, vector FROM observations WHERE {clause} AND dim = ?"  # noqa: S608
                " ORDER BY id DESC LIMIT ?",
                [*params, dim, -1 if limit is None else limit],
            ).fetchall()
        rows.reverse()
        vectors = np.frombuffer(b"".join(row[-1] for row in rows), dtype=np.float32)
        return [_observation(row) for row in rows], vectors.reshape(len(rows), dim).copy()


def _filters(
    repo: str | None, *, exclude_session: str | None = None, since: float | None = None
) -> tuple[list[str], list[object]]:
    where: list[str] = []
    params: list[object] = []
    if repo is not None:
        where.append("repo = ?")
        params.append(repo)
    if exclude_session is not None:
        where.append("session_id != ?")
        params.append(exclude_session)
    if since is not None:
        where.append("at >= ?")
        params.append(since)
    return where, params


def _blob(vector: npt.NDArray[np.floating] | None) -> tuple[int | None, bytes | None]:
    if vector is None:
        return None, None
    row = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
    return len(row), row.tobytes()


def _observation(row: Sequence[Any]) -> Observation:
    return Observation(
        id=int(row[0]),
        session_id=str(row[1]),
        repo=None if row[2] is None else str(row[2]),
        at=float(row[3]),
        text=str(row[4]),
        kind=str(row[5]),
        failed=bool(row[6]),
        paths=tuple(json.loads(str(row[7]))),
    )


def _open(path: Path) -> sqlite3.Connection:
    """Open (creating it owner-only) and migrate the file at ``path``."""
    try:
        create_private(path, narrow=True)
    except OSError as exc:
        raise StorageError(
            f"cannot create the observation store {path}: {exc.strerror}; make its folder "
            "writable, or point THATCH_HOME at a writable folder"
        ) from exc
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # NORMAL in WAL mode: a commit is in the WAL before COMMIT returns, so a
        # killed daemon loses nothing; only a power cut can drop the last few.
        conn.execute("PRAGMA synchronous = NORMAL")
        erase_on_delete(conn)
        opened = conn
        retry_when_busy(lambda: use_wal(opened), BUSY_TIMEOUT_MS)
        retry_when_busy(lambda: _migrate(opened, path), BUSY_TIMEOUT_MS)
    except (sqlite3.Error, StorageError) as exc:
        if conn is not None:
            conn.close()
        if isinstance(exc, StorageError):
            raise
        raise StorageError(
            f"cannot open the observation store {path}: {exc}; it holds only what the "
            "receptor observed, so delete it (thatch makes a new one) or free the disk"
        ) from exc
    return conn


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to :data:`SCHEMA_VERSION` in one transaction."""

    def too_new(found: int, target: int) -> StorageError:
        return StorageError(
            f"the observation store {path} has schema version {found}, newer than this "
            f"receptor knows ({target}); upgrade thatch-receptor, or delete the file"
        )

    migrate_schema(conn, MIGRATIONS, too_new)
