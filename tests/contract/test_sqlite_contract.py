"""The sqlite backend passes each part's contract as thatch opens it: through its hooks.

:mod:`test_third_party_backend` runs the whole suite on ``SQLiteStorage``
itself; here every part comes from its own hook, on a config whose parts all
name sqlite, and each suite runs alone, as it would for a backend that keeps
only that part.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import thatch_sqlite.plugin
from thatch.plugin import Config
from thatch.testing.contracts import (
    DecisionStorageContract,
    MemoryStorageContract,
    PredictionStorageContract,
)


def _config(directory: Path) -> Config:
    """The config of a THATCH_HOME under ``directory``: every part in sqlite."""
    return Config.load(directory, environ={})


class TestSQLiteMemories(MemoryStorageContract):
    def open_backend(self, directory: Path) -> Any:
        return thatch_sqlite.plugin.thatch_memory_storage(_config(directory))


class TestSQLiteDecisions(DecisionStorageContract):
    def open_backend(self, directory: Path) -> Any:
        return thatch_sqlite.plugin.thatch_decision_storage(_config(directory))


class TestSQLitePredictionLog(PredictionStorageContract):
    def open_backend(self, directory: Path) -> Any:
        return thatch_sqlite.plugin.thatch_prediction_storage(_config(directory))
