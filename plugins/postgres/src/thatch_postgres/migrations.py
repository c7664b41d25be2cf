"""The schema, as numbered migrations recorded in ``schema_version``.

Every client upgrades the schema when it connects. Several machines may
start at once, so the upgrade runs in one transaction under an advisory
lock: the first applies the missing steps, the others wait and then find
nothing to do. A step, once released, is never edited; a change is a new
step. A database newer than this code is refused rather than written to.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, LiteralString

from psycopg import sql
from thatch.plugin import StorageError

from thatch_postgres import text

if TYPE_CHECKING:
    from thatch_postgres.connect import Connection

#: One step: a statement, or a function for what SQL alone cannot do (text
#: must be folded and cut in Python, as the backend does when it writes).
Step = LiteralString | Callable[["Connection"], None]
#: (version, steps). Steps run in order, in the schema being set up.
Migration = tuple[int, tuple[Step, ...]]

# Migration 7's statement: one memory's stored words, as _INSERT makes them.
_CUT_WORDS = """
    UPDATE memories
    SET search = setweight(to_tsvector('english', %s), 'A')
        || setweight(to_tsvector('english', %s), 'D')
    WHERE id = %s
"""
#: Memories whose words migration 7 sends in one batch.
_CUT_BATCH = 1000


def _cut_stored_words(conn: Connection) -> None:
    """Store every memory's words again, cut as a query is (:func:`text.stored_words`)."""
    rows = conn.execute("SELECT id, label, content FROM memories ORDER BY id").fetchall()
    with conn.cursor() as cursor:
        for start in range(0, len(rows), _CUT_BATCH):
            cursor.executemany(
                _CUT_WORDS,
                [
                    (text.stored_words(label), text.stored_words(content), memory_id)
                    for memory_id, label, content in rows[start : start + _CUT_BATCH]
                ],
            )


MIGRATIONS: tuple[Migration, ...] = (
    (
        1,
        (
            # rev orders every change to a row the vector cache holds (see
            # thatch_postgres.vectors); recall bookkeeping does not take one.
            "CREATE SEQUENCE memory_rev AS bigint",
            """
            CREATE TABLE memories (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                store text NOT NULL,
                label text NOT NULL,
                content text NOT NULL,
                branch text,
                archived boolean NOT NULL DEFAULT false,
                model text NOT NULL,
                embedding bytea NOT NULL,
                search tsvector NOT NULL,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL,
                recall_count bigint NOT NULL DEFAULT 0,
                last_recalled_at timestamptz,
                rev bigint NOT NULL DEFAULT nextval('memory_rev'),
                UNIQUE (store, label)
            )
            """,
            "CREATE INDEX memories_search ON memories USING gin (search)",
            # The cache's freshness check reads only this index.
            "CREATE INDEX memories_live_rev ON memories (model, rev) WHERE NOT archived",
            # One generation per table of vectors, moved by every statement that
            # may change a vector a cache holds: a cache compares one number
            # before each search. The row is locked until the writer commits,
            # so generations commit in order and a reader that sees n has
            # every change up to n.
            """
            CREATE TABLE vector_changes (
                source text PRIMARY KEY,
                generation bigint NOT NULL DEFAULT 0
            )
            """,
            "INSERT INTO vector_changes (source) VALUES ('memories')",
            """
            CREATE FUNCTION bump_vector_generation() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE vector_changes SET generation = generation + 1
                WHERE source = TG_ARGV[0];
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER memories_vectors_changed
            AFTER INSERT OR DELETE OR UPDATE OF store, branch, archived, model, embedding
            ON memories FOR EACH STATEMENT EXECUTE FUNCTION bump_vector_generation('memories')
            """,
            """
            CREATE TABLE dedup_reviews (
                first_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
                second_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
                verdict text NOT NULL CHECK (verdict IN ('same', 'different')),
                reviewed_at timestamptz NOT NULL,
                PRIMARY KEY (first_id, second_id),
                CHECK (first_id < second_id)
            )
            """,
            "CREATE INDEX dedup_reviews_second ON dedup_reviews (second_id)",
        ),
    ),
    (
        2,
        (
            # seq keeps the order rows were recorded in, which breaks ties of time.
            """
            CREATE TABLE prediction_log (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                id text NOT NULL,
                session_id text NOT NULL,
                action text NOT NULL,
                toward text NOT NULL,
                confidence integer NOT NULL,
                source text NOT NULL,
                recorded_at timestamptz NOT NULL,
                fields json NOT NULL,
                store text NOT NULL,
                actual text,
                scored_at timestamptz,
                UNIQUE (id, session_id)
            )
            """,
            "CREATE INDEX prediction_log_session ON prediction_log (session_id, recorded_at, seq)",
        ),
    ),
    (
        3,
        (
            # As memory_rev: a new value on every change to a row's vector.
            "CREATE SEQUENCE decision_rev AS bigint",
            """
            CREATE TABLE prediction_matchers (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                store text NOT NULL,
                description text NOT NULL,
                model text NOT NULL,
                embedding bytea NOT NULL,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL,
                rev bigint NOT NULL DEFAULT nextval('decision_rev')
            )
            """,
            "CREATE INDEX prediction_matchers_store ON prediction_matchers (store)",
            "CREATE INDEX prediction_matchers_rev ON prediction_matchers (model, rev)",
            "INSERT INTO vector_changes (source) VALUES ('matchers'), ('predictions')",
            """
            CREATE TRIGGER prediction_matchers_vectors_changed
            AFTER INSERT OR DELETE OR UPDATE OF store, model, embedding
            ON prediction_matchers
            FOR EACH STATEMENT EXECUTE FUNCTION bump_vector_generation('matchers')
            """,
            """
            CREATE TABLE predictions (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                store text NOT NULL,
                statement text NOT NULL,
                rationale text NOT NULL,
                model text NOT NULL,
                embedding bytea NOT NULL,
                confirm_count double precision NOT NULL DEFAULT 0,
                disconfirm_count double precision NOT NULL DEFAULT 0,
                prior double precision NOT NULL,
                confidence double precision NOT NULL,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL,
                rev bigint NOT NULL DEFAULT nextval('decision_rev')
            )
            """,
            "CREATE INDEX predictions_store ON predictions (store)",
            "CREATE INDEX predictions_rev ON predictions (model, rev)",
            """
            CREATE TRIGGER predictions_vectors_changed
            AFTER INSERT OR DELETE OR UPDATE OF store, model, embedding
            ON predictions
            FOR EACH STATEMENT EXECUTE FUNCTION bump_vector_generation('predictions')
            """,
            """
            CREATE TABLE prediction_edges (
                matcher_id bigint NOT NULL REFERENCES prediction_matchers (id) ON DELETE CASCADE,
                prediction_id bigint NOT NULL REFERENCES predictions (id) ON DELETE CASCADE,
                weight double precision NOT NULL,
                created_at timestamptz NOT NULL,
                PRIMARY KEY (matcher_id, prediction_id)
            )
            """,
            "CREATE INDEX prediction_edges_to ON prediction_edges (prediction_id)",
            """
            CREATE TABLE prediction_provenance (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                prediction_id bigint NOT NULL REFERENCES predictions (id) ON DELETE CASCADE,
                signal text NOT NULL
                    CHECK (signal IN ('create', 'confirm', 'disconfirm', 'soft')),
                detail text NOT NULL,
                session text,
                created_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX prediction_provenance_of"
            " ON prediction_provenance (prediction_id, created_at, id)",
            """
            CREATE TABLE prediction_fires (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                session text,
                prediction_id bigint NOT NULL REFERENCES predictions (id) ON DELETE CASCADE,
                confidence double precision NOT NULL,
                score double precision NOT NULL,
                fired_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX prediction_fires_of ON prediction_fires (prediction_id)",
        ),
    ),
    (
        4,
        (
            # Every machine's cache hears of a change when it commits
            # (thatch_postgres.listen). Channels span the database, so the
            # payload names the schema; notifications alike within one
            # transaction arrive once.
            """
            CREATE OR REPLACE FUNCTION bump_vector_generation() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE vector_changes SET generation = generation + 1
                WHERE source = TG_ARGV[0];
                PERFORM pg_notify('thatch_vectors', TG_TABLE_SCHEMA || ' ' || TG_ARGV[0]);
                RETURN NULL;
            END
            $$
            """,
        ),
    ),
    (
        5,
        (
            # The request ids of writes that add, so that a retry after a
            # commit cut off applies them once (thatch_postgres.pooled).
            # row_id: the row such a write made, to answer the retry with.
            """
            CREATE TABLE write_requests (
                id text PRIMARY KEY,
                row_id bigint,
                done_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX write_requests_done ON write_requests (done_at)",
        ),
    ),
    (
        6,
        (
            # The words search reads a table of its own. A memory's row is
            # ~1.7 kB, most of it the vector, which stays in the row: PostgreSQL
            # moves a value out (TOAST) only from rows of ~2 kB up, whatever
            # the column's storage. So a words search read a page per hit, and
            # 100k memories outgrow the server's buffers; these rows hold only
            # what the search filters and ranks by. Triggers keep them in step
            # within each write's own statement, so every path (save, edit,
            # archive, restore) fills them and a failed write leaves neither.
            """
            CREATE TABLE memory_words (
                id bigint PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
                store text NOT NULL,
                branch text,
                archived boolean NOT NULL,
                search tsvector NOT NULL
            )
            """,
            """
            CREATE FUNCTION copy_memory_words() RETURNS trigger LANGUAGE plpgsql
            -- The schema it is made in, not the writer's: an UPDATE typed in
            -- psql with another search_path still fills this schema's table.
            SET search_path FROM CURRENT AS $$
            BEGIN
                INSERT INTO memory_words (id, store, branch, archived, search)
                VALUES (NEW.id, NEW.store, NEW.branch, NEW.archived, NEW.search)
                ON CONFLICT (id) DO UPDATE SET store = excluded.store,
                    branch = excluded.branch, archived = excluded.archived,
                    search = excluded.search;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER memories_words_added AFTER INSERT ON memories
            FOR EACH ROW EXECUTE FUNCTION copy_memory_words()
            """,
            # Archiving an archived memory again, counting recalls and
            # replacing vectors leave the words as they are.
            """
            CREATE TRIGGER memories_words_changed
            AFTER UPDATE OF store, branch, archived, search ON memories FOR EACH ROW
            WHEN ((OLD.store, OLD.branch, OLD.archived, OLD.search)
                IS DISTINCT FROM (NEW.store, NEW.branch, NEW.archived, NEW.search))
            EXECUTE FUNCTION copy_memory_words()
            """,
            "INSERT INTO memory_words (id, store, branch, archived, search)"
            " SELECT id, store, branch, archived, search FROM memories",
            "CREATE INDEX memory_words_search ON memory_words USING gin (search)",
            "DROP INDEX memories_search",
            # The words budget reads this table's statistics
            # (thatch_postgres.wordcounts): there from the upgrade on.
            "ANALYZE memory_words",
        ),
    ),
    (
        7,
        (
            # Words were stored as PostgreSQL's parser cuts them, which keeps
            # taxcalc.charge.retry or src/app/main.py as one word, while a
            # query is cut at every other character: an identifier could not
            # be found by its parts (bench/recall_quality.py --postgres:
            # identifier questions R@5 0.675 against 0.938 on SQLite). Stored
            # words are now cut as queries are; this brings the stored ones
            # in line (memory_words follows through its trigger).
            _cut_stored_words,
            "ANALYZE memory_words",
        ),
    ),
    (
        8,
        (
            # What keeps pgvector's copy of the vectors (memory_vectors, made
            # only where the server has the extension: thatch_postgres.pgvector)
            # true to its memory: a memory whose model or vector changes
            # loses its row, which the writer adds again in the same
            # transaction, so a row that is there is never stale; its
            # store, branch and archived flag follow the memory. The
            # function needs no extension; its trigger comes with the
            # table. The version also keeps out clients older than this
            # one, which would write memories and leave their rows out.
            """
            CREATE FUNCTION keep_memory_vectors() RETURNS trigger LANGUAGE plpgsql
            SET search_path FROM CURRENT AS $$
            BEGIN
                IF (OLD.model, OLD.embedding) IS DISTINCT FROM (NEW.model, NEW.embedding) THEN
                    DELETE FROM memory_vectors WHERE id = NEW.id;
                ELSE
                    UPDATE memory_vectors
                    SET store = NEW.store, branch = NEW.branch, archived = NEW.archived
                    WHERE id = NEW.id;
                END IF;
                RETURN NULL;
            END
            $$
            """,
        ),
    ),
)

LATEST = MIGRATIONS[-1][0]


def _lock_key(schema: str) -> int:
    """One advisory lock per schema, so that teams sharing a server do not wait on each other."""
    return zlib.crc32(f"thatch-postgres migrations {schema}".encode())


def migrate(conn: Connection, schema: str, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring ``schema`` to the last of ``migrations``; return the version it was at before.

    A schema already current is only read: team members whose role may use
    the tables but not create anything connect without an error.
    """
    latest = migrations[-1][0]
    current = schema_version(conn)
    if current > latest:
        raise _too_new(schema, current, latest)
    if current == latest:
        return current
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(schema),))
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        # Again under the lock: another machine may have upgraded meanwhile.
        current = schema_version(conn)
        if current > latest:
            raise _too_new(schema, current, latest)
        for version, statements in migrations:
            if version <= current:
                continue
            for step in statements:
                if callable(step):
                    step(conn)
                else:
                    conn.execute(step)
            conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
    return current


def schema_version(conn: Connection) -> int:
    """The version the connected schema is at (0 for none, or no schema yet)."""
    row = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def _too_new(schema: str, current: int, latest: int) -> StorageError:
    return StorageError(
        f"the PostgreSQL schema {schema!r} is at version {current}, newer than this "
        f"thatch-postgres knows ({latest}); upgrade thatch-postgres on this machine"
    )
