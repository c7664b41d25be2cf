"""The words search's own table (migration 6): filled on upgrade, kept in step by every write."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from pg_cluster import Server, schema_for
from pg_handles import Open, query, schema_at
from thatch.plugin import ArchivedMemoryError
from thatch.testing.contracts import APP, GLOBAL, new, scope, unit, write
from thatch_postgres.storage import PostgresStorage

# What a words row must match: its memory's.
_OUT_OF_STEP = """
    SELECT count(*) FROM memories AS m FULL JOIN memory_words AS w ON w.id = m.id
    WHERE m.id IS NULL OR w.id IS NULL
       OR (w.store, w.branch, w.archived, w.search)
          IS DISTINCT FROM (m.store, m.branch, m.archived, m.search)
"""


def out_of_step(server: Server, schema: str) -> int:
    [(count,)] = query(server, schema, _OUT_OF_STEP)
    return int(str(count))


def words_rows(server: Server, schema: str) -> int:
    [(count,)] = query(server, schema, "SELECT count(*) FROM memory_words")
    return int(str(count))


def test_an_upgrade_from_version_5_fills_the_words_table(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    schema = schema_for(tmp_path)
    # Version 5 with memories in it (one archived, one on a branch), as the
    # release before this table left them.
    with schema_at(postgres_server, schema, 5) as conn:
        for label, words, branch, archived in (
            ("live", "kept words", None, False),
            ("gone", "archived words", None, True),
            ("side", "branch words", "feature", False),
        ):
            conn.execute(
                "INSERT INTO memories (store, label, content, branch, archived, model,"
                " embedding, search, created_at, updated_at) VALUES (%s, %s, %s, %s, %s,"
                " 'model-a', '\\x0000803f'::bytea, to_tsvector('english', %s), now(), now())",
                (APP, label, words, branch, archived, words),
            )

    storage = open_handle()
    assert words_rows(postgres_server, schema) == 3
    assert out_of_step(postgres_server, schema) == 0
    assert storage.integrity_problems() == []
    live = storage.get_memory(APP, "live")
    assert live is not None
    assert live.content == "kept words"
    found = {hit.id for hit in storage.text_search("words", scope(), 10)}
    assert found == {live.id}
    on_branch = {hit.id for hit in storage.text_search("words", scope(branch="feature"), 10)}
    assert len(on_branch) == 2
    with_archived = storage.text_search("archived", scope(), 10, include_archived=True)
    assert len(with_archived) == 1
    # Upgraded rows change as new ones do.
    storage.set_archived(APP, "gone", False)
    assert len(storage.text_search("archived", scope(), 10)) == 1


def test_every_write_keeps_the_words_in_step(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    schema = schema_for(tmp_path)
    storage = open_handle()
    first, second = write(storage, new("a", "alpha words"), new("b", "beta words", store=GLOBAL))
    assert out_of_step(postgres_server, schema) == 0

    write(storage, new("a", "gamma words", branch="feature"))
    assert storage.text_search("alpha", scope(), 10) == []
    assert storage.text_search("gamma", scope(), 10) == []
    assert [h.id for h in storage.text_search("gamma", scope(branch="feature"), 10)] == [first.id]

    both = scope(APP, GLOBAL)
    assert [h.id for h in storage.text_search("beta", both, 10)] == [second.id]
    storage.set_archived(GLOBAL, "b", True)
    assert storage.text_search("beta", both, 10) == []
    storage.set_archived(GLOBAL, "b", True)
    storage.set_archived(GLOBAL, "b", False)
    assert [h.id for h in storage.text_search("beta", both, 10)] == [second.id]

    storage.set_embeddings(first.model, [(first.id, unit(9))])
    storage.mark_reviewed(first.id, second.id)
    assert out_of_step(postgres_server, schema) == 0

    assert storage.delete_memory(APP, "a")
    assert words_rows(postgres_server, schema) == 1
    assert out_of_step(postgres_server, schema) == 0
    assert storage.integrity_problems() == []


def test_a_restore_fills_the_words_table(open_handle: Open, tmp_path: Path) -> None:
    source = open_handle()
    written = write(source, new("a", "restored alpha"), new("b", "restored beta", store=GLOBAL))
    source.set_archived(GLOBAL, "b", True)
    memories = source.list_memories(include_archived=True)
    items = [(m, source.embeddings([m.id], m.model)[m.id]) for m in memories]
    assert len(items) == len(written)

    copy = PostgresStorage(source.dsn, f"{schema_for(tmp_path)}_copy")
    both = scope(APP, GLOBAL)
    try:
        assert copy.restore_memories(items) == [True, True]
        assert len(copy.text_search("restored", both, 10)) == 1
        assert len(copy.text_search("restored", both, 10, include_archived=True)) == 2
        assert copy.integrity_problems() == []
    finally:
        copy.close()


def test_a_refused_batch_leaves_no_words(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    schema = schema_for(tmp_path)
    storage = open_handle()
    write(storage, new("old", "old words"))
    storage.set_archived(APP, "old", True)
    with pytest.raises(ArchivedMemoryError):
        write(storage, new("fresh", "fresh words"), new("old", "changed words"))
    assert words_rows(postgres_server, schema) == 1
    assert storage.text_search("fresh", scope(), 10) == []
    assert out_of_step(postgres_server, schema) == 0


def test_a_words_row_out_of_step_is_a_problem(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    storage = open_handle()
    write(storage, new("a", "some words"))
    query(postgres_server, schema_for(tmp_path), "DELETE FROM memory_words")
    assert storage.integrity_problems() == [
        "1 memories are out of step with their words (memory_words)"
    ]


def test_a_change_made_under_another_search_path_fills_this_schemas_words(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    # As an administrator's UPDATE typed in psql, without the schema on the path.
    schema = schema_for(tmp_path)
    storage = open_handle()
    write(storage, new("a", "alpha words"))
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as conn:
        conn.execute("SET search_path TO public")
        conn.execute(f"UPDATE {schema}.memories SET search = to_tsvector('english', 'gamma words')")
    assert out_of_step(postgres_server, schema) == 0
    assert len(storage.text_search("gamma", scope(), 10)) == 1


def test_identifiers_are_found_by_their_parts(open_handle: Open) -> None:
    storage = open_handle()
    (dotted,) = write(storage, new("retry", "Retries live in taxcalc.charge.retry"))
    (path,) = write(storage, new("entry", "The app starts in src/app/main.py"))
    assert [hit.id for hit in storage.text_search("charge retry", scope(), 10)] == [dotted.id]
    assert [hit.id for hit in storage.text_search("taxcalc.charge", scope(), 10)] == [dotted.id]
    assert [hit.id for hit in storage.text_search("main.py", scope(), 10)] == [path.id]


def test_an_upgrade_from_version_6_cuts_the_stored_words_as_queries_are(
    open_handle: Open, postgres_server: Server, tmp_path: Path
) -> None:
    schema = schema_for(tmp_path)
    # Version 6 with words stored as PostgreSQL's parser cuts them, as that release did.
    with schema_at(postgres_server, schema, 6) as conn:
        conn.execute(
            "INSERT INTO memories (store, label, content, model, embedding, search,"
            " created_at, updated_at) VALUES (%s, 'retry', %s, 'model-a', '\\x0000803f'::bytea,"
            " setweight(to_tsvector('english', 'retry'), 'A')"
            " || setweight(to_tsvector('english', %s), 'D'), now(), now())",
            (APP, "Crème brûlée in taxcalc.charge.retry", "creme brulee in taxcalc.charge.retry"),
        )
    storage = open_handle()
    assert out_of_step(postgres_server, schema) == 0
    (hit,) = storage.text_search("charge", scope(), 10)
    assert storage.text_search("creme", scope(), 10) == [hit]
    # Stored as a fresh write of the same memory (in another store) stores them.
    write(storage, new("retry", "Crème brûlée in taxcalc.charge.retry", store=GLOBAL))
    stored = query(postgres_server, schema, "SELECT store, search::text FROM memories")
    assert len(stored) == 2
    assert len({search for _store, search in stored}) == 1
