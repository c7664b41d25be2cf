"""thatch's pytest plugin: the fixtures of the storage contract suites.

thatch-core registers it under the ``pytest11`` entry point, so pytest loads
it in any environment where thatch is installed; a test run may also name it
with ``-p thatch.testing.pytest_plugin``. Its fixtures serve the subclasses
of the :mod:`thatch.testing.contracts` suites:

- ``open_storage`` — an :class:`Opener` on the test's own folder: each call
  opens another handle on the same data, and every handle is closed after
  the test;
- ``storage`` — one fresh, empty backend, closed after the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Registered before the suites are imported, so that a failing contract test
# shows the values it compared.
pytest.register_assert_rewrite("thatch.testing.contracts")

#: Opens the backend under test on a folder; again with the same folder, the same data.
Factory = Callable[[Path], Any]


class Opener:
    """Opens backends on one test's folder and closes them all at teardown."""

    def __init__(self, factory: Factory, directory: Path) -> None:
        self._factory = factory
        self._directory = directory
        self._opened: list[Any] = []

    def __call__(self) -> Any:
        """Open another handle on this test's data."""
        storage = self._factory(self._directory)
        self._opened.append(storage)
        return storage

    def close(self, storage: Any) -> None:
        """Close one handle now (each handle is closed exactly once)."""
        self._opened.remove(storage)
        storage.close()

    def close_all(self) -> None:
        """Close every handle still open, the newest first."""
        while self._opened:
            self.close(self._opened[-1])


@pytest.fixture
def open_storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens handles on this test's data with the contract subclass's ``open_backend``."""
    factory = getattr(request.instance, "open_backend", None)
    if factory is None:
        raise pytest.UsageError(
            f"{request.node.nodeid} asks for a storage fixture outside a contract suite; "
            "use it in a subclass of a thatch.testing.contracts class that defines "
            "open_backend(self, directory)"
        )
    directory = tmp_path / "backend"
    directory.mkdir()
    opener = Opener(factory, directory)
    yield opener
    opener.close_all()


@pytest.fixture
def storage(open_storage: Opener) -> Any:
    """A fresh, empty backend, closed after the test."""
    return open_storage()
