"""``[storage.stores]``: the config that routes stores; a home whose stores are in two backends.

This module is also the second backend: a plugin (named by
``THATCH_PLUGIN_MODULES``) that keeps the memories the config gives to
``team`` in a SQLite file of its own, ``team.db`` beside the home's database.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import thatch
from thatch.doctor import _database, _storage_places
from thatch.memory.routing import StoreRouter
from thatch.plugin import Config, hookimpl
from thatch.plugin.config import StoreRoute
from thatch.plugin.errors import ConfigError, PluginMissingError
from thatch.testing import WordHashEmbedder
from thatch_sqlite.storage import SQLiteStorage

BACKEND = "team"


def _team_file(config: Config) -> Path:
    return config.db_path.with_name("team.db")


@hookimpl
def thatch_memory_storage(config: Config) -> SQLiteStorage | None:
    return SQLiteStorage(_team_file(config)) if config.backend_for("memories") == BACKEND else None


@hookimpl
def thatch_embedder(config: Config) -> WordHashEmbedder:
    return WordHashEmbedder()


def make_home(tmp_path: Path, storage_text: str) -> Path:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(storage_text)
    return home


ROUTED = '[storage]\nbackend = "sqlite"\n[storage.stores]\n"acme/*" = "team"\n'


def _open(home: Path, *, plugins: str = "sqlite") -> thatch.Thatch:
    environ = {"THATCH_LOAD_PLUGINS": plugins, "THATCH_PLUGIN_MODULES": __name__}
    return thatch.open(home, cwd=home, environ=environ)


# -- the config ---------------------------------------------------------------


def test_the_first_matching_pattern_names_the_place(tmp_path: Path) -> None:
    home = make_home(
        tmp_path,
        '[storage]\nmemories = "sqlite"\n[storage.stores]\n'
        '"acme/secret" = "sqlite"\n"acme/*" = "postgres"\n"*/docs" = "team"\n'
        '"lab/*" = { backend = "sqlite", db_path = "~/lab.db" }\n',
    )
    config = Config.load(home, environ={})
    assert config.store_routes == (
        StoreRoute("acme/secret", "sqlite"),
        StoreRoute("acme/*", "postgres"),
        StoreRoute("*/docs", "team"),
        StoreRoute("lab/*", "sqlite", {"db_path": "~/lab.db"}),
    )
    owners = {
        store: config.memory_place_for_store(store)
        for store in ("acme/secret", "acme/shop", "acme/docs", "zed/docs", "lab/x", "global")
    }
    assert owners == {
        "acme/secret": "sqlite",
        "acme/shop": "postgres",
        "acme/docs": "postgres",
        "zed/docs": "team",
        "lab/x": "sqlite (db_path ~/lab.db)",
        "global": "sqlite",
    }
    # The memories' own backend first, then the others by name.
    assert config.memory_places() == ("sqlite", "postgres", "sqlite (db_path ~/lab.db)", "team")
    lab = config.memory_place_config("sqlite (db_path ~/lab.db)")
    assert lab.db_path == Path("~/lab.db").expanduser()
    assert lab.backend_for("memories") == "sqlite"
    assert config.memory_place_config("team").backend_for("memories") == "team"
    assert config.memory_place_config("sqlite") is config


def test_a_routes_server_settings_replace_the_homes_for_its_stores(tmp_path: Path) -> None:
    home = make_home(
        tmp_path,
        '[storage.postgres]\ndsn = "host=db"\nschema = "team"\n[storage.stores]\n'
        '"beta/*" = { backend = "postgres", schema = "beta", dsn = "host=other" }\n',
    )
    config = Config.load(home, environ={})
    [route] = config.store_routes
    assert route.place == "postgres (dsn host=other, schema beta)"
    placed = config.memory_place_config(route.place)
    assert placed.sections["storage"]["postgres"] == {"dsn": "host=other", "schema": "beta"}
    assert config.sections["storage"]["postgres"] == {"dsn": "host=db", "schema": "team"}


def test_without_routes_every_store_is_the_memories_backend(tmp_path: Path) -> None:
    config = Config.load(make_home(tmp_path, '[storage]\nmemories = "team"\n'), environ={})
    assert config.store_routes == ()
    assert config.memory_place_for_store("acme/shop") == "team"
    assert config.memory_places() == ("team",)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[storage]\nstores = 3\n", ("storage.stores = 3 is not a table", '"acme/*" = "postgres"')),
        (
            '[storage.stores]\n"acme/[ab]" = "team"\n',
            ('storage.stores."acme/[ab]" is not a store-name pattern', "'owner/name'"),
        ),
        (
            '[storage.stores]\n"acme/*" = 1\n',
            ('storage.stores."acme/*" = 1 is not a backend name', '"acme/*" = "postgres"'),
        ),
        (
            '[storage.stores]\n"acme/*" = " "\n',
            ("is not a backend name",),
        ),
        (
            '[storage.stores]\n"acme/*" = { schema = "x" }\n',
            ('storage.stores."acme/*".backend = None is not a backend name', "schema = "),
        ),
        (
            '[storage.stores]\n"acme/*" = { backend = "postgres", dsn = ["a"] }\n',
            ("storage.stores.\"acme/*\".dsn = ['a']: a route's setting is a string",),
        ),
        (
            '[storage.stores]\n"acme/*" = { backend = "sqlite", db_path = 3 }\n',
            ("db_path = 3: a route's setting", "db_path: a file path"),
        ),
    ],
)
def test_a_bad_route_names_the_file_the_key_and_the_fix(
    tmp_path: Path, text: str, names: tuple[str, ...]
) -> None:
    home = make_home(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        Config.load(home, environ={})
    message = str(caught.value)
    assert str(home / "config" / "config.toml") in message
    for name in names:
        assert name in message


# -- a home with two backends ---------------------------------------------------


def test_remember_and_recall_across_both_backends(tmp_path: Path) -> None:
    home = make_home(tmp_path, ROUTED)
    with _open(home) as th:
        assert isinstance(th.memory_storage, StoreRouter)
        mine = th.remember("tabs", "The user indents code with tabs", store="global").memory
        ours = th.remember("deploy", "Deploy the shop with make ship", store="acme/shop").memory
        hits = th.recall("how do I indent code and deploy the shop", stores=["global", "acme/shop"])
        assert {hit.memory.label for hit in hits} == {"tabs", "deploy"}
        assert {hit.memory.id for hit in hits} == {mine.id, ours.id}
        assert [(i.name, i.memories) for i in th.stores()] == [("acme/shop", 1), ("global", 1)]
        assert th.show("deploy", "acme/shop").recall_count == 1
        assert th.integrity_problems() == []
        assert th.duplicates() == []
        again = th.remember("ship", "Ship the shop with make ship", store="acme/shop").memory
        th.mark_reviewed("deploy", "ship", store="acme/shop", verdict="same")
        assert th.review_verdicts() == {(ours.id, again.id): "same"}

    with SQLiteStorage(home / "data" / "thatch.db") as personal:
        assert [(m.store, m.label) for m in personal.list_memories()] == [("global", "tabs")]
    with SQLiteStorage(home / "data" / "team.db") as team:
        assert [(m.store, m.label) for m in team.list_memories()] == [
            ("acme/shop", "deploy"),
            ("acme/shop", "ship"),
        ]


def test_a_home_without_routes_keeps_the_backends_own_storage(tmp_path: Path) -> None:
    home = make_home(tmp_path, '[storage]\nbackend = "sqlite"\n')
    with _open(home) as th:
        assert isinstance(th.memory_storage, SQLiteStorage)
        assert th.memory_storage is th.decision_storage


def test_the_personal_file_stays_shared_with_the_decision_model(tmp_path: Path) -> None:
    with _open(make_home(tmp_path, ROUTED)) as th:
        router = th.memory_storage
        assert isinstance(router, StoreRouter)
        assert router.places["sqlite"] is th.decision_storage
        assert router.backend == "sqlite"


def test_a_route_to_a_backend_no_plugin_keeps_says_which_pattern(tmp_path: Path) -> None:
    home = make_home(tmp_path, '[storage.stores]\n"acme/*" = "nowhere"\n')
    with _open(home) as th, pytest.raises(PluginMissingError) as caught:
        th.memory_storage  # noqa: B018
    message = str(caught.value)
    assert "config.toml: [storage.stores] sends acme/* to backend 'nowhere'" in message
    assert "no storage plugin is loaded that keeps memories in backend 'nowhere'" in message


def test_doctor_names_which_backend_keeps_which_stores(tmp_path: Path) -> None:
    home = make_home(tmp_path, ROUTED)
    config = Config.load(home, environ={})
    where = _storage_places(config, ["acme/shop", "global"])
    database = home / "data" / "thatch.db"
    assert where == (
        f"memories of every other store (global) and decisions and predictions in {database}; "
        "memories of acme/* (acme/shop) in team at the backend's default server"
    )
    unrouted = Config.load(make_home(tmp_path / "plain", ""), environ={})
    assert _storage_places(unrouted) == str(unrouted.db_path)


def test_doctor_reports_a_store_left_behind_by_a_new_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THATCH_LOAD_PLUGINS", "sqlite")
    monkeypatch.setenv("THATCH_PLUGIN_MODULES", __name__)
    home = make_home(tmp_path, "")
    with _open(home) as th:
        th.remember("deploy", "Deploy the shop with make ship", store="acme/shop")
        th.remember("tabs", "The user indents code with tabs", store="global")
    (home / "config" / "config.toml").write_text(ROUTED)

    check = _database(str(home))
    assert check.status == "fail"
    assert "memories of every other store (global) and decisions" in check.detail
    assert "store acme/shop has 1 memories in sqlite, but [storage.stores] sends it to team" in (
        check.detail
    )
    with _open(home) as th:
        assert [info.name for info in th.stores()] == ["global"]
        th.remember("deploy", "Deploy the shop with make ship", store="acme/shop")
    assert "passes the integrity check" not in _database(str(home)).detail


def test_a_route_with_a_file_of_its_own_is_a_third_place(tmp_path: Path) -> None:
    lab_file = tmp_path / "lab.db"
    home = make_home(
        tmp_path, ROUTED + f'"lab/*" = {{ backend = "sqlite", db_path = "{lab_file}" }}\n'
    )
    with _open(home) as th:
        router = th.memory_storage
        assert isinstance(router, StoreRouter)
        assert list(router.places) == ["sqlite", f"sqlite (db_path {lab_file})", "team"]
        for store in ("global", "acme/shop", "lab/bench"):
            th.remember("note", f"a note about deploys kept in {store}", store=store)
        hits = th.recall("a note about deploys", stores="all")
        assert sorted(hit.memory.store for hit in hits) == ["acme/shop", "global", "lab/bench"]
        assert th.integrity_problems() == []
        where = _storage_places(th.config, [info.name for info in th.stores()])
        assert f"memories of lab/* (lab/bench) in {lab_file}" in where
    for path, store in [
        (home / "data" / "thatch.db", "global"),
        (home / "data" / "team.db", "acme/shop"),
        (lab_file, "lab/bench"),
    ]:
        with SQLiteStorage(path) as storage:
            assert [m.store for m in storage.list_memories()] == [store]


def test_a_route_setting_its_backend_does_not_have_is_a_clear_error(tmp_path: Path) -> None:
    home = make_home(tmp_path, '[storage.stores]\n"acme/*" = { backend = "team", schema = "x" }\n')
    with _open(home) as th, pytest.raises(ConfigError) as caught:
        th.memory_storage  # noqa: B018
    message = str(caught.value)
    assert "config.toml: [storage.stores] sends acme/* to team (schema x)" in message
    assert "backend 'team' has no table [storage.team], so schema is no setting of it" in message
