"""A forgotten memory's bytes leave the database file, whatever SQLite's build default.

This machine's SQLite may already overwrite deleted content by default; the
tests make every new connection start with ``secure_delete`` off, as builds
with the stock default do, so they check what thatch sets itself.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.plugin.config import Config
from thatch.plugin.sqlite import erase_on_delete
from thatch.sessions.schema import open_connection
from thatch.testing import plugins_with

#: Punctuation only: the full-text index keeps no token of it, so only the
#: memory's own row ever holds these bytes.
MARKER = "~!@#$%^&*~!@#$%^&*~!@#$%^&*"


@pytest.fixture(autouse=True)
def stock_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every new connection starts with secure_delete off."""
    real_connect = sqlite3.connect

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)  # type: ignore[arg-type]
        conn.execute("PRAGMA secure_delete = OFF")
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)


def _file_bytes(path: Path) -> bytes:
    """The database file and its -wal after a checkpoint that empties the -wal."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_erase_on_delete_overwrites_deleted_rows(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    conn = sqlite3.connect(path, isolation_level=None)
    erase_on_delete(conn)
    assert conn.execute("PRAGMA secure_delete").fetchone() == (1,)
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.execute("INSERT INTO t VALUES (?)", (MARKER,))
    conn.execute("DELETE FROM t")
    conn.close()
    assert MARKER.encode() not in _file_bytes(path)


def test_forget_leaves_no_byte_of_the_memory_in_the_store(home: Path, tmp_path: Path) -> None:
    th = Thatch(Config.load(home, environ={}), plugins_with(thatch_sqlite.plugin), tmp_path)
    with th:
        th.remember("deploy-key", f"The deploy key is {MARKER} until May", store="global")
        th.forget("deploy-key", "global")
        database = th.config.db_path
    assert MARKER.encode() not in _file_bytes(database)


def test_the_session_store_erases_what_it_deletes(tmp_path: Path) -> None:
    conn = open_connection(tmp_path / "sessions.db")
    assert conn.execute("PRAGMA secure_delete").fetchone() == (1,)
    conn.close()


def test_forget_leaves_no_word_of_the_memory_in_the_full_text_index(
    home: Path, tmp_path: Path
) -> None:
    word = "zqxjvorpalk"  # the stemmer leaves it whole, so the index holds these bytes
    th = Thatch(Config.load(home, environ={}), plugins_with(thatch_sqlite.plugin), tmp_path)
    with th:
        for n in range(20):
            th.remember(f"note-{n}", f"ordinary note number {n}", store="global")
        th.remember("sword", f"The password hint is {word}", store="global")
        th.forget("sword", "global")
        database = th.config.db_path
    assert word.encode() not in _file_bytes(database)
