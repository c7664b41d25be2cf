"""Fixtures for the Claude plugin's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from thatch_claude.failures import REPORTED


@pytest.fixture(autouse=True)
def no_failures_remembered() -> Iterator[None]:
    """Each test starts with no failure events seen: the plugin's record outlives a test."""
    REPORTED.clear()
    yield
    REPORTED.clear()
