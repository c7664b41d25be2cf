"""Throw-away PostgreSQL servers (see :mod:`pg_cluster`), or a skip naming the fix."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pg_cluster import Server, ServerMissing, running_server


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


@pytest.fixture
def private_postgres_server() -> Iterator[Server]:
    """A server of the test's own, for a test that stops or restarts it."""
    yield from _server()
