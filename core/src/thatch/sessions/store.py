"""The session store: per-session tool queues and nudge state, in a local SQLite file.

The daemon records every hook event here before it answers, so what a
session did survives a daemon restart: the queue of tool interactions the
agent has not yet turned into memories, how often it was nudged about them,
which memories it was already shown, whether it is compacting, the
nudges held for a harness that reads them only with a later event, and the
writes to the storage backend that failed after a hook's answer and wait to
be tried again (:mod:`thatch.deferred`).

The file is always local (``<state dir>/sessions.db``), never the user's
shared storage backend: it holds raw tool output, which must not leave the
machine. One :class:`SessionStore` serves every thread of the daemon; other
processes may open the same file at the same time (SQLite serializes them).
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch.plugin.events import Event
from thatch.sessions.held import Callback, decode, encode
from thatch.sessions.records import (
    Delivered,
    Interaction,
    NewInteraction,
    PendingWrite,
    SessionState,
)
from thatch.sessions.schema import open_connection

if TYPE_CHECKING:
    from thatch.plugin.nudge import Nudge

__all__ = [
    "COMPACT_TIMEOUT_SECONDS",
    "MAX_DELIVERED",
    "Delivered",
    "Interaction",
    "NewInteraction",
    "PendingWrite",
    "SessionState",
    "SessionStore",
]

#: A compaction counts as over this long after it began, even when the
#: harness never reports its end.
COMPACT_TIMEOUT_SECONDS = 600.0

#: Delivered nudges kept per session, the latest: enough to read a long
#: session's story on its page, bounded so a week-long session stays small.
MAX_DELIVERED = 300

_SESSION_COLUMNS = (
    "s.session_id, s.harness, s.cwd, s.prompts, s.nudge_level, s.last_nudged_seq, "
    "s.compacting_since, s.last_seen, "
    "(SELECT COUNT(*) FROM interactions i WHERE i.session_id = s.session_id), s.parent_id"
)


_WRITE_COLUMNS = "id, kind, args, tries, next_at, last_error, created_at"


def _pending_write(row: tuple[Any, ...]) -> PendingWrite:
    return PendingWrite(
        id=int(row[0]),
        kind=str(row[1]),
        args=str(row[2]),
        tries=int(row[3]),
        next_at=float(row[4]),
        last_error=str(row[5]),
        created_at=float(row[6]),
    )


class SessionStore:
    """Per-session queues and nudge state, safe to share between threads."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        """Open (creating if needed) the store at ``path``.

        :param path: the SQLite file; its folder is created owner-only.
        :param clock: the time source (epoch seconds), replaceable in tests.
        :raises thatch.plugin.errors.StorageError: the file cannot be created or read.
        """
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        self._conn = open_connection(self.path)
        # The held sets' on_delivered callbacks, by the token of their row:
        # a closure cannot be written to the file.
        self._callbacks: dict[str, tuple[Callback, ...]] = {}

    # -- writing -----------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, under the thread lock.

        ``BEGIN IMMEDIATE`` takes the write lock up front, so a second process
        waits on the busy timeout instead of failing half-way through.
        """
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def record(self, event: Event, interactions: Sequence[NewInteraction]) -> bool:
        """Record one hook event and queue its interactions, atomically.

        The event is processed once: when its ``event_id`` — or its
        ``identity``, the same event reported by two harnesses — was recorded
        before, nothing changes.

        :param event: the event; ``event_id`` must be set (core sets it).
        :param interactions: tool interactions to queue, in order.
        :return: True if recorded, False for a duplicate.
        :raises ValueError: ``event.event_id`` is empty.
        """
        if not event.event_id:
            raise ValueError(
                f"event {event.kind!r} of session {event.session_id!r} has no event_id; "
                "core must set it before recording the event"
            )
        now = event.received_at or self._clock()
        with self._transaction() as conn:
            inserted = conn.execute(
                "INSERT OR IGNORE INTO events (event_id, identity, session_id) VALUES (?, ?, ?)",
                (event.event_id, event.identity, event.session_id),
            )
            if inserted.rowcount == 0:
                return False
            # A spool replayed late carries an old received_at: last_seen
            # never moves back. An empty harness, cwd or parent keeps the known one.
            conn.execute(
                """
                INSERT INTO sessions (session_id, harness, cwd, parent_id, last_seen)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (session_id) DO UPDATE SET
                    harness = CASE WHEN excluded.harness = '' THEN harness
                                   ELSE excluded.harness END,
                    cwd = COALESCE(excluded.cwd, cwd),
                    parent_id = COALESCE(excluded.parent_id, parent_id),
                    last_seen = MAX(last_seen, excluded.last_seen)
                """,
                (event.session_id, event.harness, event.cwd, event.parent_session_id, now),
            )
            if event.kind == "prompt":
                conn.execute(
                    "UPDATE sessions SET prompts = prompts + 1 WHERE session_id = ?",
                    (event.session_id,),
                )
            elif event.kind == "compact":
                conn.execute(
                    "UPDATE sessions SET compacting_since = ? WHERE session_id = ?",
                    (now, event.session_id),
                )
            elif event.kind == "session_start":
                # A start with source "compact" is how Claude Code ends one;
                # any other start begins a fresh conversation anyway.
                conn.execute(
                    "UPDATE sessions SET compacting_since = NULL WHERE session_id = ?",
                    (event.session_id,),
                )
            conn.executemany(
                """
                INSERT INTO interactions
                    (session_id, tool_name, tool_input, tool_response, call_id, failed, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    (
                        event.session_id,
                        item.tool_name,
                        item.tool_input,
                        item.tool_response,
                        item.call_id,
                        int(item.failed),
                        now,
                    )
                    for item in interactions
                ],
            )
        return True

    def note_extraction_nudge(self, session_id: str, through_seq: int) -> int:
        """Note that an extraction nudge showed the queue up to ``through_seq``.

        Raises the session's nudge level (the next nudge is more insistent)
        and moves the drain boundary of :meth:`extraction_done` to
        ``through_seq`` (never back).

        :return: the new nudge level.
        """
        with self._transaction() as conn:
            self._ensure_session(conn, session_id)
            conn.execute(
                """
                UPDATE sessions SET nudge_level = nudge_level + 1,
                                    last_nudged_seq = MAX(last_nudged_seq, ?)
                WHERE session_id = ?
                """,
                (through_seq, session_id),
            )
            row = conn.execute(
                "SELECT nudge_level FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
        return int(row[0])

    def extraction_done(self, session_id: str) -> int:
        """Drain what the agent was nudged about and reset the nudge level.

        Drains the interactions up to the last nudge's boundary; those queued
        after it stay for the next nudge. A session never nudged drains its
        whole queue: the agent saved on its own.

        A sub-agent's call answers its parent's nudge. Where the harness
        reports a sub-agent's calls under its parent's session (Claude Code),
        the sub-agent passes the session id the nudge gave, which is the
        parent's. Where a sub-agent has a session of its own whose parent
        the harness names (opencode), a call for that session — when it was
        never nudged itself, so the nudge it answers was its parent's — also
        drains the parent up to the parent's boundary and resets its level; a
        sub-agent answering a nudge of its own leaves the parent alone.

        :return: how many interactions were drained (0 for an unknown session).
        """
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT last_nudged_seq, parent_id FROM sessions WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            if row is None:
                return 0
            boundary, parent = int(row[0]), row[1]
            drained = self._drain(conn, session_id, boundary)
            if parent is not None and not boundary:
                drained += self._drain_nudged(conn, parent)
        return drained

    def _drain(self, conn: sqlite3.Connection, session_id: str, boundary: int) -> int:
        """Drain the session's queue up to ``boundary`` (0: all of it) and reset its level."""
        if boundary:
            drained = conn.execute(
                "DELETE FROM interactions WHERE session_id = ? AND seq <= ?",
                (session_id, boundary),
            )
        else:
            drained = conn.execute("DELETE FROM interactions WHERE session_id = ?", (session_id,))
        conn.execute("UPDATE sessions SET nudge_level = 0 WHERE session_id = ?", (session_id,))
        return drained.rowcount

    def _drain_nudged(self, conn: sqlite3.Connection, session_id: str) -> int:
        """Drain what the session's nudges showed; nothing when it was never nudged."""
        row = conn.execute(
            "SELECT last_nudged_seq FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None or not row[0]:
            return 0
        return self._drain(conn, session_id, int(row[0]))

    def mark_shown(self, session_id: str, memory_ids: Iterable[int]) -> None:
        """Remember that the session was shown these memories at its current prompt."""
        ids = sorted(set(memory_ids))
        if not ids:
            return
        with self._transaction() as conn:
            self._ensure_session(conn, session_id)
            conn.executemany(
                """
                INSERT INTO shown (session_id, memory_id, prompt)
                SELECT session_id, ?, prompts FROM sessions WHERE session_id = ?
                ON CONFLICT (session_id, memory_id) DO UPDATE SET prompt = excluded.prompt
                """,
                [(memory_id, session_id) for memory_id in ids],
            )

    def note_delivered(self, session_id: str, event: str, nudges: Sequence[Nudge]) -> None:
        """Log that ``event``'s answer carried ``nudges`` to the session's agent.

        Only the latest :data:`MAX_DELIVERED` of a session are kept.
        """
        if not nudges:
            return
        now = self._clock()
        with self._transaction() as conn:
            self._ensure_session(conn, session_id)  # so purge() finds these rows
            conn.executemany(
                "INSERT INTO delivered (session_id, at, event, source, tier, text) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(session_id, now, event, n.source, n.tier, n.text) for n in nudges],
            )
            conn.execute(
                """
                DELETE FROM delivered WHERE session_id = ? AND id <= (
                    SELECT id FROM delivered WHERE session_id = ?
                    ORDER BY id DESC LIMIT 1 OFFSET ?
                )
                """,
                (session_id, session_id, MAX_DELIVERED),
            )

    def hold(self, session_id: str, harness: str, nudges: Sequence[Nudge]) -> None:
        """Keep ``nudges`` until the session's next event from ``harness`` that can carry them.

        They replace a set still held for the session, which answered an
        older prompt; an empty ``nudges`` only drops that set. The
        ``on_delivered`` callbacks stay in this process: a set taken after
        the daemon restarted comes back without them.
        """
        token = uuid.uuid4().hex
        with self._transaction() as conn:
            replaced = conn.execute(
                "SELECT token FROM held WHERE session_id = ?", (session_id,)
            ).fetchone()
            if not nudges:
                conn.execute("DELETE FROM held WHERE session_id = ?", (session_id,))
            else:
                self._ensure_session(conn, session_id)
                conn.execute(
                    """
                    INSERT INTO held (session_id, harness, token, nudges, held_at)
                    VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (session_id) DO UPDATE SET
                        harness = excluded.harness, token = excluded.token,
                        nudges = excluded.nudges, held_at = excluded.held_at
                    """,
                    (session_id, harness, token, encode(nudges), self._clock()),
                )
                self._callbacks[token] = tuple(nudge.on_delivered for nudge in nudges)
            if replaced is not None:
                self._callbacks.pop(replaced[0], None)

    def take_held(self, session_id: str, harness: str) -> list[Nudge]:
        """The nudges held for the session's ``harness``, handed out once.

        Taking them removes them, atomically: of two hooks asking at the same
        moment, one gets the set and the other nothing.

        :return: the nudges in delivery order, with their ``on_delivered``
            callbacks when this process held them; empty when none wait.
        """
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT token, nudges FROM held WHERE session_id = ? AND harness = ?",
                (session_id, harness),
            ).fetchone()
            if row is None:
                return []
            conn.execute("DELETE FROM held WHERE session_id = ?", (session_id,))
            callbacks = self._callbacks.pop(row[0], ())
        return decode(row[1], callbacks)

    def purge(self, older_than_seconds: float) -> int:
        """Forget the sessions not seen for ``older_than_seconds``, with all they hold.

        Their queues, shown memories, held nudges and event ids go too.

        :return: how many sessions were forgotten.
        """
        cutoff = self._clock() - older_than_seconds
        stale = "SELECT session_id FROM sessions WHERE last_seen < ?"
        with self._transaction() as conn:
            for table in ("interactions", "shown", "held", "events", "delivered"):
                conn.execute(
                    f"DELETE FROM {table} WHERE session_id IN ({stale})",  # noqa: S608
                    (cutoff,),
                )
            purged = conn.execute("DELETE FROM sessions WHERE last_seen < ?", (cutoff,))
            live = {row[0] for row in conn.execute("SELECT token FROM held")}
            self._callbacks = {t: c for t, c in self._callbacks.items() if t in live}
        return purged.rowcount

    # -- writes waiting for the storage backend (thatch.deferred) ----

    def keep_write(
        self,
        kind: str,
        key: str | None,
        args: str,
        *,
        error: str,
        next_at: float,
        limit: int,
    ) -> list[PendingWrite]:
        """Keep a failed write to try again at ``next_at``; it replaces one of the same key.

        :param limit: at most this many wait; the oldest beyond it are dropped.
        :return: the writes dropped to stay within ``limit``, oldest first.
        """
        with self._transaction() as conn:
            if key is not None:
                conn.execute("DELETE FROM pending_writes WHERE kind = ? AND key = ?", (kind, key))
            conn.execute(
                "INSERT INTO pending_writes (kind, key, args, tries, next_at, last_error, "
                "created_at) VALUES (?, ?, ?, 1, ?, ?, ?)",
                (kind, key, args, next_at, error, self._clock()),
            )
            dropped = conn.execute(
                f"SELECT {_WRITE_COLUMNS} FROM pending_writes "  # noqa: S608
                "ORDER BY id DESC LIMIT -1 OFFSET ?",
                (limit,),
            ).fetchall()
            conn.executemany(
                "DELETE FROM pending_writes WHERE id = ?", [(row[0],) for row in dropped]
            )
        return [_pending_write(row) for row in reversed(dropped)]

    def due_writes(self, now: float, limit: int) -> list[PendingWrite]:
        """The kept writes due by ``now``, oldest first, at most ``limit``."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_WRITE_COLUMNS} FROM pending_writes "  # noqa: S608
                "WHERE next_at <= ? ORDER BY id LIMIT ?",
                (now, limit),
            ).fetchall()
        return [_pending_write(row) for row in rows]

    def write_done(self, write_id: int) -> None:
        """Forget a kept write that has now been made (nothing when it was replaced)."""
        with self._transaction() as conn:
            conn.execute("DELETE FROM pending_writes WHERE id = ?", (write_id,))

    def write_failed(self, write_id: int, error: str, next_at: float) -> None:
        """Count a failed try of a kept write; none is tried again before ``next_at``.

        Every other kept write waits until then too: the backend just
        failed, and each try while it is away takes its whole retry time.
        """
        with self._transaction() as conn:
            conn.execute(
                "UPDATE pending_writes SET tries = tries + 1, last_error = ? WHERE id = ?",
                (error, write_id),
            )
            conn.execute("UPDATE pending_writes SET next_at = MAX(next_at, ?)", (next_at,))

    def pending_writes(self) -> list[PendingWrite]:
        """Every kept write, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_WRITE_COLUMNS} FROM pending_writes ORDER BY id"  # noqa: S608
            ).fetchall()
        return [_pending_write(row) for row in rows]

    def next_write_at(self) -> float | None:
        """When the kept write due last is due; None when none waits."""
        with self._lock:
            row = self._conn.execute("SELECT MAX(next_at) FROM pending_writes").fetchone()
        return None if row[0] is None else float(row[0])

    def _ensure_session(self, conn: sqlite3.Connection, session_id: str) -> None:
        """Create a bare row for a session no event was recorded for yet."""
        conn.execute(
            "INSERT OR IGNORE INTO sessions (session_id, last_seen) VALUES (?, ?)",
            (session_id, self._clock()),
        )

    # -- reading -----------------------------------------------------------

    def pending(self, session_id: str, limit: int | None = None) -> list[Interaction]:
        """The session's queued interactions, oldest first; nothing is drained.

        :param limit: at most this many (None: all).
        """
        with self._lock:
            rows = self._conn.execute(
                """
                SELECT seq, session_id, tool_name, tool_input, tool_response, call_id,
                       failed, created_at
                FROM interactions WHERE session_id = ? ORDER BY seq LIMIT ?
                """,
                (session_id, -1 if limit is None else limit),
            ).fetchall()
        return [
            Interaction(
                seq=row[0],
                session_id=row[1],
                tool_name=row[2],
                tool_input=row[3],
                tool_response=row[4],
                call_id=row[5],
                failed=bool(row[6]),
                created_at=row[7],
            )
            for row in rows
        ]

    def state(self, session_id: str) -> SessionState | None:
        """The session's state, or None when nothing was recorded for it."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.session_id = ?",  # noqa: S608
                (session_id,),
            ).fetchone()
        return None if row is None else self._state(row)

    def sessions(self) -> list[SessionState]:
        """Every known session, the most recently seen first."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s ORDER BY s.last_seen DESC"  # noqa: S608
            ).fetchall()
        return [self._state(row) for row in rows]

    def delivered(self, session_id: str, limit: int = MAX_DELIVERED) -> list[Delivered]:
        """The nudges the session's agent was given, the latest ``limit``, newest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT at, event, source, tier, text FROM delivered WHERE session_id = ? "
                "ORDER BY id DESC LIMIT ?",
                (session_id, limit),
            ).fetchall()
        return [
            Delivered(session_id, float(at), str(event), str(source), int(tier), str(text))
            for at, event, source, tier, text in rows
        ]

    def shown_recently(self, session_id: str, memory_ids: Iterable[int], window: int) -> set[int]:
        """The ``memory_ids`` shown to the session within its last ``window`` prompts.

        A memory shown at prompt ``p`` counts as recent up to and including
        prompt ``p + window``; with ``window`` 0, only at the same prompt.
        """
        wanted = set(memory_ids)
        if not wanted:
            return set()
        with self._lock:
            rows = self._conn.execute(
                """
                SELECT sh.memory_id FROM shown sh JOIN sessions s USING (session_id)
                WHERE sh.session_id = ? AND sh.prompt >= s.prompts - ?
                """,
                (session_id, window),
            ).fetchall()
        return wanted.intersection(row[0] for row in rows)

    def _state(self, row: tuple[Any, ...]) -> SessionState:
        compacting_since = row[6]
        compacting = (
            compacting_since is not None
            and self._clock() - compacting_since < COMPACT_TIMEOUT_SECONDS
        )
        return SessionState(
            session_id=str(row[0]),
            harness=str(row[1]),
            cwd=None if row[2] is None else str(row[2]),
            prompts=int(row[3]),
            nudge_level=int(row[4]),
            last_nudged_seq=int(row[5]),
            compacting=compacting,
            last_seen=float(row[7]),
            pending=int(row[8]),
            parent_id=None if row[9] is None else str(row[9]),
        )

    def close(self) -> None:
        """Close the database connection; the store cannot be used afterwards."""
        with self._lock:
            self._conn.close()
