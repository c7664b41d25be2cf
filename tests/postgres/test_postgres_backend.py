"""What the postgres backend adds to the contract: migrations, sharing, configuration."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import thatch_postgres.plugin
from pg_cluster import Server, schema_for
from pg_handles import Open, heard_after, query, schema_at
from thatch.plugin import Config, ConfigError, InvalidInputError, StorageError
from thatch.testing.contracts import (
    APP,
    GLOBAL,
    at,
    beta,
    evidence,
    new,
    prediction,
    scope,
    toward,
    unit,
    write,
)
from thatch_postgres.migrations import LATEST, MIGRATIONS
from thatch_postgres.settings import PostgresSettings
from thatch_postgres.storage import PostgresStorage


def home(directory: Path, text: str) -> Config:
    config_file = directory / "config" / "config.toml"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(text)
    return Config.load(directory, environ={})


# -- migrations ---------------------------------------------------------------------


def test_the_schema_records_its_version_once(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    open_handle()
    open_handle()
    rows = query(
        postgres_server, schema_for(tmp_path), "SELECT version FROM schema_version ORDER BY 1"
    )
    assert rows == [(version,) for version, _steps in MIGRATIONS]
    assert rows[-1] == (LATEST,)


def test_a_schema_of_an_older_version_is_upgraded(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    schema = schema_for(tmp_path)
    # Version 1 with a memory in it, as a machine running the first release left it.
    with schema_at(postgres_server, schema, 1) as conn:
        conn.execute(
            "INSERT INTO memories (store, label, content, model, embedding, search,"
            " created_at, updated_at) VALUES (%s, 'old', 'kept words', 'model-a',"
            " '\\x0000803f'::bytea, to_tsvector('english', 'kept words'), now(), now())",
            (APP,),
        )

    storage = open_handle()
    versions = query(postgres_server, schema, "SELECT version FROM schema_version ORDER BY 1")
    assert versions == [(version,) for version, _steps in MIGRATIONS]
    old = storage.get_memory(APP, "old")
    assert old is not None
    assert old.content == "kept words"
    assert storage.list_prediction_entries() == []
    assert storage.list_predictions() == []


def test_machines_that_start_at_once_migrate_once(open_handle: Open) -> None:
    errors: list[BaseException] = []

    def start() -> None:
        try:
            open_handle()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_a_schema_newer_than_the_code_is_refused(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    open_handle().close()
    query(postgres_server, schema_for(tmp_path), "INSERT INTO schema_version VALUES (999, now())")
    with pytest.raises(StorageError, match="version 999, newer than"):
        open_handle()


def test_full_text_has_a_gin_index_on_the_narrow_words_table(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    open_handle()
    rows = query(
        postgres_server,
        schema_for(tmp_path),
        "SELECT indexname, indexdef FROM pg_indexes"
        " WHERE schemaname = current_schema() AND indexdef LIKE '%USING gin%'",
    )
    assert len(rows) == 1
    assert rows[0][0] == "memory_words_search"
    assert "ON " in str(rows[0][1])
    assert "memory_words USING gin (search)" in str(rows[0][1])


# -- sharing ------------------------------------------------------------------------


def test_recalls_counted_on_two_machines_at_once_are_all_kept(open_handle: Open) -> None:
    one, two = open_handle(), open_handle()
    [memory] = write(one, new("shared"))
    rounds = 40

    def recall(storage: PostgresStorage) -> None:
        for _ in range(rounds):
            storage.record_recall([memory.id], datetime.now(UTC))

    threads = [threading.Thread(target=recall, args=(s,)) for s in (one, two, one, two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = two.get_memory(APP, "shared")
    assert stored is not None
    assert stored.recall_count == 4 * rounds


def test_one_label_written_on_two_machines_at_once_is_one_memory(open_handle: Open) -> None:
    handles = [open_handle() for _ in range(4)]
    barrier = threading.Barrier(len(handles))
    actions: list[str] = []

    def remember(storage: PostgresStorage, n: int) -> None:
        barrier.wait()
        [result] = storage.write_memories([new("deploy", f"version {n}")])
        actions.append(result.action)

    threads = [
        threading.Thread(target=remember, args=(handle, n)) for n, handle in enumerate(handles)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(actions) == ["created", "updated", "updated", "updated"]
    assert [m.label for m in handles[0].list_memories()] == ["deploy"]


def test_a_warm_cache_follows_every_kind_of_change_made_elsewhere(open_handle: Open) -> None:
    writer, reader = open_handle(), open_handle()
    query = unit(5)
    write(writer, *(new(f"m{i}", vector=toward(query, i / 40, i)) for i in range(40)))

    def same_as_a_fresh_handle() -> None:
        fresh = open_handle()
        for model in ("model-a", "model-b"):
            expected = fresh.vector_search(query, model, scope(APP, GLOBAL), 100)
            assert reader.vector_search(query, model, scope(APP, GLOBAL), 100) == expected
            assert reader.store_matrix(APP, model)[0] == fresh.store_matrix(APP, model)[0]
        fresh.close()

    same_as_a_fresh_handle()  # warm
    changes: list[Callable[[], object]] = [
        lambda: write(writer, new("m1", "new words", vector=toward(query, 0.99, 99))),
        lambda: writer.set_archived(APP, "m2", True),
        lambda: writer.set_archived(APP, "m2", False),
        lambda: writer.delete_memory(APP, "m3"),
        lambda: write(writer, new("m4", model="model-b")),
        lambda: writer.set_embeddings("model-a", [(write(writer, new("late"))[0].id, query)]),
        lambda: write(writer, new("g", store=GLOBAL, vector=toward(query, 0.5, 7))),
        lambda: write(writer, *(new(f"m{i}", f"rewritten {i}") for i in range(5, 35))),
    ]
    for change in changes:
        heard = heard_after(reader, "memories")
        change()
        heard()
        same_as_a_fresh_handle()


def test_writers_of_overlapping_batches_at_once_neither_deadlock_nor_duplicate(
    open_handle: Open,
) -> None:
    handles = [open_handle() for _ in range(4)]
    start = threading.Barrier(len(handles))
    failures: list[BaseException] = []

    def remember(index: int) -> None:
        # Each writer goes through the same 60 labels in its own order, in
        # batches of 6, counting recalls in between.
        labels = [f"m{i}" for i in random.Random(index).sample(range(60), 60)]
        start.wait()
        try:
            for at_batch in range(0, 60, 6):
                batch = labels[at_batch : at_batch + 6]
                handles[index].write_memories([new(label, f"by {index}") for label in batch])
                handles[index].record_recall([1, 2, 3], datetime.now(UTC))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=remember, args=(i,)) for i in range(len(handles))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    memories = handles[0].list_memories()
    assert sorted(m.label for m in memories) == sorted(f"m{i}" for i in range(60))


def test_a_prediction_confirmed_from_two_machines_at_once_counts_every_confirm(
    open_handle: Open,
) -> None:
    one, two = open_handle(), open_handle()
    created = prediction(one, 1, prior=0.5)
    start = threading.Barrier(2)

    def confirm(storage: PostgresStorage) -> None:
        start.wait()
        for minute in range(5):
            evidence(storage, created.id, "confirm", when=at(minute))

    threads = [threading.Thread(target=confirm, args=(s,)) for s in (one, two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    [final] = two.get_predictions([created.id]).values()
    assert final.confirm_count == 10.0
    # The confidence is the rule's for the final counts: the last writer saw them all.
    assert final.confidence == pytest.approx(beta(10.0, 0.0, 0.5))
    assert len(one.provenance(created.id)) == 10


def test_text_postgres_cannot_hold_is_refused_and_writes_nothing(open_handle: Open) -> None:
    storage = open_handle()
    with pytest.raises(InvalidInputError, match="NUL"):
        storage.write_memories([new("fine"), new("bad", "a\x00b")])
    assert storage.list_memories() == []


def test_an_unreachable_server_is_reported(tmp_path: Path) -> None:
    nowhere = f"host={tmp_path} port=5432 user=nobody dbname=none"
    with pytest.raises(StorageError, match="could not connect to PostgreSQL"):
        PostgresStorage(nowhere, "thatch", connect_timeout=0.5)


def test_a_refused_connection_names_the_servers_reason(postgres_server: Server) -> None:
    missing = postgres_server.dsn("no_such_database")
    with pytest.raises(StorageError) as refused:
        PostgresStorage(missing, "thatch", connect_timeout=0.5)
    message = str(refused.value)
    assert message.startswith("could not connect to PostgreSQL")
    assert 'database "no_such_database" does not exist' in message
    assert "\n" not in message


# -- configuration ------------------------------------------------------------------


def test_it_is_off_unless_the_config_selects_it(tmp_path: Path) -> None:
    assert thatch_postgres.plugin.thatch_memory_storage(home(tmp_path, "")) is None
    everything_in_sqlite = home(tmp_path, '[storage]\nbackend = "sqlite"\n')
    assert thatch_postgres.plugin.thatch_memory_storage(everything_in_sqlite) is None


def test_the_dsn_comes_from_the_file_or_else_the_environment(tmp_path: Path) -> None:
    url = "postgresql://team@db.example/thatch"
    in_file = home(tmp_path, f'[storage.postgres]\ndsn = "{url}"\nschema = "team_a"\n')
    assert PostgresSettings.of(in_file) == PostgresSettings(url, "team_a")

    empty = home(tmp_path, "")
    from_env = Config.load(tmp_path, environ={"THATCH_DATABASE_URL": url})
    assert PostgresSettings.of(from_env) == PostgresSettings(url)
    # Empty: libpq's own PG* variables and service file decide.
    assert PostgresSettings.of(empty) == PostgresSettings("")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('dsn = "postgresql://team:s3cret@db/thatch"', "holds a password"),
        ('dsn = "host=db password=s3cret"', "holds a password"),
        ('schema = "Team-A"', "lower-case letters"),
        ('schema = "a; DROP TABLE x"', "lower-case letters"),
    ],
)
def test_a_password_or_an_odd_schema_is_refused(tmp_path: Path, line: str, message: str) -> None:
    config = home(tmp_path, f"[storage.postgres]\n{line}\n")
    with pytest.raises(ConfigError, match=message):
        PostgresSettings.of(config)


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://team:s3cret@db/thatch",
        "host=db password=s3cret",
        # libpq cannot read these, and its error would quote the password.
        "host=db password=s3cret odd",
        "postgresql://team:s3cret%zz@db/thatch",
        "postgresql://team:s3cret@[db/thatch",
    ],
)
def test_a_refused_dsn_is_never_shown_with_its_password(tmp_path: Path, dsn: str) -> None:
    config = home(tmp_path, f'[storage.postgres]\ndsn = "{dsn}"\n')
    with pytest.raises(ConfigError, match="holds a password") as refused:
        PostgresSettings.of(config)
    assert "s3cret" not in str(refused.value)


def test_a_dsn_libpq_cannot_read_is_refused_on_one_line(tmp_path: Path) -> None:
    config = home(tmp_path, '[storage.postgres]\ndsn = "host=db odd"\n')
    with pytest.raises(ConfigError) as refused:
        PostgresSettings.of(config)
    assert 'not a connection string (missing "=" after "odd"' in str(refused.value)
    assert "\n" not in str(refused.value)


def test_after_a_server_restart_the_next_call_reconnects(private_postgres_server: Server) -> None:
    server = private_postgres_server
    storage = PostgresStorage(server.dsn(), "thatch", connect_timeout=5)
    try:
        [before] = write(storage, new("before"))
        server.restart()
        [after] = write(storage, new("after"))
        assert {m.label for m in storage.list_memories()} == {"before", "after"}
        assert before.id != after.id
    finally:
        storage.close()


def test_a_write_while_the_server_is_down_is_reported(private_postgres_server: Server) -> None:
    server = private_postgres_server
    storage = PostgresStorage(server.dsn(), "thatch", connect_timeout=0.5)
    try:
        server.stop()
        with pytest.raises(StorageError, match="could not save memories"):
            storage.write_memories([new("lost")])
        server.start()
        assert storage.get_memory(APP, "lost") is None
    finally:
        storage.close()


def member_of(server: Server, schema: str, *more: str) -> str:
    """The dsn of a new role with a member's grants on ``schema``, which its owner sets up.

    ``more``: statements run after the grants, ``{member}`` standing for the role.
    """
    member = f"member_{schema}"
    PostgresStorage(server.dsn(), schema).close()  # the owner sets it up
    for statement in (
        f"CREATE ROLE {member} LOGIN",
        f"GRANT USAGE ON SCHEMA {schema} TO {member}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {member}",
        f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {member}",
        *(extra.format(member=member) for extra in more),
    ):
        query(server, schema, statement)
    return server.dsn().replace("user=thatch_test", f"user={member}")


def test_a_member_who_may_only_read_and_write_rows_connects_to_a_current_schema(
    postgres_server: Server, tmp_path: Path
) -> None:
    schema = schema_for(tmp_path)
    storage = PostgresStorage(member_of(postgres_server, schema), schema)
    try:
        [memory] = write(storage, new("shared"))
        storage.record_recall([memory.id], datetime.now(UTC))
        stored = storage.get_memory(APP, "shared")
        assert stored is not None
        assert stored.recall_count == 1
    finally:
        storage.close()


def test_a_member_on_a_schema_its_owner_has_not_set_up_is_told_who_must(
    postgres_server: Server, tmp_path: Path
) -> None:
    schema = schema_for(tmp_path)
    member = f"member_{schema}"
    query(postgres_server, "public", f"CREATE ROLE {member} LOGIN")
    as_member = postgres_server.dsn().replace("user=thatch_test", f"user={member}")
    with pytest.raises(StorageError) as refused:
        PostgresStorage(as_member, schema)
    message = str(refused.value)
    assert message.startswith("could not upgrade the schema on PostgreSQL")
    assert "permission denied" in message
    assert "connect once as the owner" in message
    assert (
        query(postgres_server, "public", f"SELECT 1 FROM pg_namespace WHERE nspname = '{schema}'")
        == []
    )


def test_a_member_missing_a_grant_is_told_in_one_line_and_nothing_is_saved(
    postgres_server: Server, tmp_path: Path
) -> None:
    schema = schema_for(tmp_path)
    # As after an upgrade that added a table, before the grants were run again.
    as_member = member_of(postgres_server, schema, "REVOKE ALL ON memory_words FROM {member}")
    storage = PostgresStorage(as_member, schema)
    try:
        with pytest.raises(StorageError) as refused:
            storage.write_memories([new("shared")])
        message = str(refused.value)
        assert "could not save memories" in message
        assert "permission denied for table memory_words" in message
        assert "\n" not in message
    finally:
        storage.close()
    assert query(postgres_server, schema, "SELECT count(*) FROM memories") == [(0,)]
