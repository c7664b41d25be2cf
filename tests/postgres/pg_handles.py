"""A test's own schema: handles on it, its rows read straight, waiting to hear a change."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
from pg_cluster import Server, schema_for
from thatch.plugin import Config
from thatch_postgres.migrations import MIGRATIONS, migrate
from thatch_postgres.settings import PostgresSettings
from thatch_postgres.storage import PostgresStorage
from thatch_postgres.vectors import Table


def postgres_home(
    directory: Path, server: Server, *, parts: str = 'backend = "postgres"', settings: str = ""
) -> Config:
    """The config of a THATCH_HOME under ``directory`` kept on ``server``, in a schema of its own.

    ``parts`` is the ``[storage]`` line saying what postgres keeps (every
    part by default); ``settings`` are more ``[storage.postgres]`` lines.
    """
    config_file = directory / "config" / "config.toml"
    if not config_file.exists():
        config_file.parent.mkdir(parents=True)
        config_file.write_text(
            f"[storage]\n{parts}\n\n"
            f'[storage.postgres]\ndsn = "{server.dsn()}"\nschema = "{schema_for(directory)}"\n'
            + settings
        )
    return Config.load(directory, environ={})


def settings_of(directory: Path, table: str) -> PostgresSettings:
    """The postgres settings of a home under ``directory`` whose table holds ``table``."""
    config_file = directory / "config" / "config.toml"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(f"[storage.postgres]\n{table}")
    return PostgresSettings.of(Config.load(directory, environ={}))


def query(server: Server, schema: str, sql: str) -> list[tuple[object, ...]]:
    """Run ``sql`` in ``schema`` straight on the server; its rows, if it returns any."""
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schema}")
        cursor = conn.execute(sql)
        return cursor.fetchall() if cursor.description else []


@contextlib.contextmanager
def schema_at(server: Server, schema: str, version: int) -> Iterator[psycopg.Connection]:
    """A connection to ``schema`` migrated up to ``version`` only, as an older release left it."""
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schema}")
        assert migrate(conn, schema, MIGRATIONS[:version]) == 0
        yield conn


#: Opens a handle on the test's schema (the ``open_handle`` fixture).
Open = Callable[[], PostgresStorage]


def heard_after(storage: PostgresStorage, table: Table) -> Callable[[], None]:
    """A wait, to call after a change made elsewhere, until ``storage`` has heard of it.

    Another machine's change reaches a warm cache by notification, a moment
    after it commits; the wait fails after 2 s.
    """
    listener = storage._listener
    assert listener is not None, "a search starts the listener"
    deadline = time.monotonic() + 2.0
    while not listener.listening:
        assert time.monotonic() < deadline, "the listener never connected"
        time.sleep(0.01)
    before = listener.epoch(table)
    assert before is not None

    def wait() -> None:
        while (listener.epoch(table) or before) <= before:
            assert time.monotonic() < deadline, f"no change of {table} heard within 2 s"
            time.sleep(0.005)

    return wait
