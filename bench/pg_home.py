"""A throw-away PostgreSQL server and a home whose memories live in a schema of it.

Shared by the benchmarks that compare the PostgreSQL backend with SQLite
(bench/postgres_recall.py for speed, bench/recall_quality.py ``--postgres``
for quality). The server is the one the tests start
(tests/postgres/pg_cluster.py: ``initdb`` in a temporary folder, a Unix
socket only, durability off), imported by path since tests/ is no package.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import psycopg
from homes import bench_env
from thatch.api import Thatch
from thatch.config import plugin_tables
from thatch.plugin.records import NewMemory
from thatch.plugin.storage import MemoryStorage

PG_CLUSTER = Path(__file__).resolve().parent.parent / "tests" / "postgres" / "pg_cluster.py"
#: Memories per transaction when a set is copied from one backend to the other.
COPY_BATCH = 500


def load_pg_cluster() -> ModuleType:
    """tests/postgres/pg_cluster.py, imported by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("pg_cluster", PG_CLUSTER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # attrs resolves the module of its classes through sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def postgres_config(dsn: str, schema: str, more: str = "") -> str:
    """The config file text of a home that keeps its memories in ``schema`` at ``dsn``.

    ``more``: further lines of ``[storage.postgres]``.
    """
    return (
        f'[storage]\nmemories = "postgres"\n\n[storage.postgres]\ndsn = "{dsn}"\n'
        f'schema = "{schema}"\n{more}'
    )


def open_home(home: Path, embedder: Any, config_text: str | None) -> Thatch:
    """Thatch on ``home`` (its config file ``config_text``), sharing ``embedder``."""
    if config_text is not None:
        config_file = home / "config" / "config.toml"
        config_file.parent.mkdir(parents=True, exist_ok=True)
        config_file.write_text(config_text, encoding="utf-8")
    config, plugins = plugin_tables.load(home, bench_env(home))
    return Thatch(config, plugins, home, embedder=embedder)


def copy_memories(source: MemoryStorage, target: MemoryStorage, model: str) -> int:
    """Write every memory of ``source`` into ``target`` with its stored vector; returns how many.

    The vectors are copied rather than computed again, so both backends hold
    the same embeddings and the real model embeds the set once.
    """
    memories = source.list_memories(None)
    vectors = source.embeddings([m.id for m in memories], model)
    for offset in range(0, len(memories), COPY_BATCH):
        target.write_memories(
            [
                NewMemory(m.store, m.label, m.content, m.branch, model, vectors[m.id])
                for m in memories[offset : offset + COPY_BATCH]
            ]
        )
    return len(memories)


def analyze(dsn: str, schema: str) -> None:
    """ANALYZE the schema's words table, as autovacuum would after a bulk load.

    The backend picks a query's words by the statistics ANALYZE gathers
    (thatch_postgres.wordcounts); without them every word looks equally rare.
    """
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as conn:
        conn.execute("ANALYZE memory_words")
