"""Search by meaning on the server with pgvector: detection, the table it searches, the results.

On pgserver's PostgreSQL 16 with pgvector (the ``pgvector_server``
fixture), and on Debian's PostgreSQL without it (``postgres_server``).
The server's results are compared with the in-memory copy's, which the
rest of tests/postgres checks against exact search.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
from pg_cluster import Server, schema_for
from pg_handles import heard_after, settings_of
from pg_handles import query as run_sql
from psycopg import sql
from thatch.plugin import ConfigError, NewMemory, Scope, ScoredId
from thatch_postgres import server_search
from thatch_postgres.pgvector import index_name, vector_cursor, vector_param
from thatch_postgres.server_search import ef_search
from thatch_postgres.settings import PostgresSettings
from thatch_postgres.storage import PostgresStorage

DIM = 24
MODEL = "model-a"
STORES = ("app", "lib", "global")
BRANCHES = (None, "main", "feature")


def unit(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, DIM)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def memories(vectors: np.ndarray, prefix: str = "m") -> list[NewMemory]:
    """One memory per vector, spread over the stores and branches."""
    return [
        NewMemory(
            STORES[i % len(STORES)],
            f"{prefix}-{i}",
            f"fact {prefix} {i}",
            BRANCHES[(i // len(STORES)) % len(BRANCHES)],
            MODEL,
            vector,
        )
        for i, vector in enumerate(vectors)
    ]


class Handles:
    """Handles on one schema of one database of a server, closed at the end of the test."""

    def __init__(self, server: Server, dbname: str, schema: str) -> None:
        self.dsn = server.dsn(dbname)
        self.schema = schema
        self.opened: list[PostgresStorage] = []

    def open(self, mode: server_search.Mode = "auto", threshold: int = 0) -> PostgresStorage:
        storage = PostgresStorage(
            self.dsn, self.schema, server_search=mode, server_search_from=threshold
        )
        self.opened.append(storage)
        return storage

    def sql(self, statement: str) -> list[tuple[object, ...]]:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f"SET search_path TO {self.schema}, public")
            cursor = conn.execute(statement)
            return cursor.fetchall() if cursor.description else []

    def close(self) -> None:
        for storage in self.opened:
            storage.close()


def database(server: Server, name: str) -> str:
    """A database of the test's own: pgvector's extension is one per database."""
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return name


@pytest.fixture
def handles(pgvector_server: Server, tmp_path: Path) -> Iterator[Handles]:
    """Handles on the pgvector server's database ``postgres``, a schema of the test's own."""
    opened = Handles(pgvector_server, "postgres", schema_for(tmp_path))
    yield opened
    opened.close()


@pytest.fixture
def own_database(pgvector_server: Server, tmp_path: Path) -> Iterator[Handles]:
    """Handles on a fresh database of the pgvector server, where no extension was created yet."""
    name = schema_for(tmp_path)
    opened = Handles(pgvector_server, database(pgvector_server, name), name)
    yield opened
    opened.close()


def assert_same(found: list[ScoredId], expected: list[ScoredId]) -> None:
    """The same ids in the same order, scores equal to float32 rounding."""
    assert [hit.id for hit in found] == [hit.id for hit in expected]
    np.testing.assert_allclose(
        [hit.score for hit in found], [hit.score for hit in expected], atol=1e-5
    )


def searched_on_server(storage: PostgresStorage) -> bool:
    """Whether every search so far went to the server: the in-memory copy was never loaded."""
    return storage.server_search == "in use" and not storage._cache._models


# -- detection ----------------------------------------------------------------------


def test_a_server_with_pgvector_has_it_in_use(handles: Handles) -> None:
    storage = handles.open()
    assert storage.server_search == "in use"
    assert handles.sql("SELECT extname FROM pg_extension WHERE extname = 'vector'") == [("vector",)]
    assert handles.sql("SELECT to_regclass('memory_vectors') IS NOT NULL") == [(True,)]


def test_a_server_without_pgvector_searches_its_cache(
    postgres_server: Server, tmp_path: Path
) -> None:
    available = run_sql(
        postgres_server,
        "public",
        "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'",
    )
    if available != [(0,)]:
        pytest.skip("this machine's system PostgreSQL has pgvector")
    storage = PostgresStorage(postgres_server.dsn(), schema_for(tmp_path), server_search_from=0)
    try:
        assert storage.server_search == "absent"
        vectors = unit(30, seed=1)
        storage.write_memories(memories(vectors))
        hits = storage.vector_search(vectors[1], MODEL, Scope(STORES), 5)
        assert hits[0].id == storage.get_memory("lib", "m-1").id  # type: ignore[union-attr]
        assert storage._cache._models, "the cache searched"
        tables = run_sql(
            postgres_server, schema_for(tmp_path), "SELECT to_regclass('memory_vectors')"
        )
        assert tables == [(None,)]
    finally:
        storage.close()


def test_off_creates_nothing_and_searches_the_cache(own_database: Handles) -> None:
    storage = own_database.open(mode="off")
    assert storage.server_search == "off"
    assert own_database.sql("SELECT count(*) FROM pg_extension WHERE extname = 'vector'") == [(0,)]
    vectors = unit(10, seed=2)
    storage.write_memories(memories(vectors))
    assert storage.vector_search(vectors[0], MODEL, Scope(STORES), 3)[0].score == pytest.approx(1)
    assert storage._cache._models


def test_a_role_that_may_not_create_the_extension_carries_on_without(
    own_database: Handles, pgvector_server: Server
) -> None:
    name = own_database.schema
    with psycopg.connect(own_database.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name}_user LOGIN")
        conn.execute(f"GRANT CREATE ON DATABASE {name} TO {name}_user")
    own_database.dsn = own_database.dsn.replace("user=thatch_test", f"user={name}_user")
    storage = own_database.open()
    assert storage.server_search == "available"
    vectors = unit(10, seed=3)
    storage.write_memories(memories(vectors))
    assert storage.vector_search(vectors[2], MODEL, Scope(STORES), 1)[0].score == pytest.approx(1)


# -- results ------------------------------------------------------------------------


def test_the_server_finds_what_the_cache_finds(handles: Handles) -> None:
    vectors = unit(400, seed=4)
    writer = handles.open()
    writer.write_memories(memories(vectors))
    writer.set_archived("lib", "m-10", True)
    server, cache = handles.open(), handles.open(mode="off")
    queries = unit(12, seed=5)
    scopes = [
        # Two thirds of the vectors or more: a smaller share goes to the cache (ef_search).
        Scope(STORES),
        Scope(("app", "lib")),
        Scope(("app", "global"), branch="main"),
        Scope(("lib", "global"), branch="feature"),
    ]
    for query in queries:
        for where in scopes:
            for archived in (False, True):
                expected = cache.vector_search(query, MODEL, where, 20, include_archived=archived)
                found = server.vector_search(query, MODEL, where, 20, include_archived=archived)
                assert_same(found, expected)
    assert searched_on_server(server)


def test_scope_branch_and_archived_hold_on_the_server(handles: Handles) -> None:
    storage = handles.open()
    vector = unit(1, seed=6)[0]
    near = vector + 0.01 * unit(1, seed=7)[0]
    stored = {
        result.memory.label: result.memory.id
        for result in storage.write_memories(
            [
                NewMemory("app", "here", "x", None, MODEL, vector),
                NewMemory("lib", "other-store", "x", None, MODEL, near),
                NewMemory("app", "other-branch", "x", "feature", MODEL, near),
                NewMemory("app", "this-branch", "x", "main", MODEL, near),
                NewMemory("app", "other-model", "x", None, "model-b", vector),
            ]
        )
    }

    def found(where: Scope, archived: bool = False) -> set[int]:
        return {
            hit.id
            for hit in storage.vector_search(vector, MODEL, where, 10, include_archived=archived)
        }

    assert found(Scope(("app",), branch="main")) == {stored["here"], stored["this-branch"]}
    assert found(Scope(("app",))) == {stored["here"]}
    storage.set_archived("app", "here", True)
    assert found(Scope(("app",))) == set()
    assert found(Scope(("app",)), archived=True) == {stored["here"]}
    storage.set_archived("app", "here", False)
    assert found(Scope(("app",))) == {stored["here"]}
    assert searched_on_server(storage)


def test_another_handles_write_and_delete_reach_the_server_search(handles: Handles) -> None:
    reader, writer = handles.open(), handles.open()
    vectors = unit(50, seed=8)
    writer.write_memories(memories(vectors[:40]))
    where = Scope(STORES)
    assert reader.vector_search(vectors[45], MODEL, where, 1)[0].score < 0.99
    [saved] = writer.write_memories([NewMemory("lib", "new", "x", None, MODEL, vectors[45])])
    [hit] = reader.vector_search(vectors[45], MODEL, where, 1)
    assert (hit.id, hit.score) == (saved.memory.id, pytest.approx(1, abs=1e-5))
    # A new vector replaces the old on the server too.
    writer.write_memories([NewMemory("lib", "new", "y", None, MODEL, vectors[46])])
    assert reader.vector_search(vectors[46], MODEL, where, 1)[0].id == saved.memory.id
    assert reader.vector_search(vectors[45], MODEL, where, 1)[0].score < 0.99
    assert writer.delete_memory("lib", "new")
    assert saved.memory.id not in {
        h.id for h in reader.vector_search(vectors[46], MODEL, where, 50)
    }
    assert handles.sql(f"SELECT count(*) FROM memory_vectors WHERE id = {saved.memory.id}") == [
        (0,)
    ]
    assert searched_on_server(reader)


def test_new_vectors_of_another_model_move_to_its_index(handles: Handles) -> None:
    storage = handles.open()
    vectors = unit(20, seed=9)
    written = storage.write_memories(memories(vectors))
    other = unit(20, seed=10)
    storage.set_embeddings(
        "model-b", [(r.memory.id, v) for r, v in zip(written, other, strict=True)]
    )
    assert storage.vector_search(vectors[0], MODEL, Scope(STORES), 5) == []
    [hit] = storage.vector_search(other[9], "model-b", Scope(STORES), 1)
    assert hit.id == written[9].memory.id
    assert searched_on_server(storage)


def test_the_search_reads_the_models_hnsw_index(handles: Handles) -> None:
    storage = handles.open()
    vectors = unit(1000, seed=11)
    storage.write_memories(memories(vectors))
    storage.vector_search(vectors[0], MODEL, Scope(STORES), 5)
    handles.sql("ANALYZE memory_vectors")
    assert handles.sql(
        "SELECT indexdef LIKE '%USING hnsw%vector_ip_ops%' FROM pg_indexes"
        f" WHERE schemaname = '{handles.schema}' AND indexname = '{index_name(MODEL, DIM)}'"
    ) == [(True,)]
    params = {"query": vector_param(vectors[0]), "stores": list(STORES), "branch": None}
    with psycopg.connect(handles.dsn, autocommit=True) as conn, vector_cursor(conn) as cursor:
        conn.execute(f"SET search_path TO {handles.schema}, public")
        explain = sql.SQL("EXPLAIN {}").format(storage._server._query(MODEL, DIM))
        plan = cursor.execute(explain, params | {"limit": 5}).fetchall()
    assert index_name(MODEL, DIM) in " ".join(str(row[0]) for row in plan)


def test_below_the_threshold_the_cache_searches(handles: Handles) -> None:
    storage = handles.open(threshold=100)
    vectors = unit(60, seed=12)
    storage.write_memories(memories(vectors))
    assert storage.vector_search(vectors[1], MODEL, Scope(STORES), 1)[0].score == pytest.approx(1)
    assert storage._cache._models, "60 vectors, fewer than 100: the cache searched"
    assert handles.sql(f"SELECT to_regclass('{index_name(MODEL, DIM)}')") == [(None,)]


def test_under_the_threshold_a_search_borrows_no_connection_until_the_counts_are_due(
    handles: Handles, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = handles.open(threshold=100)
    vectors = unit(60, seed=14)
    storage.write_memories(memories(vectors))
    storage.vector_search(vectors[0], MODEL, Scope(STORES), 1)  # counts the model's vectors
    # Until the change listener listens, the copy itself checks the server on each search.
    heard_after(storage, "memories")
    storage.vector_search(vectors[0], MODEL, Scope(STORES), 1)  # the copy, current
    borrowed: list[str] = []
    real = storage._connection

    def counted(action: str) -> object:
        borrowed.append(action)
        return real(action)

    monkeypatch.setattr(storage, "_connection", counted)
    for row in vectors[[1, 2, 9, 10, 11]]:  # memories on no branch, as the scope asks
        assert storage.vector_search(row, MODEL, Scope(STORES), 1)[0].score == pytest.approx(1)
    assert borrowed == [], "the fresh counts said the copy answers: no connection needed"
    monkeypatch.setattr(server_search, "REFRESH_SECONDS", 0.0)
    storage.vector_search(vectors[18], MODEL, Scope(STORES), 1)
    assert borrowed == ["search by meaning"], "counts due: the server is asked again"


# -- the table kept beside the memories ---------------------------------------------


def test_memories_written_before_the_extension_are_copied_once_it_is_there(
    own_database: Handles, monkeypatch: pytest.MonkeyPatch
) -> None:
    early = own_database.open(mode="off")
    vectors = unit(120, seed=13)
    early.write_memories(memories(vectors[:100]))
    assert own_database.sql("SELECT to_regclass('memory_vectors')") == [(None,)]
    storage = own_database.open()
    assert storage.server_search == "in use"
    assert own_database.sql("SELECT count(*) FROM memory_vectors") == [(100,)]
    # A handle opened before the table was made writes without it; the next
    # refresh adds what it wrote.
    early.write_memories(memories(vectors[100:], prefix="late"))
    monkeypatch.setattr(server_search, "REFRESH_SECONDS", 0.0)
    cache = own_database.open(mode="off")
    for query in vectors[95:105]:
        assert_same(
            storage.vector_search(query, MODEL, Scope(STORES), 10),
            cache.vector_search(query, MODEL, Scope(STORES), 10),
        )
    assert own_database.sql("SELECT count(*) FROM memory_vectors") == [(120,)]
    assert searched_on_server(storage)


def test_handles_opened_at_once_make_the_table_once(own_database: Handles) -> None:
    import threading

    own_database.open(mode="off").write_memories(memories(unit(30, seed=14)))
    opened: list[str] = []

    def open_one() -> None:
        opened.append(own_database.open().server_search)

    threads = [threading.Thread(target=open_one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert opened == ["in use"] * 3
    assert own_database.sql("SELECT count(*), count(DISTINCT id) FROM memory_vectors") == [(30, 30)]


def test_a_failed_copy_never_loses_the_memory(
    handles: Handles, caplog: pytest.LogCaptureFixture
) -> None:
    storage = handles.open()
    vectors = unit(3, seed=15)
    storage.write_memories(memories(vectors[:1]))
    handles.sql("ALTER TABLE memory_vectors ADD CONSTRAINT refuse_all CHECK (dim < 0) NOT VALID")
    with caplog.at_level(logging.WARNING, logger="thatch"):
        [saved] = storage.write_memories([NewMemory("app", "kept", "x", None, MODEL, vectors[1])])
    assert "not written" in caplog.text
    assert storage.get_memory("app", "kept") == saved.memory
    handles.sql("ALTER TABLE memory_vectors DROP CONSTRAINT refuse_all")
    assert handles.sql(f"SELECT count(*) FROM memory_vectors WHERE id = {saved.memory.id}") == [
        (0,)
    ]


def test_a_vector_pgvector_refuses_stays_a_memory(handles: Handles) -> None:
    storage = handles.open()
    bad = np.full(DIM, np.nan, dtype=np.float32)
    [saved] = storage.write_memories([NewMemory("app", "nan", "x", None, MODEL, bad)])
    assert storage.get_memory("app", "nan") == saved.memory


def test_a_row_out_of_step_with_its_memory_is_a_problem(handles: Handles) -> None:
    storage = handles.open()
    storage.write_memories(memories(unit(5, seed=16)))
    storage.set_archived("app", "m-0", True)
    assert storage.integrity_problems() == []
    handles.sql(
        "UPDATE memory_vectors SET store = 'elsewhere'"
        " WHERE id = (SELECT min(id) FROM memory_vectors)"
    )
    assert storage.integrity_problems() == [
        "1 memories are out of step with their pgvector rows (memory_vectors)"
    ]


# -- settings and ef_search -----------------------------------------------------------


def settings(directory: Path, lines: str) -> PostgresSettings:
    return settings_of(directory, f'dsn = "host=db"\n{lines}\n')


def test_the_settings_default_to_auto_from_a_million(tmp_path: Path) -> None:
    read = settings(tmp_path, "")
    assert (read.server_search, read.server_search_from) == ("auto", 1_000_000)
    read = settings(tmp_path, 'server_search = "off"\nserver_search_from = 0')
    assert (read.server_search, read.server_search_from) == ("off", 0)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('server_search = "on"', r"server_search = 'on': use \"auto\".* or \"off\""),
        ("server_search_from = -1", r"server_search_from = -1: use 0"),
        ('server_search_from = "many"', r"server_search_from = 'many' is not a whole number"),
    ],
)
def test_bad_settings_name_the_key_and_the_fix(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings(tmp_path, line)


def test_ef_search_grows_as_the_scope_shrinks() -> None:
    base = server_search.EF_SEARCH
    assert ef_search(20, 100_000, 100_000) == base
    assert ef_search(20, 100_000, 50_000) == 2 * base
    assert ef_search(300, 1000, 1000) == 600
    assert ef_search(20, 100_000, 100_000 * base // server_search.EF_MAX - 1) is None
