"""Forgetting a memory leaves no word of it in the full-text index."""

from __future__ import annotations

import sqlite3

#: From this version FTS5 removes a deleted row's tokens at once (``secure-delete``).
FTS_SECURE_DELETE = (3, 42, 0)


def scrub_index(conn: sqlite3.Connection) -> None:
    """Leave no token of a forgotten memory in the full-text index.

    FTS5 records a deletion as a marker and keeps the old tokens in their
    segment until a merge, so ``secure_delete`` alone would leave the words
    of a forgotten memory readable in the file. Newer SQLite erases them at
    delete time (see :func:`erase_index_on_delete`); older builds merge the
    whole index now, about 0.3 s at 100k memories, paid only on ``forget``.
    """
    if sqlite3.sqlite_version_info < FTS_SECURE_DELETE:
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")


def erase_index_on_delete(conn: sqlite3.Connection) -> None:
    """Where SQLite can, make the full-text index erase tokens when a row is deleted.

    The setting is stored in the index, so this writes only once per file.
    """
    if sqlite3.sqlite_version_info < FTS_SECURE_DELETE:
        return
    current = conn.execute("SELECT v FROM memories_fts_config WHERE k = 'secure-delete'").fetchone()
    if current is None or current[0] != 1:
        conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1)")
