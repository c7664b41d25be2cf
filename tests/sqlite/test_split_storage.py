"""Memories in one backend, the decision model and the prediction log in another.

This module is also the other backend: a plugin (named by
``THATCH_PLUGIN_MODULES``) that keeps the parts the config gives to
``elsewhere`` in a SQLite file of its own, ``[elsewhere] db_path``. Memories
stay with the sqlite plugin.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import thatch
from thatch.plugin import Config, hookimpl
from thatch.testing import WordHashEmbedder
from thatch.testing.contracts import logged
from thatch_sqlite.storage import SQLiteStorage

BACKEND = "elsewhere"


def _open_elsewhere(config: Config) -> SQLiteStorage:
    return SQLiteStorage(config.sections[BACKEND]["db_path"])


@hookimpl
def thatch_decision_storage(config: Config) -> SQLiteStorage | None:
    return _open_elsewhere(config) if config.backend_for("decisions") == BACKEND else None


@hookimpl
def thatch_prediction_storage(config: Config) -> SQLiteStorage | None:
    return _open_elsewhere(config) if config.backend_for("predictions") == BACKEND else None


@hookimpl
def thatch_embedder(config: Config) -> WordHashEmbedder:
    return WordHashEmbedder()


@pytest.fixture
def split_home(tmp_path: Path) -> Path:
    """A THATCH_HOME whose config keeps decisions and predictions ``elsewhere``."""
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(
        '[storage]\ndecisions = "elsewhere"\npredictions = "elsewhere"\n'
        f'[elsewhere]\ndb_path = "{tmp_path / "elsewhere.db"}"\n'
    )
    return home


def _open(home: Path) -> thatch.Thatch:
    environ = {"THATCH_LOAD_PLUGINS": "sqlite", "THATCH_PLUGIN_MODULES": __name__}
    return thatch.open(home, cwd=home, environ=environ)


def test_each_part_lives_in_the_backend_the_config_names(split_home: Path) -> None:
    entry = logged(toward="handle errors first")
    with _open(split_home) as th:
        th.remember("tabs", "The user indents with tabs", store="global")
        th.decisions.update("writing a parser", "handle errors first", "create", store="global")
        assert th.prediction_storage.record_predictions([entry]) == [True]
        assert th.memory_storage is not th.decision_storage
        assert th.integrity_problems() == []

    local = split_home / "data" / "thatch.db"
    with (
        SQLiteStorage(local) as memories,
        SQLiteStorage(split_home.parent / "elsewhere.db") as other,
    ):
        assert [m.label for m in memories.list_memories()] == ["tabs"]
        assert memories.list_predictions() == []
        assert memories.list_prediction_entries() == []
        assert other.list_memories() == []
        assert [p.statement for p in other.list_predictions()] == ["handle errors first"]
        assert other.list_prediction_entries() == [entry]

    with _open(split_home) as th:
        assert [hit.memory.label for hit in th.recall("indents tabs", stores="all")] == ["tabs"]
        hits = th.decisions.query("writing a parser", stores="all")
        assert [hit.prediction.statement for hit in hits] == ["handle errors first"]
        assert th.known_stores() == ["global"]
        assert th.prediction_storage.get_prediction_entry(entry.id, entry.session_id) == entry
