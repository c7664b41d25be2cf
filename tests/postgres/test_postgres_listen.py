"""A warm cache hears of other machines' writes (LISTEN/NOTIFY), and catches up after a restart."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from pg_cluster import Server, schema_for
from pg_handles import Open, heard_after
from thatch.testing.contracts import APP, new, scope, unit, write
from thatch_postgres.connect import Connection
from thatch_postgres.storage import PostgresStorage

QUERY = unit(3)


def found(storage: PostgresStorage, label: str) -> bool:
    hits = storage.vector_search(QUERY, "model-a", scope(APP), 100)
    return bool(hits) and label in {
        m.label for m in storage.get_memories(h.id for h in hits).values()
    }


def counting_connections(storage: PostgresStorage, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The actions ``storage`` borrows a connection for, from now on."""
    borrowed: list[str] = []
    original: Callable[[str], AbstractContextManager[Connection]] = storage._connection

    def counted(action: str) -> AbstractContextManager[Connection]:
        borrowed.append(action)
        return original(action)

    monkeypatch.setattr(storage, "_connection", counted)
    return borrowed


def test_a_warm_cache_asks_the_server_nothing_until_a_change_is_heard(
    open_handle: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader = open_handle(), open_handle()
    write(writer, new("first", vector=QUERY))
    assert found(reader, "first")
    heard_after(reader, "memories")  # waits until it listens
    # Checked once more: its first check was made before it listened.
    assert found(reader, "first")
    heard = heard_after(reader, "memories")
    borrowed = counting_connections(reader, monkeypatch)
    for _ in range(20):
        reader.vector_search(QUERY, "model-a", scope(APP), 5)
        reader.store_matrix(APP, "model-a")
    assert borrowed == []

    write(writer, new("second", vector=QUERY))
    heard()
    assert found(reader, "second")
    assert borrowed.count("search by meaning") == 1


def test_a_handle_finds_its_own_write_at_once(open_handle: Open) -> None:
    handle = open_handle()
    assert not found(handle, "mine")
    heard_after(handle, "memories")  # listening: only its own note of the write can help
    write(handle, new("mine", vector=QUERY))
    assert found(handle, "mine")


def test_handles_of_one_process_see_each_others_writes_at_once(open_handle: Open) -> None:
    one, two = open_handle(), open_handle()
    for handle in (one, two):
        assert not found(handle, "0")
    assert one._listener is two._listener, "one listener per server and schema"
    heard_after(two, "memories")  # listening: no check before each search any more
    for n in range(20):
        write(one, new(str(n), vector=QUERY))
        assert found(two, str(n))


def test_a_handle_that_never_searched_still_notes_its_writes(open_handle: Open) -> None:
    reader = open_handle()
    assert not found(reader, "0")
    heard_after(reader, "memories")
    writer = open_handle()  # writes only: it never starts a listener of its own
    for n in range(20):
        write(writer, new(str(n), vector=QUERY))
        assert found(reader, str(n))
    assert writer._listener is None


def test_after_a_server_restart_a_warm_cache_catches_up(
    private_postgres_server: Server, tmp_path: Path
) -> None:
    server = private_postgres_server
    schema = schema_for(tmp_path)
    writer = PostgresStorage(server.dsn(), schema, connect_timeout=5)
    reader = PostgresStorage(server.dsn(), schema, connect_timeout=5)
    try:
        write(writer, new("before", vector=QUERY))
        assert found(reader, "before")
        heard_after(reader, "memories")
        server.restart()
        # Whether or not it listens again yet, a search sees what was written.
        write(writer, new("meanwhile", vector=QUERY))
        assert found(reader, "meanwhile")

        deadline = time.monotonic() + 10
        listener = reader._listener
        assert listener is not None
        while not listener.listening:
            assert time.monotonic() < deadline, "the listener did not reconnect"
            time.sleep(0.05)
        heard = heard_after(reader, "memories")
        write(writer, new("after", vector=QUERY))
        heard()
        assert found(reader, "after")
    finally:
        writer.close()
        reader.close()


def test_closing_stops_the_listener(open_handle: Open) -> None:
    handle = open_handle()
    handle.vector_search(QUERY, "model-a", scope(APP), 1)
    listener = handle._listener
    assert listener is not None
    handle.close()
    assert listener.join(timeout=2)
