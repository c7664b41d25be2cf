"""Fixtures for the storage contract suite, parametrized over every backend.

A backend proves itself by passing ``test_storage_contract.py`` unchanged. To
add one, write a factory and register it in :data:`BACKENDS`::

    def _postgres(directory: Path) -> Storage:
        dsn = os.environ.get("THATCH_TEST_POSTGRES_DSN")
        if not dsn:
            pytest.skip("set THATCH_TEST_POSTGRES_DSN to run the postgres contract tests")
        from thatch_postgres.storage import PostgresStorage

        # One schema per test directory: the factory called twice with the
        # same directory must open the same data (persistence tests do this).
        return PostgresStorage(dsn, schema="t_" + hashlib.sha1(bytes(directory)).hexdigest()[:16])

    BACKENDS["postgres"] = _postgres
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from thatch.plugin.storage import Storage

#: Builds a backend whose data lives under the given directory. Called again
#: with the same directory, it must open the same data.
Factory = Callable[[Path], Storage]


def _sqlite(directory: Path) -> Storage:
    from thatch_sqlite.storage import SQLiteStorage

    return SQLiteStorage(directory / "thatch.db")


BACKENDS: dict[str, Factory] = {"sqlite": _sqlite}


class Opener:
    """Opens backends on one test's directory and closes them all at teardown."""

    def __init__(self, factory: Factory, directory: Path) -> None:
        self._factory = factory
        self._directory = directory
        self._opened: list[Storage] = []

    def __call__(self) -> Storage:
        storage = self._factory(self._directory)
        self._opened.append(storage)
        return storage

    def close(self, storage: Storage) -> None:
        """Close one handle now (each handle is closed exactly once)."""
        self._opened.remove(storage)
        storage.close()

    def close_all(self) -> None:
        while self._opened:
            self.close(self._opened[-1])


@pytest.fixture(params=sorted(BACKENDS))
def open_storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens a handle on this test's data; call it again for a second handle."""
    opener = Opener(BACKENDS[request.param], tmp_path / request.param)
    yield opener
    opener.close_all()


@pytest.fixture
def storage(open_storage: Opener) -> Storage:
    """A fresh, empty backend, closed after the test."""
    return open_storage()
