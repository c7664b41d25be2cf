"""The memory storage contract on a server with pgvector, every search by meaning on the server.

As test_postgres_contract.py, on pgserver's PostgreSQL with pgvector and
``server_search_from = 0``: whatever the size of the store, the server
ranks (its HNSW index), and the suite checks that its answers keep every
promise the in-memory copy keeps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import thatch_postgres.plugin
from pg_cluster import Server
from pg_handles import postgres_home
from thatch.plugin import Config
from thatch.testing.contracts import MemoryStorageContract


def pgvector_home(directory: Path, server: Server) -> Config:
    """The config of a THATCH_HOME whose memories the pgvector server keeps and searches."""
    return postgres_home(
        directory,
        server,
        parts='memories = "postgres"',
        settings='server_search = "auto"\nserver_search_from = 0\n',
    )


class TestServerSearchMemories(MemoryStorageContract):
    @pytest.fixture(autouse=True)
    def _server(self, pgvector_server: Server) -> None:
        self.server = pgvector_server

    def open_backend(self, directory: Path) -> Any:
        storage = thatch_postgres.plugin.thatch_memory_storage(
            pgvector_home(directory, self.server)
        )
        assert storage is not None
        assert storage.server_search == "in use"
        return storage
