"""The page over a real SQLite home, with the word-hash embedder unless a test loads the model."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import thatch_sqlite.plugin
from starlette.testclient import TestClient
from thatch.api import Thatch
from thatch.plugin.config import Config
from thatch.testing import plugins_with
from thatch.ui.app import build_app
from thatch.ui.guard import Secrets

#: The Host header TestClient sends; the app under test accepts only it.
TEST_HOST = "testserver"


@pytest.fixture
def th(home: Path) -> Iterator[Thatch]:
    with Thatch(Config.load(home, environ={}), plugins_with(thatch_sqlite.plugin), home) as opened:
        yield opened


@pytest.fixture
def keys() -> Secrets:
    return Secrets()


@pytest.fixture
def stranger(th: Thatch, keys: Secrets) -> Iterator[TestClient]:
    """A client that never had the token."""
    with TestClient(build_app(th, keys, [TEST_HOST]), follow_redirects=False) as client:
        yield client


@contextlib.contextmanager
def signed_in(th: Thatch, keys: Secrets) -> Iterator[TestClient]:
    """A client of the page over ``th`` that opened the printed URL, so it holds the cookie."""
    with TestClient(build_app(th, keys, [TEST_HOST]), follow_redirects=False) as client:
        answer = client.get(f"/?token={keys.access}")
        assert answer.status_code == 303
        yield client


@pytest.fixture
def client(th: Thatch, keys: Secrets) -> Iterator[TestClient]:
    """A client that opened the printed URL, so it holds the cookie."""
    with signed_in(th, keys) as client:
        yield client


@pytest.fixture
def client_of(keys: Secrets) -> Callable[[Thatch], contextlib.AbstractContextManager[TestClient]]:
    """Signed-in clients of pages over other API objects (e.g. one seen from a repository)."""
    return lambda th: signed_in(th, keys)
