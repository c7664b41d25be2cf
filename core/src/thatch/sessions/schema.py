"""Opening the session database: permissions, connection settings, schema versions.

The file holds tool output of live sessions, so it is made owner-only before
SQLite ever opens it, and it is only ever a local file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from thatch.plugin.errors import StorageError
from thatch.plugin.sqlite import (
    create_private,
    erase_on_delete,
    migrate_schema,
    retry_when_busy,
    use_wal,
)

#: Milliseconds a writer waits for another connection's transaction.
BUSY_TIMEOUT_MS = 10_000

# Applied on every open, busy_timeout first so the others may wait for a lock.
# synchronous=NORMAL in WAL mode: a commit is in the WAL file before COMMIT
# returns, so a killed daemon loses nothing; only a power cut can drop the
# last commits, and this state is transient (a lost queue entry is a missed
# fact, not lost user data), which is not worth an fsync per hook call.
_SETTINGS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
    "PRAGMA synchronous = NORMAL",
)

Step = Sequence[str]

# v1: sessions, the event ids seen (for duplicates), queued interactions and
# the memories shown to each session.
_V1: Step = (
    # compacting_since is NULL when the session is not compacting; the
    # store treats an old value as ended (a harness may never say so).
    """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        harness TEXT NOT NULL DEFAULT '',
        cwd TEXT,
        prompts INTEGER NOT NULL DEFAULT 0,
        nudge_level INTEGER NOT NULL DEFAULT 0,
        last_nudged_seq INTEGER NOT NULL DEFAULT 0,
        compacting_since REAL,
        last_seen REAL NOT NULL
    )
    """,
    "CREATE INDEX sessions_last_seen ON sessions (last_seen)",
    # identity is UNIQUE too; SQLite lets any number of rows hold NULL there.
    """
    CREATE TABLE events (
        event_id TEXT PRIMARY KEY,
        identity TEXT UNIQUE,
        session_id TEXT NOT NULL
    )
    """,
    "CREATE INDEX events_session ON events (session_id)",
    # AUTOINCREMENT: a drained seq is never handed out again, so a nudge's
    # "through seq" can never cover an interaction queued after it.
    """
    CREATE TABLE interactions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        tool_input TEXT NOT NULL,
        tool_response TEXT NOT NULL,
        call_id TEXT,
        failed INTEGER NOT NULL DEFAULT 0 CHECK (failed IN (0, 1)),
        created_at REAL NOT NULL
    )
    """,
    "CREATE INDEX interactions_session ON interactions (session_id, seq)",
    """
    CREATE TABLE shown (
        session_id TEXT NOT NULL,
        memory_id INTEGER NOT NULL,
        prompt INTEGER NOT NULL,
        PRIMARY KEY (session_id, memory_id)
    ) WITHOUT ROWID
    """,
)

# v2: the nudges held for a session whose harness cannot read them from the
# prompt hook, until its next event that can carry them (see thatch.sessions.held).
# One set per session: a newer prompt's set replaces it. ``token`` pairs the
# row with the callbacks only the process that held it has.
_V2: Step = (
    """
    CREATE TABLE held (
        session_id TEXT PRIMARY KEY,
        harness TEXT NOT NULL,
        token TEXT NOT NULL,
        nudges TEXT NOT NULL,
        held_at REAL NOT NULL
    )
    """,
)

# v3: the session a sub-agent's session was started by, when the harness
# says (NULL otherwise), so its extraction_done can answer the parent's nudge.
_V3: Step = ("ALTER TABLE sessions ADD COLUMN parent_id TEXT",)

# v4: what each session's agent was told: every nudge a hook answer carried,
# with the event that carried it, for ``thatch ui``'s session page. Kept for
# the session's life, the latest few hundred (see SessionStore.note_delivered).
_V4: Step = (
    """
    CREATE TABLE delivered (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        at REAL NOT NULL,
        event TEXT NOT NULL,
        source TEXT NOT NULL,
        tier INTEGER NOT NULL,
        text TEXT NOT NULL
    )
    """,
    "CREATE INDEX delivered_session ON delivered (session_id, id)",
)

# v5: writes to the storage backend that failed after a hook was answered
# (see thatch.deferred), kept to be tried again, so a daemon restart
# loses none. Each is a kind and its JSON arguments (ids, times, a transcript
# path), never tool output. ``key``: a newer write of the same kind and key
# makes a waiting one moot (it replaces it). Not per session: purge() keeps them.
_V5: Step = (
    """
    CREATE TABLE pending_writes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        key TEXT,
        args TEXT NOT NULL,
        tries INTEGER NOT NULL,
        next_at REAL NOT NULL,
        last_error TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    "CREATE INDEX pending_writes_key ON pending_writes (kind, key)",
)

#: ``MIGRATIONS[n]`` takes the file from version ``n`` to ``n + 1``. Append
#: steps; never edit one that was released.
MIGRATIONS: tuple[Step, ...] = (_V1, _V2, _V3, _V4, _V5)
SCHEMA_VERSION = len(MIGRATIONS)


def open_connection(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the session database at ``path``.

    The connection is in autocommit mode (transactions are explicit) and may
    be used from any thread under the caller's lock.
    """
    _create_private(path)
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        for statement in _SETTINGS:
            conn.execute(statement)
        erase_on_delete(conn)
        opened = conn
        retry_when_busy(lambda: use_wal(opened), BUSY_TIMEOUT_MS)
        retry_when_busy(lambda: migrate(opened, path), BUSY_TIMEOUT_MS)
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise StorageError(
            f"cannot open the session store {path}: {exc}; it holds only the queues of "
            "running sessions, so delete it (thatch makes a new one) or free the disk"
        ) from exc
    except StorageError:
        if conn is not None:
            conn.close()
        raise
    return conn


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to :data:`SCHEMA_VERSION` in one transaction."""

    def too_new(found: int, target: int) -> StorageError:
        return StorageError(
            f"the session store {path} has schema version {found}, newer than this "
            f"thatch knows ({target}); upgrade thatch, or delete the file"
        )

    migrate_schema(conn, MIGRATIONS, too_new)


def _create_private(path: Path) -> None:
    """Make the folder (0700) and an empty owner-only file before SQLite does.

    SQLite would create the file per the umask, often world-readable, and it
    gives the -wal and -shm files the database file's mode. A file found with
    a wider mode is narrowed: it may hold tool output with secrets the
    redactor missed.
    """
    try:
        create_private(path, narrow=True)
    except OSError as exc:
        raise StorageError(
            f"cannot create the session store {path}: {exc.strerror}; make its folder "
            "writable, or point THATCH_HOME at a writable folder"
        ) from exc
