"""Connections to the server: one small pool per open storage, every session set alike.

Each connection runs in autocommit, so a read is its own statement and a
write opens an explicit transaction; its ``search_path`` is the configured
schema and its time zone UTC, so timestamps come back as UTC moments.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TypeAlias

import psycopg
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool, PoolTimeout
from thatch.plugin import StorageError

Connection: TypeAlias = psycopg.Connection[TupleRow]

#: Connections one storage keeps: the daemon's threads search and write at once.
MAX_CONNECTIONS = 4

#: Seconds to wait for a connection before reporting the server unreachable.
CONNECT_TIMEOUT = 10.0

#: Seconds the pool keeps trying to replace a connection it lost before it gives up.
#: The pool's own tries come 1, 2, 4 ... s apart, doubling to minutes: left to it, a
#: server back after 3 s would wait for the try at 7 s. Given up early, the slot is
#: free, and the next borrow asks for a new connection at once (see borrow()).
RECONNECT_SECONDS = 1.0

#: Seconds one request to the pool waits for a connection; a borrow asks again until
#: its time is up, so that each request can set off a new try to connect.
ASK_SECONDS = 0.5


def open_pool(
    dsn: str, schema: str, connect_timeout: float = CONNECT_TIMEOUT
) -> ConnectionPool[Connection]:
    """A pool on ``dsn`` whose sessions see ``schema``; raises StorageError if none connects."""
    pool: ConnectionPool[Connection] = ConnectionPool(
        dsn,
        # The schema name is checked to be a plain identifier (settings), so
        # it is safe unquoted here.
        kwargs={"autocommit": True, "options": f"-c search_path={schema} -c TimeZone=UTC"},
        min_size=1,
        max_size=MAX_CONNECTIONS,
        # No check before each use (it cost a round trip on every call): a
        # connection the server dropped fails its first statement, the pool
        # discards it when it comes back, and the call is tried again on
        # another (thatch_postgres.retry, thatch_postgres.pooled).
        timeout=connect_timeout,
        reconnect_timeout=RECONNECT_SECONDS,
        name=f"thatch-{schema}",
        open=False,
    )
    pool.open(wait=False)
    try:
        with borrow(pool, connect_timeout):
            pass
    except PoolTimeout as exc:
        pool.close()
        raise StorageError(
            f"could not connect to PostgreSQL ({describe(dsn)}) within {connect_timeout:g} s"
            f"{_why_not(dsn)}; check [storage.postgres] dsn or THATCH_DATABASE_URL, that the "
            "server runs, and that ~/.pgpass or PGPASSWORD holds the password"
        ) from exc
    return pool


def _why_not(dsn: str) -> str:
    """``: the server's or libpq's reason`` a connection to ``dsn`` fails now ("" if it does not).

    The pool keeps its tries' errors to itself (it logs them), so the error
    that reports the timeout would name every cause but the one at hand: a
    database or role that does not exist, a password refused, a bad option.
    One more try, never longer than a second or two, names it.
    """
    try:
        psycopg.connect(dsn, connect_timeout=2).close()
    except psycopg.Error as exc:
        # libpq's message, its lines joined: it names the socket or host, never a password.
        return ": " + " ".join(str(exc).split())
    return ""


@contextmanager
def borrow(pool: ConnectionPool[Connection], timeout: float) -> Iterator[Connection]:
    """A connection of ``pool``, waited for up to ``timeout`` seconds; else PoolTimeout.

    Asked for again every ASK_SECONDS: a pool whose tries to reconnect gave
    up (RECONNECT_SECONDS) starts a new one on each request.
    """
    deadline = time.monotonic() + timeout
    with ExitStack() as stack:
        while True:
            # Never 0: the pool refuses a request of no time even with a connection ready.
            wait = max(min(ASK_SECONDS, deadline - time.monotonic()), 0.001)
            try:
                conn = stack.enter_context(pool.connection(timeout=wait))
                break
            except PoolTimeout:
                if time.monotonic() >= deadline:
                    raise
        yield conn


@contextmanager
def reporting(action: str, dsn: str) -> Iterator[None]:
    """Turn a lost or refused connection into a StorageError the caller can report."""
    try:
        yield
    except (psycopg.errors.TransactionRollback, psycopg.errors.DeadlockDetected) as exc:
        # A deadlock or serialization failure: the server rolled it all back.
        raise StorageError(
            f"could not {action} on PostgreSQL ({describe(dsn)}): the server rolled it back "
            f"({exc}); nothing of it was saved, and trying again is safe"
        ) from exc
    except (psycopg.OperationalError, PoolTimeout) as exc:
        raise StorageError(
            f"could not {action} on PostgreSQL ({describe(dsn)}): {exc}; "
            "it may not have been saved; try again once the server is reachable"
        ) from exc


def describe(dsn: str) -> str:
    """Where ``dsn`` points, for messages: host, port and database only."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "an unreadable connection string"
    where = [f"{key}={parts[key]}" for key in ("host", "port", "dbname", "user") if parts.get(key)]
    return " ".join(where) or "libpq defaults"
