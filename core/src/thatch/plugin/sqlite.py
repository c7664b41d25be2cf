"""SQLite file handling shared by the session store and the SQLite storage plugin.

Both open a file that several processes may create at the same moment, and
both keep it owner-only.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path


def retry_when_busy(step: Callable[[], object], timeout_ms: int) -> None:
    """Run ``step`` again while SQLite refuses it as busy, for up to ``timeout_ms``.

    SQLite does not wait where waiting could deadlock: a connection that
    holds a shared lock and needs an exclusive one (switching to WAL) fails
    at once instead of calling the busy handler. Processes opening a new file
    together meet exactly that; callers pass only steps safe to repeat.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.005, 0.05))


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused for a lock held elsewhere (worth retrying)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # an error raised by Python, not by SQLite
        return "locked" in str(exc) or "busy" in str(exc)
    return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def erase_on_delete(conn: sqlite3.Connection) -> None:
    """Make SQLite overwrite what this connection deletes, instead of only unlinking it.

    A forgotten memory, or a spooled tool call holding a secret, must not stay
    readable in free pages of the file. Builds differ in their default (the
    setting is per connection and a compile-time option), so it is set on
    every open, before anything is written.
    """
    conn.execute("PRAGMA secure_delete = ON")


def use_wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode: readers never block the writer nor each other.

    The mode is stored in the file, so only the first open switches it.
    """
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")


def create_private(path: Path, *, narrow: bool = False) -> None:
    """Create the folder (0700) and an empty owner-only file, unless they exist.

    The file is made before SQLite opens it because SQLite would create it
    per the umask, often world-readable, and it gives the -wal and -shm
    files the database file's mode. ``narrow`` also takes group and other
    access away from an existing file. Raises ``OSError``.
    """
    from thatch.private import check_owned, make_private_dirs

    make_private_dirs(path.parent)
    # SQLite takes an existing -wal or -shm file as part of the database.
    for sidecar in ("-wal", "-shm"):
        check_owned(f"{path}{sidecar}")
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    if path.stat().st_uid != os.getuid():
        check_owned(path)
    if narrow and path.stat().st_mode & 0o077:
        path.chmod(0o600)


def user_version(conn: sqlite3.Connection) -> int:
    """The schema version stored in the database header (0 for a new file)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate_schema(
    conn: sqlite3.Connection,
    steps: Sequence[Sequence[str]],
    too_new: Callable[[int, int], Exception],
) -> int:
    """Bring the file to version ``len(steps)``, in one transaction; return the version found.

    ``steps[n]`` holds the statements that take the file from version ``n``
    to ``n + 1``, kept in ``PRAGMA user_version``. Processes opening the file
    at the same moment serialize on ``BEGIN IMMEDIATE``, and the version is
    read again under the lock, so each step runs exactly once. ``conn`` must
    be in autocommit mode (``isolation_level=None``).

    :param too_new: the error raised when the file's version, passed first,
        is above the one this code knows, passed second (written by a newer
        release): its message says what to upgrade.
    """
    target = len(steps)
    found = user_version(conn)
    if found > target:
        raise too_new(found, target)
    if found == target:
        return found
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = user_version(conn)
        if found > target:
            raise too_new(found, target)
        for step in steps[found:]:
            for statement in step:
                conn.execute(statement)
        # PRAGMA takes no parameters; target is an int computed above.
        conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute("COMMIT")
    except BaseException:
        # SQLite rolls back by itself after some errors (disk full, I/O).
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return found
