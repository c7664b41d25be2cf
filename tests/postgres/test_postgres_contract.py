"""The postgres backend passes every storage contract suite on a real server, as thatch opens it.

Each test's folder is a THATCH_HOME whose config keeps every part in
postgres, on the session's throw-away server, in a schema of the test's own;
each part comes from its own hook and each suite runs alone, as it would for
a backend that keeps only that part.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import thatch_postgres.plugin
from pg_cluster import Server
from pg_handles import postgres_home
from thatch.testing.contracts import (
    DecisionStorageContract,
    MemoryStorageContract,
    PredictionStorageContract,
)


class TestPostgresMemories(MemoryStorageContract):
    @pytest.fixture(autouse=True)
    def _server(self, postgres_server: Server) -> None:
        self.server = postgres_server

    def open_backend(self, directory: Path) -> Any:
        return thatch_postgres.plugin.thatch_memory_storage(postgres_home(directory, self.server))


class TestPostgresPredictionLog(PredictionStorageContract):
    @pytest.fixture(autouse=True)
    def _server(self, postgres_server: Server) -> None:
        self.server = postgres_server

    def open_backend(self, directory: Path) -> Any:
        config = postgres_home(directory, self.server)
        return thatch_postgres.plugin.thatch_prediction_storage(config)


class TestPostgresDecisions(DecisionStorageContract):
    @pytest.fixture(autouse=True)
    def _server(self, postgres_server: Server) -> None:
        self.server = postgres_server

    def open_backend(self, directory: Path) -> Any:
        return thatch_postgres.plugin.thatch_decision_storage(postgres_home(directory, self.server))
