"""Hearing about other machines' writes: ``LISTEN`` on one connection of its own.

Every statement that may change a vector a cache holds sends a notification
(``thatch_vectors``, payload ``"<schema> <table>"``) when it commits (the
trigger of migration 4). A thread here counts them per table; a vector
cache that was current when the count stood at ``n`` is still current while
it stands at ``n``, and can answer a search without asking the server.

Handles of one process on one server and schema share one listener
(:func:`acquire`): a write through one of them is noted at once for all,
so that within a process every handle sees every write, as the storage
contract asks. Only other processes' writes wait for their notification.

While the listening connection is down nothing is heard, so :meth:`epoch`
answers None and caches check the server before each search, as they would
without notifications. Once listening again every count moves: whatever
was written meanwhile is caught up by that check, at the next search.
"""

from __future__ import annotations

import threading
import time
from typing import get_args

import psycopg
from psycopg.conninfo import make_conninfo

from thatch_postgres.retry import BACKOFF_SECONDS
from thatch_postgres.vectors import Table

#: Seconds between checks of the stop flag while no notification comes.
POLL_SECONDS = 0.5
#: Seconds of silence after which the connection is proved alive by a query.
HEARTBEAT_SECONDS = 5.0

# A listening connection only reads, and a network that drops it silently
# (a laptop's sleep, a new Wi-Fi) would leave it deaf and unaware. The
# heartbeat writes; these make a write, or the idle socket, fail within
# seconds rather than the system's minutes. libpq ignores them on a Unix socket.
_LIVENESS = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 2,
    "tcp_user_timeout": 5000,
}

_TABLES: dict[str, Table] = {table: table for table in get_args(Table)}


class ChangeListener:
    """Counts the server's change notifications for one schema, on a thread of its own."""

    def __init__(self, dsn: str, schema: str) -> None:
        self.dsn = dsn
        self.schema = schema
        self._lock = threading.Lock()
        self._epochs: dict[Table, int] = dict.fromkeys(_TABLES.values(), 0)
        self._listening = False
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"thatch-listen-{schema}", daemon=True
        )
        self._thread.start()

    @property
    def listening(self) -> bool:
        """Whether notifications are being heard now."""
        return self._listening

    def epoch(self, table: Table) -> int | None:
        """How many changes of ``table`` were heard; None while not listening (ask the server)."""
        with self._lock:
            return self._epochs[table] if self._listening else None

    def touch(self, table: Table) -> None:
        """Count a change made here: its own notification comes later, and a search may not wait."""
        with self._lock:
            self._epochs[table] += 1

    def close(self) -> None:
        """Stop listening; the thread ends, closing its connection, within POLL_SECONDS.

        Not waited for: a command that searched once would otherwise spend
        up to that long on its way out.
        """
        self._stop.set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread to end after :meth:`close`; whether it did."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                with _connect(self.dsn) as conn:
                    # The trigger's channel; it spans the database, hence the
                    # schema in the payload.
                    conn.execute("LISTEN thatch_vectors")
                    failures = 0
                    self._heard_again()
                    self._listen(conn)
            except psycopg.Error:
                pass  # the server went away, or refused: wait, then connect again
            finally:
                # Even on an unforeseen error, which ends the thread: from
                # now on every search checks the server.
                with self._lock:
                    self._listening = False
            # The waits of every other call that lost its connection; the
            # listener tries for as long as it runs.
            self._stop.wait(BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)])
            failures += 1

    def _heard_again(self) -> None:
        """Listening (again): what was written while deaf is caught up by moving every count."""
        with self._lock:
            for table in self._epochs:
                self._epochs[table] += 1
            self._listening = True

    def _listen(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        quiet_since = time.monotonic()
        while not self._stop.is_set():
            # notifies() returns after the timeout, so the stop flag is seen;
            # a lost connection raises OperationalError out of it.
            for notice in conn.notifies(timeout=POLL_SECONDS):
                quiet_since = time.monotonic()
                schema, _, table = notice.payload.partition(" ")
                known = _TABLES.get(table)
                if schema == self.schema and known is not None:
                    self.touch(known)
            if time.monotonic() - quiet_since >= HEARTBEAT_SECONDS:
                conn.execute("SELECT 1")
                quiet_since = time.monotonic()


# The listener of each (dsn, schema) in this process, and how many handles hold it.
_shared: dict[tuple[str, str], tuple[ChangeListener, int]] = {}
_shared_lock = threading.Lock()


def acquire(dsn: str, schema: str) -> ChangeListener:
    """This process's listener on ``schema`` at ``dsn``, started by its first holder."""
    with _shared_lock:
        listener, holders = _shared.get((dsn, schema), (None, 0))
        if listener is None:
            listener = ChangeListener(dsn, schema)
        _shared[(dsn, schema)] = (listener, holders + 1)
        return listener


def release(listener: ChangeListener) -> None:
    """Let go of a listener from :func:`acquire`; the last holder's release stops it."""
    with _shared_lock:
        key = (listener.dsn, listener.schema)
        held, holders = _shared.get(key, (None, 0))
        if held is not listener:
            return
        if holders > 1:
            _shared[key] = (listener, holders - 1)
            return
        del _shared[key]
    listener.close()


def note_write(dsn: str, schema: str, table: Table) -> None:
    """A write of ``table`` through any handle here: this process's listener counts it now."""
    with _shared_lock:
        listener, _ = _shared.get((dsn, schema), (None, 0))
    if listener is not None:
        listener.touch(table)


def _connect(dsn: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(make_conninfo(dsn, **_LIVENESS), autocommit=True, connect_timeout=10)
