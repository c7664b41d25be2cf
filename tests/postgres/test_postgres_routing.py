"""Personal and shared stores side by side: global in the home's SQLite file, acme/* on the server.

This module is also the home's embedder (the word-hash one: no model to load),
registered through ``THATCH_PLUGIN_MODULES``.
"""

from __future__ import annotations

from collections import Counter
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
import thatch
from pg_cluster import Server, schema_for
from pg_handles import query
from thatch.doctor import _storage_places
from thatch.memory.routing import ID_BITS, StoreRouter
from thatch.plugin import Config, ConfigError, hookimpl
from thatch.testing import WordHashEmbedder
from thatch.testing.contracts import MemoryStorageContract
from thatch_postgres.storage import PostgresStorage
from thatch_sqlite.storage import SQLiteStorage


@hookimpl
def thatch_embedder(config: Config) -> WordHashEmbedder:
    return WordHashEmbedder()


@pytest.fixture
def home(postgres_server: Server, tmp_path: Path) -> Path:
    """A home whose global store stays local and whose acme/* stores go to the server."""
    config_file = tmp_path / "home" / "config" / "config.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text(
        '[storage]\nbackend = "sqlite"\n'
        f'[storage.postgres]\ndsn = "{postgres_server.dsn()}"\n'
        f'schema = "{schema_for(tmp_path)}"\n'
        '[storage.stores]\n"acme/*" = "postgres"\n'
    )
    return tmp_path / "home"


def _open(home: Path) -> thatch.Thatch:
    environ = {"THATCH_LOAD_PLUGINS": "sqlite,postgres", "THATCH_PLUGIN_MODULES": __name__}
    return thatch.open(home, cwd=home, environ=environ)


def test_each_memory_lands_where_its_store_is_kept_and_recall_finds_both(
    home: Path, postgres_server: Server, tmp_path: Path
) -> None:
    with _open(home) as th:
        router = th.memory_storage
        assert isinstance(router, StoreRouter)
        assert router.backend == "sqlite+postgres"
        mine = th.remember("tabs", "The user indents code with tabs", store="global").memory
        ours = th.remember("deploy", "Deploy the shop with make ship", store="acme/shop").memory
        assert mine.id < 1 << ID_BITS <= ours.id

        hits = th.recall("indent code and deploy the shop", stores=["global", "acme/shop"])
        assert {hit.memory.label for hit in hits} == {"tabs", "deploy"}
        by_words = th.recall("deploy shop tabs", stores="all", mode="words")
        assert {hit.memory.label for hit in by_words} == {"tabs", "deploy"}
        # Each place counts its own memories' recalls, the relevant hits only.
        threshold = th.thresholds().recall
        recalled = Counter(h.memory.label for h in hits + by_words if h.cosine >= threshold)
        assert [(info.name, info.memories) for info in th.stores()] == [
            ("acme/shop", 1),
            ("global", 1),
        ]
        assert [m.label for m in th.list("all")] == ["deploy", "tabs"]
        assert th.integrity_problems() == []
        where = _storage_places(th.config, ["acme/shop", "global"])
        assert "memories of acme/* (acme/shop) in postgres at host=" in where

    with SQLiteStorage(home / "data" / "thatch.db") as personal:
        assert [(m.store, m.label, m.recall_count) for m in personal.list_memories()] == [
            ("global", "tabs", recalled["tabs"])
        ]
    schema = schema_for(tmp_path)
    rows = query(postgres_server, schema, "SELECT store, label, recall_count FROM memories")
    assert rows == [("acme/shop", "deploy", recalled["deploy"])]
    assert min(recalled["tabs"], recalled["deploy"]) >= 1, recalled
    shared = PostgresStorage(postgres_server.dsn(), schema)
    try:
        assert [m.content for m in shared.list_memories()] == [ours.content]
    finally:
        shared.close()


def test_forget_and_archive_reach_the_server(home: Path) -> None:
    with _open(home) as th:
        th.remember("deploy", "Deploy the shop with make ship", store="acme/shop")
        th.remember("tabs", "The user indents code with tabs", store="global")
        th.archive("deploy", "acme/shop")
        assert [hit.memory.label for hit in th.recall("deploy the shop", stores="all")] == ["tabs"]
        th.unarchive("deploy", "acme/shop")
        assert th.recall("deploy the shop", stores="all")[0].memory.label == "deploy"
        th.forget("deploy", "acme/shop")
        assert [m.label for m in th.list("all", include_archived=True)] == ["tabs"]


class TestRouterOverSQLiteAndPostgres(MemoryStorageContract):
    """The router passes the memory contract with acme/* on the server and global in a file."""

    @pytest.fixture(autouse=True)
    def _server(self, postgres_server: Server) -> None:
        self.server = postgres_server

    def open_backend(self, directory: Path) -> Any:
        places = {
            "sqlite": SQLiteStorage(directory / "personal.db"),
            "postgres": PostgresStorage(self.server.dsn(), schema_for(directory)),
        }
        return StoreRouter(
            places, lambda store: "postgres" if fnmatchcase(store, "acme/*") else "sqlite"
        )


def test_with_every_part_on_the_server_global_can_stay_local(
    postgres_server: Server, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(
        '[storage]\nbackend = "postgres"\n'
        f'[storage.postgres]\ndsn = "{postgres_server.dsn()}"\n'
        f'schema = "{schema_for(tmp_path)}"\n'
        '[storage.stores]\n"global" = "sqlite"\n'
    )
    with _open(home) as th:
        th.remember("tabs", "The user indents code with tabs", store="global")
        shared = th.remember("deploy", "Deploy the shop with make ship", store="acme/shop")
        # The server is the memories' own backend here: its ids are untagged.
        assert shared.memory.id < 1 << ID_BITS
        assert {hit.memory.label for hit in th.recall("tabs or deploy", stores="all")} == {
            "tabs",
            "deploy",
        }
        assert th.integrity_problems() == []
        where = _storage_places(th.config, ["acme/shop", "global"])
        assert where.startswith("memories of every other store (acme/shop) and decisions")
        assert where.endswith(f"; memories of global in {home / 'data' / 'thatch.db'}")
    with SQLiteStorage(home / "data" / "thatch.db") as local:
        assert [(m.store, m.label) for m in local.list_memories()] == [("global", "tabs")]
    rows = query(postgres_server, schema_for(tmp_path), "SELECT store, label FROM memories")
    assert rows == [("acme/shop", "deploy")]


def test_two_patterns_can_keep_their_stores_in_two_schemas(
    postgres_server: Server, tmp_path: Path
) -> None:
    team, beta = schema_for(tmp_path / "team"), schema_for(tmp_path / "beta")
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(
        f'[storage.postgres]\ndsn = "{postgres_server.dsn()}"\nschema = "{team}"\n'
        '[storage.stores]\n"acme/*" = "postgres"\n'
        f'"beta/*" = {{ backend = "postgres", schema = "{beta}" }}\n'
    )
    with _open(home) as th:
        assert list(th.memory_storage.places) == [  # type: ignore[attr-defined]
            "sqlite",
            "postgres",
            f"postgres (schema {beta})",
        ]
        for store in ("global", "acme/shop", "beta/lab"):
            th.remember("note", f"a note about deploys kept in {store}", store=store)
        hits = th.recall("a note about deploys", stores="all")
        assert sorted(hit.memory.store for hit in hits) == ["acme/shop", "beta/lab", "global"]
        where = _storage_places(th.config, [info.name for info in th.stores()])
        assert "memories of beta/* (beta/lab) in postgres at host=" in where
        assert f"schema {beta}" in where
    assert query(postgres_server, team, "SELECT store FROM memories") == [("acme/shop",)]
    assert query(postgres_server, beta, "SELECT store FROM memories") == [("beta/lab",)]


def test_a_routes_dsn_passes_the_backends_own_checks(
    postgres_server: Server, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(
        '[storage.stores]\n"acme/*" = { backend = "postgres", dsn = "host=db password=s3cret" }\n'
    )
    with _open(home) as th, pytest.raises(ConfigError) as caught:
        th.memory_storage  # noqa: B018
    message = str(caught.value)
    assert "[storage.stores] sends acme/* to postgres (dsn host=db)" in message
    assert "holds a password" in message
