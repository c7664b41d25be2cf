"""Connections to the server: one small pool per open storage, every session set alike.

Each connection runs in autocommit, so a read is its own statement and a
write opens an explicit transaction; its ``search_path`` is the configured
schema and its time zone UTC, so timestamps come back as UTC moments.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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
        # A pooled connection is checked (one round trip) before each use,
        # so after a server restart or a network drop the pool hands out a
        # fresh connection instead of failing the next call.
        check=ConnectionPool.check_connection,
        timeout=connect_timeout,
        name=f"thatch-{schema}",
        open=False,
    )
    try:
        pool.open(wait=True, timeout=connect_timeout)
    except PoolTimeout as exc:
        pool.close()
        raise StorageError(
            f"could not connect to PostgreSQL ({describe(dsn)}) within {connect_timeout:g} s; "
            "check [storage.postgres] dsn or THATCH_DATABASE_URL, that the server runs, "
            "and that ~/.pgpass or PGPASSWORD holds the password"
        ) from exc
    return pool


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
