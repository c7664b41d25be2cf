"""Opening the database file: permissions, connection settings, migrations.

Every failure becomes a :class:`~thatch.plugin.errors.StorageError` that names the
file and what to do about it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from thatch.plugin import StorageError
from thatch.plugin.sqlite import create_private, erase_on_delete, retry_when_busy, use_wal

from thatch_sqlite.migrations import migrate
from thatch_sqlite.scrub import erase_index_on_delete

#: Milliseconds a writer waits for another one before giving up.
BUSY_TIMEOUT_MS = 30_000

# Per-connection settings, applied in this order on every open.
_SETTINGS = (
    # Set first: the statements below may already have to wait for a lock.
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
    # Sync the WAL on every commit: a memory the user saved survives a power
    # cut, which is worth a millisecond per write.
    "PRAGMA synchronous = FULL",
    "PRAGMA foreign_keys = ON",
)

#: Bytes of the file read through a memory map (``[storage] mmap_mb``). Memory
#: rows hold their vectors (1.5 kB each), so a text search touches a page per
#: hit; reading them through a map instead of read() calls makes a
#: 100k-memory text search about twice as fast. Pages stay resident in the
#: process once touched, so the long-lived daemon maps nothing by default.
DEFAULT_MMAP_BYTES = 256 * 1024 * 1024


def open_database(path: Path, mmap_bytes: int = DEFAULT_MMAP_BYTES) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the database at ``path``.

    The connection is in autocommit mode (transactions are explicit) and
    may be used from any thread, under the caller's lock.
    """
    _create_private(path)
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(
            path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        for statement in _SETTINGS:
            conn.execute(statement)
        erase_on_delete(conn)
        # PRAGMA takes no parameters; the value is an int we validated.
        conn.execute(f"PRAGMA mmap_size = {int(mmap_bytes)}")
        retry_when_busy(lambda: use_wal(conn), BUSY_TIMEOUT_MS)
        retry_when_busy(lambda: migrate(conn, path), BUSY_TIMEOUT_MS)
        retry_when_busy(lambda: erase_index_on_delete(conn), BUSY_TIMEOUT_MS)
    except StorageError:
        if conn is not None:
            conn.close()
        raise
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise StorageError(
            f"cannot open the thatch database {path}: {exc}; if it is not a thatch "
            "database, move it aside or set THATCH_DB_PATH / [storage] db_path to another file"
        ) from exc
    return conn


def _create_private(path: Path) -> None:
    """Create the folder and an empty file, both owner-only, unless they exist.

    The file is made before SQLite opens it because SQLite would create it
    world-readable (per the umask), and it gives the -wal and -shm files the
    mode of the database file. Existing files keep the mode the user chose.
    """
    try:
        create_private(path)
    except OSError as exc:
        raise StorageError(
            f"cannot open or create the database {path}: {exc.strerror}; "
            "choose a writable place with THATCH_DB_PATH or [storage] db_path"
        ) from exc
