"""Throw-away PostgreSQL servers (see :mod:`pg_cluster`), or a skip naming the fix."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_cluster import Server, ServerMissing, pgvector_programs, running_server, schema_for
from pg_handles import Open
from thatch_postgres.storage import PostgresStorage


def _server() -> Iterator[Server]:
    try:
        with running_server() as server:
            yield server
    except ServerMissing as missing:
        pytest.skip(str(missing))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """One server for the whole session, stopped and deleted at its end."""
    yield from _server()


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[Server]:
    """One server with pgvector for the whole session (pgserver's PostgreSQL 16)."""
    try:
        with pgvector_programs() as programs, running_server(programs) as server:
            yield server
    except ServerMissing as missing:
        pytest.skip(str(missing))


@pytest.fixture
def private_postgres_server() -> Iterator[Server]:
    """A server of the test's own, for a test that stops or restarts it."""
    yield from _server()


@pytest.fixture
def open_handle(postgres_server: Server, tmp_path: Path) -> Iterator[Open]:
    """Opens handles on one schema of this test's own, each closed afterwards."""
    opened: list[PostgresStorage] = []

    def open_one() -> PostgresStorage:
        storage = PostgresStorage(postgres_server.dsn(), schema_for(tmp_path))
        opened.append(storage)
        return storage

    yield open_one
    for storage in opened:
        storage.close()
