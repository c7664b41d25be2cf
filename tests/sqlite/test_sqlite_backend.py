"""What the SQLite backend promises beyond the storage contract.

Settings (WAL, busy timeout, durability), schema versioning, clear errors for
unusable files, the FTS5 query builder, and sharing one file between several
handles, threads and processes.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import multiprocessing
import os
import random
import sqlite3
import stat
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from thatch.paths import Paths
from thatch.plugin.config import Config
from thatch.plugin.errors import ArchivedMemoryError, StorageError
from thatch.plugin.records import NewMemory, Scope
from thatch.plugin.sqlite import user_version
from thatch.plugins import PluginSelection, create_manager
from thatch.testing.contracts import logged
from thatch_sqlite import cache, fts, plugin
from thatch_sqlite.connect import BUSY_TIMEOUT_MS
from thatch_sqlite.migrations import MIGRATIONS, SCHEMA_VERSION, migrate
from thatch_sqlite.storage import SQLiteStorage

STORE = "acme/app"
DIM = 8


def unit(seed: int, dim: int = DIM) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def new(
    label: str,
    content: str = "some content",
    *,
    store: str = STORE,
    branch: str | None = None,
    model: str = "m",
    seed: int = 0,
) -> NewMemory:
    return NewMemory(store, label, content, branch, model, unit(seed or sum(map(ord, label))))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "nested" / "folder" / "thatch.db"


@pytest.fixture
def storage(db_path: Path) -> Iterator[SQLiteStorage]:
    with SQLiteStorage(db_path) as opened:
        yield opened


def pragma(storage: SQLiteStorage, name: str) -> object:
    return storage._conn.execute(f"PRAGMA {name}").fetchone()[0]


def raw(path: Path) -> sqlite3.Connection:
    """A plain connection, as another program would open the file."""
    return sqlite3.connect(path, isolation_level=None)


# -- settings -------------------------------------------------------------------


def test_connection_settings(storage: SQLiteStorage) -> None:
    assert pragma(storage, "journal_mode") == "wal"
    assert pragma(storage, "busy_timeout") == BUSY_TIMEOUT_MS == 30_000
    assert pragma(storage, "synchronous") == 2  # FULL
    assert pragma(storage, "foreign_keys") == 1
    assert storage.backend == "sqlite"


def test_bookkeeping_writes_leave_the_connection_durable(storage: SQLiteStorage) -> None:
    [written] = storage.write_memories([new("tabs")])
    storage.record_recall([written.memory.id], datetime.now(UTC))
    storage.record_fires("s1", [], datetime.now(UTC))
    assert pragma(storage, "synchronous") == 2  # FULL again for the next real write
    shown = storage.get_memory(written.memory.store, "tabs")
    assert shown is not None
    assert shown.recall_count == 1


def test_memory_map_size_comes_from_the_config(tmp_path: Path) -> None:
    from thatch.plugin.config import Config
    from thatch.plugin.errors import ConfigError
    from thatch_sqlite.connect import DEFAULT_MMAP_BYTES
    from thatch_sqlite.plugin import thatch_memory_storage

    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    config_file = home / "config" / "config.toml"
    for text, expected in (("", DEFAULT_MMAP_BYTES), ("[storage]\nmmap_mb = 0\n", 0)):
        config_file.write_text(text)
        opened = thatch_memory_storage(Config.load(home, environ={}))
        assert opened is not None
        try:
            assert pragma(opened, "mmap_size") == expected  # type: ignore[arg-type]
        finally:
            opened.close()
    config_file.write_text('[storage]\nmmap_mb = "lots"\n')
    with pytest.raises(ConfigError, match=r"storage\.mmap_mb = 'lots'"):
        thatch_memory_storage(Config.load(home, environ={}))


def test_file_is_private_and_folders_are_created(storage: SQLiteStorage, db_path: Path) -> None:
    storage.write_memories([new("a")])  # makes the -wal and -shm files exist
    assert db_path.parent.is_dir()
    for suffix in ("", "-wal", "-shm"):
        file = db_path.with_name(db_path.name + suffix)
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


def test_embeddings_are_stored_as_little_endian_float32(storage: SQLiteStorage) -> None:
    vector = unit(5)
    [result] = storage.write_memories([NewMemory(STORE, "a", "x", None, "m", vector)])
    blob, created, updated = storage._conn.execute(
        "SELECT embedding, created_at, updated_at FROM memories WHERE id = ?",
        (result.memory.id,),
    ).fetchone()
    assert blob == vector.astype("<f4").tobytes()
    assert isinstance(created, float)
    assert created == updated == pytest.approx(result.memory.created_at.timestamp())


# -- schema versions --------------------------------------------------------------


def test_schema_is_versioned_and_reopening_is_idempotent(db_path: Path) -> None:
    with SQLiteStorage(db_path) as first:
        first.write_memories([new("a")])
        assert pragma(first, "user_version") == SCHEMA_VERSION == len(MIGRATIONS)
    with SQLiteStorage(db_path) as again:
        assert pragma(again, "user_version") == SCHEMA_VERSION
        assert [m.label for m in again.list_memories()] == ["a"]
        assert again.integrity_problems() == []


def test_a_new_migration_step_runs_once(db_path: Path) -> None:
    SQLiteStorage(db_path).close()
    steps = (*MIGRATIONS, ("CREATE TABLE extra (x INTEGER)", "INSERT INTO extra VALUES (1)"))
    conn = raw(db_path)
    try:
        assert migrate(conn, db_path, steps) == SCHEMA_VERSION
        assert migrate(conn, db_path, steps) == SCHEMA_VERSION + 1
        assert user_version(conn) == SCHEMA_VERSION + 1
        assert conn.execute("SELECT count(*) FROM extra").fetchone()[0] == 1
    finally:
        conn.close()


def test_a_failing_migration_step_changes_nothing(db_path: Path) -> None:
    SQLiteStorage(db_path).close()
    steps = (*MIGRATIONS, ("CREATE TABLE extra (x INTEGER)", "THIS IS NOT SQL"))
    conn = raw(db_path)
    try:
        with pytest.raises(sqlite3.OperationalError):
            migrate(conn, db_path, steps)
        assert user_version(conn) == SCHEMA_VERSION
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'extra'").fetchone()
    finally:
        conn.close()


def test_a_database_from_a_newer_version_is_refused(db_path: Path) -> None:
    SQLiteStorage(db_path).close()
    conn = raw(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()

    with pytest.raises(StorageError) as caught:
        SQLiteStorage(db_path)
    message = str(caught.value)
    assert str(db_path) in message
    assert "newer" in message
    assert "upgrade thatch" in message


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(StorageError) as caught:
        SQLiteStorage(path)
    assert str(path) in str(caught.value)
    assert "another file" in str(caught.value)
    assert path.read_bytes().startswith(b"these are my notes")


def test_a_folder_in_place_of_the_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=str(tmp_path)):
        SQLiteStorage(tmp_path)


# -- integrity ------------------------------------------------------------------------


def test_integrity_check_finds_an_index_out_of_step(db_path: Path, storage: SQLiteStorage) -> None:
    storage.write_memories([new("a", "original words"), new("b", "other words")])
    assert storage.integrity_problems() == []
    conn = raw(db_path)
    try:
        # Another program edits the text behind the index's back.
        conn.execute("DROP TRIGGER memories_fts_update")
        conn.execute("UPDATE memories SET content = 'sneaky edit' WHERE label = 'a'")
    finally:
        conn.close()
    problems = storage.integrity_problems()
    assert problems
    assert any("full-text index" in problem for problem in problems)


def test_integrity_check_finds_a_dangling_review(db_path: Path, storage: SQLiteStorage) -> None:
    a, b = (r.memory for r in storage.write_memories([new("a"), new("b")]))
    storage.mark_reviewed(a.id, b.id)
    conn = raw(db_path)  # foreign keys are off by default here, as in other tools
    try:
        conn.execute("DELETE FROM memories WHERE id = ?", (b.id,))
    finally:
        conn.close()
    assert storage.integrity_problems() == [
        "a row of dedup_reviews refers to a missing row of memories"
    ]


# -- full-text queries ----------------------------------------------------------------


def test_query_words_are_plain_quoted_terms() -> None:
    words = fts.words('tabs "vs" spaces -- NEAR(x) AND y* Tabs')
    assert words == ["tabs", "vs", "spaces", "NEAR", "x", "AND", "y"]
    assert fts.match_expression(words) == (
        '"tabs" OR "vs" OR "spaces" OR "NEAR" OR "x" OR "AND" OR "y"'
    )
    assert fts.words("Naïve café 日本") == ["Naïve", "café", "日本"]
    assert fts.words("e\u0301te\u0301") == ["\u00e9t\u00e9"]
    assert fts.words(" -- ** () \"' ") == []
    assert fts.match_expression([]) is None


def test_query_words_are_capped() -> None:
    assert len(fts.words(" ".join(f"w{i}" for i in range(1000)))) == fts.MAX_TERMS


def test_affordable_takes_the_rarest_words_within_budget() -> None:
    counts = {"the": 90_000, "use": 3000, "indent": 40, "python": 1500, "zzz": 0}
    # A word counted in no memory costs nothing: it is kept.
    assert fts.affordable(counts) == ["zzz", "indent", "python", "use"]
    assert fts.affordable(counts, budget=2000) == ["zzz", "indent", "python"]
    assert fts.affordable({"the": 90_000}) == []


def test_text_search_skips_words_too_common_to_afford(
    storage: SQLiteStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fts, "MAX_POSTINGS", 5)
    storage.write_memories([new(f"m{i}", f"common filler {i}") for i in range(10)])
    [rare] = storage.write_memories([new("rare", "common and rare words")])
    scope = Scope((STORE,))
    assert storage.text_search("common", scope, 20) == []
    assert [hit.id for hit in storage.text_search("common rare", scope, 20)] == [rare.memory.id]


def test_word_counts_are_recounted_after_enough_changes(
    storage: SQLiteStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fts, "MAX_POSTINGS", 5)
    monkeypatch.setattr(cache, "COUNT_DRIFT", 3)
    scope = Scope((STORE,))
    storage.write_memories([new(f"m{i}", f"common {i}") for i in range(3)])
    assert len(storage.text_search("common", scope, 20)) == 3
    storage.write_memories([new(f"n{i}", f"common {i}") for i in range(4)])
    # Seven memories now hold the word: over budget once recounted.
    assert storage.text_search("common", scope, 20) == []


def test_word_counts_follow_new_memories(db_path: Path, storage: SQLiteStorage) -> None:
    scope = Scope((STORE,))
    assert storage.text_search("zeppelin", scope, 5) == []  # counted 0, cached
    [own] = storage.write_memories([new("a", "a zeppelin note")])
    assert [hit.id for hit in storage.text_search("zeppelin", scope, 5)] == [own.memory.id]
    with SQLiteStorage(db_path) as other:
        [theirs] = other.write_memories([new("b", "another zeppelin note")])
    found = {hit.id for hit in storage.text_search("zeppelin", scope, 5)}
    assert found == {own.memory.id, theirs.memory.id}


def test_archived_error_quotes_a_label_with_spaces(storage: SQLiteStorage) -> None:
    storage.write_memories([new("build command")])
    storage.set_archived(STORE, "build command", True)
    with pytest.raises(ArchivedMemoryError) as caught:
        storage.write_memories([new("build command", "changed")])
    assert f"thatch unarchive 'build command' {STORE}" in str(caught.value)


# -- sharing the file -------------------------------------------------------------


def test_a_second_handle_sees_every_kind_of_change(db_path: Path) -> None:
    query = unit(1)
    scope = Scope((STORE,))
    with SQLiteStorage(db_path) as writer, SQLiteStorage(db_path) as reader:

        def seen() -> list[int]:
            return [hit.id for hit in reader.vector_search(query, "m", scope, 10)]

        assert seen() == []  # warm, empty cache
        [a] = [r.memory for r in writer.write_memories([new("a", seed=1)])]
        assert seen() == [a.id]
        writer.set_archived(STORE, "a", True)
        assert seen() == []
        writer.set_archived(STORE, "a", False)
        assert seen() == [a.id]
        writer.set_embeddings("other-model", [(a.id, unit(2))])
        assert seen() == []
        assert [h.id for h in reader.vector_search(query, "other-model", scope, 10)] == [a.id]
        writer.set_embeddings("m", [(a.id, query)])
        assert seen() == [a.id]
        writer.delete_memory(STORE, "a")
        assert seen() == []


def _blocks(storage: SQLiteStorage, model: str = "m") -> dict:
    return storage._cache._vectors._models[model]


def test_other_handles_writes_are_applied_without_a_reload(db_path: Path) -> None:
    scope = Scope((STORE,))
    with SQLiteStorage(db_path) as writer, SQLiteStorage(db_path) as reader:
        [first] = writer.write_memories([new("a", seed=1)])
        assert len(reader.vector_search(unit(1), "m", scope, 10)) == 1
        block = _blocks(reader)[STORE]

        # Nothing searchable changed: no row is re-read, nothing reloads.
        writer.record_recall([first.memory.id], first.memory.created_at)
        writer.mark_reviewed(first.memory.id, writer.write_memories([new("b")])[0].memory.id)
        assert len(reader.vector_search(unit(1), "m", scope, 10)) == 2
        assert _blocks(reader)[STORE] is block

        writer.delete_memory(STORE, "b")
        assert [h.id for h in reader.vector_search(unit(1), "m", scope, 10)] == [first.memory.id]
        assert _blocks(reader)[STORE] is block


def test_a_handle_behind_the_trimmed_log_reloads(db_path: Path) -> None:
    scope = Scope((STORE,))
    with SQLiteStorage(db_path) as writer, SQLiteStorage(db_path) as reader:
        writer.write_memories([new("a", seed=1), new("b", seed=2)])
        assert len(reader.vector_search(unit(1), "m", scope, 10)) == 2
        block = _blocks(reader)[STORE]
        writer.delete_memory(STORE, "a")
        writer.write_memories([new("c", seed=3)])
        # Lose the log entry of the delete, as trimming would.
        conn = raw(db_path)
        try:
            conn.execute(
                "DELETE FROM search_changes WHERE seq < (SELECT max(seq) FROM search_changes)"
            )
        finally:
            conn.close()
        labels = {
            reader.get_memories([h.id])[h.id].label
            for h in reader.vector_search(unit(1), "m", scope, 10)
        }
        assert labels == {"b", "c"}
        assert _blocks(reader)[STORE] is not block


def test_the_change_log_keeps_only_recent_entries(storage: SQLiteStorage) -> None:
    storage.write_memories([new(f"m{i}", seed=i + 1) for i in range(10_050)])
    oldest, newest, count = storage._conn.execute(
        "SELECT min(seq), max(seq), count(*) FROM search_changes"
    ).fetchone()
    assert count == 10_000
    assert newest - oldest == 9_999


def test_own_writes_keep_the_vector_cache_exact(db_path: Path) -> None:
    """Random writes through a warm handle; a fresh handle must agree after each one."""
    rng = random.Random(7)
    stores = [STORE, "global", "acme/lib"]
    branches = [None, None, "main", "dev"]
    models = ["m", "m", "m", "m2"]
    queries = [unit(1000 + i) for i in range(3)]
    with SQLiteStorage(db_path) as warm:
        warm.vector_search(queries[0], "m", Scope((STORE,)), 5)
        warm.vector_search(queries[0], "m2", Scope((STORE,)), 5)
        labels: list[tuple[str, str]] = []
        for step in range(400):
            action = rng.random()
            if action < 0.5 or not labels:
                store, label = rng.choice(stores), f"l{rng.randrange(300)}"
                labels.append((store, label))
                item = NewMemory(
                    store,
                    label,
                    f"c{rng.randrange(3)}",
                    rng.choice(branches),
                    rng.choice(models),
                    unit(step),
                )
                with contextlib.suppress(ArchivedMemoryError):
                    warm.write_memories([item])
            elif action < 0.65:
                warm.set_archived(*rng.choice(labels), rng.random() < 0.6)
            elif action < 0.9:
                warm.delete_memory(*rng.choice(labels))
            else:
                memory = warm.get_memory(*rng.choice(labels))
                if memory is not None:
                    warm.set_embeddings(rng.choice(models), [(memory.id, unit(10_000 + step))])
            if step % 20 == 19:
                _assert_same_results(warm, db_path, queries, stores)
        _assert_same_results(warm, db_path, queries, stores)


def _assert_same_results(
    warm: SQLiteStorage, path: Path, queries: list[np.ndarray], stores: list[str]
) -> None:
    with SQLiteStorage(path) as fresh:
        for query in queries:
            for model in ("m", "m2"):
                for branch in (None, "main"):
                    scope = Scope(tuple(stores[:2]), branch)
                    expected = fresh.vector_search(query, model, scope, 500)
                    got = warm.vector_search(query, model, scope, 500)
                    # BLAS may round differently for another matrix layout.
                    assert [hit.id for hit in got] == [hit.id for hit in expected]
                    assert [hit.score for hit in got] == pytest.approx(
                        [hit.score for hit in expected], abs=1e-5
                    )
                    assert warm.store_matrix(STORE, model)[0] == fresh.store_matrix(STORE, model)[0]


def test_the_vector_cache_survives_mass_deletes(storage: SQLiteStorage) -> None:
    query = unit(3)
    storage.write_memories([new(f"m{i}", seed=i + 1) for i in range(300)])
    assert len(storage.vector_search(query, "m", Scope((STORE,)), 1000)) == 300
    for i in range(250):  # enough to compact the block
        storage.delete_memory(STORE, f"m{i}")
    hits = storage.vector_search(query, "m", Scope((STORE,)), 1000)
    survivors = {m.id for m in storage.list_memories()}
    assert {hit.id for hit in hits} == survivors
    assert len(survivors) == 50
    storage.write_memories([new("late", seed=999)])
    assert len(storage.vector_search(query, "m", Scope((STORE,)), 1000)) == 51


def test_vectors_of_another_length_are_left_out(storage: SQLiteStorage) -> None:
    odd = NewMemory(STORE, "odd", "x", None, "m", np.ones(DIM + 1, np.float32))
    storage.write_memories([new("a", seed=1), new("b", seed=2), odd])
    hits = storage.vector_search(unit(1), "m", Scope((STORE,)), 10)
    assert len(hits) == 2
    # Also when written after the index was loaded.
    storage.write_memories([NewMemory(STORE, "odd2", "x", None, "m", np.ones(3, np.float32))])
    assert len(storage.vector_search(unit(1), "m", Scope((STORE,)), 10)) == 2
    with pytest.raises(ValueError, match="dimensions"):
        storage.vector_search(np.ones(DIM + 5, np.float32), "m", Scope((STORE,)), 10)


def test_threads_can_share_one_handle(storage: SQLiteStorage) -> None:
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(25):
                storage.write_memories([new(f"t{worker}-{i}", seed=worker * 100 + i + 1)])
                storage.vector_search(unit(i), "m", Scope((STORE,)), 5)
                storage.text_search("content", Scope((STORE,)), 5)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(storage.list_memories()) == 100


def _write_from_another_process(path: str, worker: int, count: int, start: object) -> None:
    """Runs in a spawned process: open the (maybe fresh) file and write one by one."""
    start.wait()  # type: ignore[attr-defined]
    with SQLiteStorage(path) as storage:
        for i in range(count):
            storage.write_memories([new(f"p{worker}-{i}", seed=worker * 1000 + i + 1)])
            if i % 10 == 0:
                storage.vector_search(unit(i), "m", Scope((STORE,)), 3)


@pytest.mark.slow
def test_concurrent_processes_lose_no_write(db_path: Path) -> None:
    workers, count = 4, 50
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(workers)
    # The file does not exist yet: all four also race to create and migrate it.
    processes = [
        context.Process(target=_write_from_another_process, args=(str(db_path), n, count, start))
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [process.exitcode for process in processes] == [0] * workers

    with SQLiteStorage(db_path) as storage:
        labels = {memory.label for memory in storage.list_memories()}
        assert labels == {f"p{n}-{i}" for n in range(workers) for i in range(count)}
        assert len(storage.vector_search(unit(1), "m", Scope((STORE,)), 1000)) == 200
        assert pragma(storage, "user_version") == SCHEMA_VERSION
        assert storage.integrity_problems() == []


# -- the decision model -------------------------------------------------------------


def _confirm(storage: SQLiteStorage, prediction_id: int, amount: float = 1.0) -> None:
    storage.add_evidence(
        prediction_id,
        signal="confirm",
        confirm=amount,
        disconfirm=0.0,
        detail="",
        session=None,
        when=datetime.now(UTC),
        rule=lambda c, d, p: (c + 5 * p) / (c + d + 5),
    )


def test_a_v1_database_migrates_to_the_current_schema(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = raw(db_path)
    try:
        # The file as the previous release left it: schema v1 and a memory.
        assert migrate(conn, db_path, MIGRATIONS[:1]) == 0
        conn.execute(
            "INSERT INTO memories (store, label, content, model, embedding, created_at,"
            " updated_at) VALUES (?, 'old', 'kept content', 'm', ?, 1.0, 1.0)",
            (STORE, unit(1).astype("<f4").tobytes()),
        )
        assert user_version(conn) == 1
    finally:
        conn.close()

    with SQLiteStorage(db_path) as storage:
        assert pragma(storage, "user_version") == SCHEMA_VERSION == 5
        [memory] = storage.list_memories()
        assert (memory.label, memory.content) == ("old", "kept content")
        assert [h.id for h in storage.vector_search(unit(1), "m", Scope((STORE,)), 5)] == [
            memory.id
        ]
        assert [h.id for h in storage.text_search("kept", Scope((STORE,)), 5)] == [memory.id]
        matcher = storage.add_matcher(STORE, "situation", "m", unit(2))
        prediction = storage.add_prediction(STORE, "statement", "", "m", unit(3), 0.5)
        assert storage.link(matcher.id, prediction.id)
        _confirm(storage, prediction.id)
        assert [h.id for h in storage.nearest_matchers(unit(2), "m", [STORE], 5)] == [matcher.id]
        entry = logged(fields={"triggers": ["a parser"]})
        assert storage.record_predictions([entry]) == [True]
        assert storage.integrity_problems() == []
    with SQLiteStorage(db_path) as again:
        assert len(again.list_predictions()) == 1
        assert again.list_prediction_entries() == [entry]
        assert again.integrity_problems() == []


SCORED = datetime(2025, 3, 2, tzinfo=UTC)


def test_a_v4_prediction_log_is_replaced_by_the_row_table(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = raw(db_path)
    try:
        # v4 kept a hashed id and the block's text; only tests ever wrote to it.
        assert migrate(conn, db_path, MIGRATIONS[:4]) == 0
        conn.execute(
            "INSERT INTO prediction_log (id, session_id, store, text, recorded_at)"
            " VALUES ('0123abcd', 's1', '', 'Prediction: old', 1.0)"
        )
    finally:
        conn.close()

    with SQLiteStorage(db_path) as storage:
        assert pragma(storage, "user_version") == SCHEMA_VERSION
        assert storage.list_prediction_entries() == []
        entry = logged(fields={"levers": {"depth": 2}})
        assert storage.record_predictions([entry]) == [True]
        assert storage.list_prediction_entries() == [entry]
        assert storage.integrity_problems() == []


def test_a_prediction_row_is_stored_in_its_columns(storage: SQLiteStorage) -> None:
    entry = logged(2, "s9", fields={"triggers": ["tabs"]}, store=STORE, action="correct")
    storage.record_predictions([entry])
    storage.score_prediction(entry.id, "accept", SCORED)
    row = storage._conn.execute(
        "SELECT id, session_id, action, confidence, source, fields, store, actual, scored_at"
        " FROM prediction_log"
    ).fetchone()
    assert row == (
        "s9:2:1",
        "s9",
        "correct",
        70,
        "assistant",
        '{"triggers": ["tabs"]}',
        STORE,
        "accept",
        SCORED.timestamp(),
    )


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("confidence", 101),
        ("source", "elsewhere"),
        ("actual", "maybe"),
        ("fields", "[1]"),
        ("scored_at", None),
    ],
)
def test_the_schema_refuses_a_row_that_is_not_one(
    storage: SQLiteStorage, column: str, value: object
) -> None:
    # Another program writing the file directly still cannot store a broken row.
    storage.record_predictions([logged(actual="accept", scored_at=SCORED)])
    with pytest.raises(sqlite3.IntegrityError):
        storage._conn.execute(f"UPDATE prediction_log SET {column} = ?", (value,))


def test_evidence_counts_are_stored_as_real(storage: SQLiteStorage) -> None:
    vector = unit(4)
    prediction = storage.add_prediction(STORE, "s", "", "m", vector, 0.5)
    _confirm(storage, prediction.id, 0.25)
    row = storage._conn.execute(
        "SELECT typeof(confirm_count), typeof(disconfirm_count), confirm_count, embedding"
        " FROM predictions"
    ).fetchone()
    assert row == ("real", "real", 0.25, vector.astype("<f4").tobytes())


def _decision_blocks(storage: SQLiteStorage, kind: str = "matcher") -> dict:
    return storage._decision_cache._indexes[kind]._models["m"]


def test_evidence_and_fires_log_no_vector_change(storage: SQLiteStorage) -> None:
    matcher = storage.add_matcher(STORE, "situation", "m", unit(1))
    prediction = storage.add_prediction(STORE, "statement", "", "m", unit(2), 0.5)

    def logged() -> int:
        return storage._conn.execute("SELECT count(*) FROM decision_changes").fetchone()[0]

    before = logged()
    storage.link(matcher.id, prediction.id)
    _confirm(storage, prediction.id)
    storage.record_fires("s", [(prediction.id, 0.5, 0.4)], datetime.now(UTC))
    assert logged() == before
    storage.delete_matcher(matcher.id)
    assert logged() == before + 1


def test_other_handles_decision_writes_are_applied_without_a_reload(db_path: Path) -> None:
    with SQLiteStorage(db_path) as writer, SQLiteStorage(db_path) as reader:
        first = writer.add_matcher(STORE, "first", "m", unit(1))
        assert len(reader.nearest_matchers(unit(1), "m", [STORE], 10)) == 1
        block = _decision_blocks(reader)[STORE]

        second = writer.add_matcher(STORE, "second", "m", unit(2))
        prediction = writer.add_prediction(STORE, "statement", "", "m", unit(3), 0.5)
        writer.link(second.id, prediction.id)
        _confirm(writer, prediction.id)
        assert {h.id for h in reader.nearest_matchers(unit(1), "m", [STORE], 10)} == {
            first.id,
            second.id,
        }
        assert _decision_blocks(reader)[STORE] is block
        writer.delete_matcher(first.id)
        assert [h.id for h in reader.nearest_matchers(unit(1), "m", [STORE], 10)] == [second.id]
        assert _decision_blocks(reader)[STORE] is block


def test_a_handle_behind_the_trimmed_decision_log_reloads(db_path: Path) -> None:
    with SQLiteStorage(db_path) as writer, SQLiteStorage(db_path) as reader:
        first = writer.add_matcher(STORE, "first", "m", unit(1))
        assert len(reader.nearest_matchers(unit(1), "m", [STORE], 10)) == 1
        block = _decision_blocks(reader)[STORE]
        writer.delete_matcher(first.id)
        second = writer.add_matcher(STORE, "second", "m", unit(2))
        conn = raw(db_path)
        try:
            conn.execute(
                "DELETE FROM decision_changes WHERE seq < (SELECT max(seq) FROM decision_changes)"
            )
        finally:
            conn.close()
        assert [h.id for h in reader.nearest_matchers(unit(1), "m", [STORE], 10)] == [second.id]
        assert _decision_blocks(reader)[STORE] is not block


def test_own_decision_writes_keep_the_cache_exact(db_path: Path) -> None:
    """Random adds and deletes through a warm handle; a fresh handle must agree."""
    rng = random.Random(11)
    stores, models = [STORE, "global"], ["m", "m", "m2"]
    query = unit(999)
    with SQLiteStorage(db_path) as warm:
        for model in ("m", "m2"):
            warm.nearest_matchers(query, model, stores, 5)
            warm.nearest_predictions(query, model, stores, 5)
        rows: list[tuple[str, int]] = []
        for step in range(120):
            if rng.random() < 0.65 or not rows:
                store, model = rng.choice(stores), rng.choice(models)
                if rng.random() < 0.5:
                    rows.append(("m", warm.add_matcher(store, "d", model, unit(step + 1)).id))
                else:
                    made = warm.add_prediction(store, "s", "", model, unit(step + 1), 0.5)
                    rows.append(("p", made.id))
            else:
                kind, row_id = rows.pop(rng.randrange(len(rows)))
                (warm.delete_matcher if kind == "m" else warm.delete_prediction)(row_id)
            if step % 20 == 19:
                with SQLiteStorage(db_path) as fresh:
                    for model in ("m", "m2"):
                        for name in ("nearest_matchers", "nearest_predictions"):
                            got = getattr(warm, name)(query, model, stores, 500)
                            expected = getattr(fresh, name)(query, model, stores, 500)
                            assert [h.id for h in got] == [h.id for h in expected]


def test_integrity_check_finds_a_dangling_edge(db_path: Path, storage: SQLiteStorage) -> None:
    matcher = storage.add_matcher(STORE, "situation", "m", unit(1))
    prediction = storage.add_prediction(STORE, "statement", "", "m", unit(2), 0.5)
    storage.link(matcher.id, prediction.id)
    conn = raw(db_path)  # foreign keys off: no cascade
    try:
        conn.execute("DELETE FROM predictions WHERE id = ?", (prediction.id,))
    finally:
        conn.close()
    assert storage.integrity_problems() == [
        "a row of prediction_edges refers to a missing row of predictions"
    ]


# -- the plugin -------------------------------------------------------------------


PART_HOOKS = {
    "memories": plugin.thatch_memory_storage,
    "decisions": plugin.thatch_decision_storage,
    "predictions": plugin.thatch_prediction_storage,
}


def test_the_hooks_answer_only_for_sqlite(tmp_path: Path) -> None:
    paths = Paths.under_home(tmp_path)
    other = Config(paths=paths, db_path=tmp_path / "x.db", storage_backend="postgres")
    assert [hook(other) for hook in PART_HOOKS.values()] == [None, None, None]
    assert not (tmp_path / "x.db").exists()

    config = Config(paths=paths, db_path=tmp_path / "x.db", storage_backend="sqlite")
    storage = plugin.thatch_memory_storage(config)
    try:
        assert isinstance(storage, SQLiteStorage)
        assert storage.path == tmp_path / "x.db"
    finally:
        assert storage is not None
        storage.close()


@pytest.mark.parametrize("part", sorted(PART_HOOKS))
def test_each_hook_answers_for_its_own_part(tmp_path: Path, part: str) -> None:
    paths = Paths.under_home(tmp_path)
    config = Config(
        paths=paths,
        db_path=tmp_path / "x.db",
        storage_backend="postgres",
        storage_parts={part: "sqlite"},  # type: ignore[dict-item]
    )
    opened = {name: hook(config) for name, hook in PART_HOOKS.items()}
    storage = opened.pop(part)
    try:
        assert isinstance(storage, SQLiteStorage)
        assert list(opened.values()) == [None, None]
    finally:
        assert storage is not None
        storage.close()


def test_one_config_gets_one_object_for_every_part(tmp_path: Path) -> None:
    config = Config(paths=Paths.under_home(tmp_path), db_path=tmp_path / "x.db")
    memories = plugin.thatch_memory_storage(config)
    assert plugin.thatch_decision_storage(config) is memories
    assert plugin.thatch_prediction_storage(config) is memories
    other = Config(paths=Paths.under_home(tmp_path), db_path=tmp_path / "x.db")
    apart = plugin.thatch_memory_storage(other)
    assert apart is not memories
    assert memories is not None
    assert apart is not None
    memories.close()
    apart.close()
    # Closed, it is not handed out again: the next use opens the file anew.
    reopened = plugin.thatch_decision_storage(config)
    assert reopened is not memories
    assert reopened is not None
    assert not reopened.closed
    reopened.close()


def test_the_plugin_manager_finds_the_backend(tmp_path: Path) -> None:
    manager, _origins = create_manager(PluginSelection(allowed=frozenset({"sqlite"})))
    config = Config(paths=Paths.under_home(tmp_path), db_path=tmp_path / "via-hook.db")
    storage = manager.hook.thatch_memory_storage(config=config)
    try:
        assert isinstance(storage, SQLiteStorage)
        assert manager.hook.thatch_decision_storage(config=config) is storage
        assert manager.hook.thatch_prediction_storage(config=config) is storage
    finally:
        storage.close()


def test_the_entry_point_is_registered() -> None:
    points = importlib.metadata.entry_points(group="thatch", name="sqlite")
    assert [point.value for point in points] == ["thatch_sqlite.plugin"]
    assert os.fspath(Path(plugin.__file__)).endswith("plugin.py")
