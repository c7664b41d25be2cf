"""The bench scripts, imported in tests as they import each other: with bench/ on sys.path."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@contextlib.contextmanager
def bench_script(name: str) -> Iterator[ModuleType]:
    """``bench/<name>.py`` as a module, bench/ on sys.path until the block ends."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCH))
        yield importlib.import_module(name)
