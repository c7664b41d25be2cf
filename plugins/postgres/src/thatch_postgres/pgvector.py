"""pgvector on the server: whether it is there, and the table of memory vectors it searches.

pgvector is optional: Debian's PostgreSQL packages have none, and the
backend works without it (:mod:`thatch_postgres.vectors`). Where the server
has it, each memory's vector is also kept as a ``vector`` in
``memory_vectors``, one row per memory, so that the server can rank a
large store itself (:mod:`thatch_postgres.server_search`).

Kept in step without ever being wrong, only sometimes incomplete:

- the client adds a memory's row in the transaction that writes the
  memory (:func:`put`), in a savepoint: if that fails the memory is saved
  all the same and its row is missing;
- a trigger (migration 8's function, installed with the table) drops the
  row when the memory's model or vector changes, and copies its store,
  branch and archived flag when they change; a deleted memory takes its
  row with it (``ON DELETE CASCADE``). So a row that is there always
  matches its memory, and :func:`put` never overwrites one;
- missing rows (a write by a handle that had not yet seen the table, a
  failed savepoint) are found by :func:`fill_gaps`, which the install runs
  once for every memory already there and the search runs again now and
  then (:data:`thatch_postgres.server_search.REFRESH_SECONDS`).

The ``vector`` type lives in whichever schema the extension was created in
(:func:`detect` finds it); statements that name it put that schema on the
transaction's ``search_path`` (:func:`use_extension`).
"""

from __future__ import annotations

import hashlib
import logging
import struct
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
import numpy as np
import psycopg
from psycopg import sql
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg.rows import TupleRow

from thatch_postgres.vectors import FLOAT32

if TYPE_CHECKING:
    from thatch_postgres.connect import Connection

log = logging.getLogger("thatch")

#: The most dimensions a ``vector`` value may have (pgvector's limit).
VECTOR_MAX_DIM = 16000
#: The most dimensions pgvector's HNSW index takes; larger models stay on the cache.
HNSW_MAX_DIM = 2000
#: Memories read and written per batch by :func:`fill_gaps`.
FILL_BATCH = 1000

_DETECT = """
    SELECT (SELECT n.nspname FROM pg_extension AS e
            JOIN pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'vector'),
        EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector'),
        to_regclass('memory_vectors') IS NOT NULL
"""
# In public, not in one team's schema: the extension serves the whole
# database, and dropping a schema must not drop it for the others.
_CREATE_EXTENSION = "CREATE EXTENSION IF NOT EXISTS vector SCHEMA public"
_INSTALL: tuple[str, ...] = (
    """
    CREATE TABLE memory_vectors (
        id bigint PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
        model text NOT NULL,
        dim integer NOT NULL,
        store text NOT NULL,
        branch text,
        archived boolean NOT NULL,
        embedding vector NOT NULL
    )
    """,
    # What the search counts per store (server_search), read from the index alone.
    "CREATE INDEX memory_vectors_scope ON memory_vectors (model, dim, store) WHERE NOT archived",
    """
    CREATE TRIGGER memories_vectors_kept
    AFTER UPDATE OF store, branch, archived, model, embedding ON memories FOR EACH ROW
    WHEN ((OLD.store, OLD.branch, OLD.archived, OLD.model, OLD.embedding)
        IS DISTINCT FROM (NEW.store, NEW.branch, NEW.archived, NEW.model, NEW.embedding))
    EXECUTE FUNCTION keep_memory_vectors()
    """,
)
# A row already there is current (the trigger drops stale ones), so it stays.
_PUT = """
    INSERT INTO memory_vectors (id, model, dim, store, branch, archived, embedding)
    SELECT id, model, %(dim)s, store, branch, archived, %(vector)s::vector
    FROM memories WHERE id = %(id)s
    ON CONFLICT (id) DO NOTHING
"""
_GAPS = """
    SELECT m.id, m.embedding FROM memories AS m
    WHERE NOT EXISTS (SELECT FROM memory_vectors AS v WHERE v.id = m.id)
    ORDER BY m.id
"""
_INDEX_VALID = "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)"


@attrs.frozen
class Found:
    """What :func:`detect` saw."""

    #: The schema the extension was created in; None while it is not created.
    extension: str | None
    #: Whether the server could create it (its files are installed).
    available: bool
    #: Whether this schema has ``memory_vectors``.
    table: bool


def detect(conn: Connection) -> Found:
    """Whether the server has pgvector, and this schema its table of vectors (one query)."""
    row = conn.execute(_DETECT).fetchone()
    assert row is not None
    return Found(row[0], bool(row[1]), bool(row[2]))


def create_extension(conn: Connection) -> bool:
    """Try to create the extension; False (and nothing changed) if this role may not."""
    try:
        with conn.transaction():
            conn.execute(_CREATE_EXTENSION)
    except psycopg.OperationalError:
        raise
    except psycopg.DatabaseError as exc:
        # Not a superuser (pgvector is not a trusted extension), no schema public ...
        log.info("pgvector is available but could not be created: %s", exc)
        return False
    return True


def install(conn: Connection, schema: str, extension: str) -> bool:
    """Make ``memory_vectors`` and fill it from every memory; False if this role may not.

    Under an advisory lock of the schema's own, as migrations are: of
    several machines starting at once, one makes and fills the table, in
    one transaction, and the others wait and find it there. A role that may
    not create tables carries on without (the cache path).
    """
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(schema, "install"),))
            use_extension(conn, schema, extension)
            if detect(conn).table:
                return True
            for statement in _INSTALL:
                conn.execute(statement)
            filled = fill_gaps(conn, schema, extension)
            # The planner's statistics, there before autovacuum's: without
            # them it takes the scope for a few rows and sorts them all.
            conn.execute("ANALYZE memory_vectors")
    except psycopg.OperationalError:
        raise
    except psycopg.DatabaseError as exc:
        log.info("the table of vectors for pgvector could not be made: %s", exc)
        return False
    log.info("memory_vectors made in schema %s, %d memories copied", schema, filled)
    return True


def use_extension(conn: Connection, schema: str, extension: str) -> None:
    """Let the running transaction name pgvector's type and operators (in ``extension``)."""
    path = sql.SQL("SET LOCAL search_path TO {}, {}").format(
        sql.Identifier(schema), sql.Identifier(extension)
    )
    conn.execute(path)


class _Vector:
    """A stored vector to send as pgvector's binary value."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = values


class _VectorDumper(Dumper):
    """pgvector's binary form: the length and a spare field (int16), then float32, big-endian.

    No type oid: ``vector`` has none fixed, and the server takes the type
    from the statement (``%s::vector``).
    """

    format = Format.BINARY

    def dump(self, obj: _Vector) -> bytes:
        values = obj.values
        return struct.pack(">HH", len(values), 0) + values.astype(">f4").tobytes()


def vector_param(values: np.ndarray) -> _Vector:
    """``values`` as a statement parameter for a cursor of :func:`vector_cursor`."""
    return _Vector(values)


def vector_cursor(conn: Connection) -> psycopg.Cursor[TupleRow]:
    """A cursor that sends :func:`vector_param` values in pgvector's binary form."""
    cursor = conn.cursor()
    cursor.adapters.register_dumper(_Vector, _VectorDumper)
    return cursor


def storable(blob: bytes) -> np.ndarray | None:
    """A stored vector as pgvector takes it; None for one it refuses (empty, NaN, too long)."""
    if not blob or len(blob) % FLOAT32.itemsize:
        return None
    values = np.frombuffer(blob, dtype=FLOAT32)
    if len(values) > VECTOR_MAX_DIM or not np.isfinite(values).all():
        return None
    return values


def put(conn: Connection, schema: str, extension: str, rows: Sequence[tuple[int, bytes]]) -> bool:
    """Add the rows of these memories (id, stored vector) in the running transaction.

    In a savepoint: a failure is logged and leaves the rows missing (found
    again by :func:`fill_gaps`), never the memory unsaved. A lost
    connection passes, for the caller's retry. False when it failed.
    """
    params = [
        {"id": memory_id, "dim": len(values), "vector": vector_param(values)}
        for memory_id, blob in rows
        if (values := storable(blob)) is not None
    ]
    if not params:
        return True
    try:
        with conn.transaction(), vector_cursor(conn) as cursor:
            use_extension(conn, schema, extension)
            cursor.executemany(_PUT, params)
    except psycopg.OperationalError:
        raise
    except psycopg.DatabaseError as exc:
        log.warning("pgvector rows of %d memories not written (added later): %s", len(params), exc)
        return False
    return True


def fill_gaps(conn: Connection, schema: str, extension: str) -> int:
    """Add the rows of memories that have none; returns how many were looked at.

    Idempotent (:func:`put` keeps rows already there). Runs in the
    caller's transaction, or in one per batch on an autocommit connection.
    """
    with conn.cursor(binary=True) as cursor:
        gaps = cursor.execute(_GAPS).fetchall()
    for start in range(0, len(gaps), FILL_BATCH):
        batch = gaps[start : start + FILL_BATCH]
        put(conn, schema, extension, [(int(row[0]), bytes(row[1])) for row in batch])
    return len(gaps)


def index_name(model: str, dim: int) -> str:
    """The HNSW index of one model's vectors of one length (a hash: model ids are free text)."""
    digest = hashlib.sha1(f"{model}\n{dim}".encode()).hexdigest()[:16]
    return f"memory_vectors_hnsw_{digest}"


def index_valid(conn: Connection, model: str, dim: int) -> bool | None:
    """Whether that index is there and usable; None when there is none at all."""
    row = conn.execute(_INDEX_VALID, (index_name(model, dim),)).fetchone()
    return None if row is None else bool(row[0])


def build_index(conn: Connection, schema: str, extension: str, model: str, dim: int) -> bool:
    """Build the HNSW index of ``model``'s ``dim``-long vectors; whether it is usable after.

    ``CONCURRENTLY``, on the autocommit connection: writes go on while it
    builds (a plain build would hold every memory write for its minute at
    100k vectors). One machine builds, under a session advisory lock it
    only tries for; the others carry on with the cache meanwhile. A build
    cut short leaves an invalid index, dropped and built again here.
    """
    if dim > HNSW_MAX_DIM:
        return False
    key = _lock_key(schema, f"index {index_name(model, dim)}")
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
    if not row or not row[0]:
        return False
    name = sql.Identifier(index_name(model, dim))
    try:
        # SET, not SET LOCAL: CONCURRENTLY runs outside a transaction. Put back below.
        conn.execute(
            sql.SQL("SET search_path TO {}, {}").format(
                sql.Identifier(schema), sql.Identifier(extension)
            )
        )
        if index_valid(conn, model, dim) is False:
            conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(name))
        if index_valid(conn, model, dim) is None:
            # The expression and predicate the search repeats word for word
            # (server_search): the planner uses a partial index only then.
            conn.execute(
                sql.SQL(
                    "CREATE INDEX CONCURRENTLY {} ON memory_vectors USING hnsw"
                    " ((embedding::vector({dim})) vector_ip_ops)"
                    " WHERE model = {model} AND dim = {dim} AND NOT archived"
                ).format(name, dim=sql.Literal(dim), model=sql.Literal(model))
            )
    except psycopg.OperationalError:
        raise
    except psycopg.DatabaseError as exc:
        log.warning("pgvector index of model %s (%d dims) not built: %s", model, dim, exc)
    finally:
        if not conn.closed and not conn.broken:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
    return bool(index_valid(conn, model, dim))


def _lock_key(schema: str, what: str) -> int:
    """One advisory lock per schema and job (apart from the migrations' own)."""
    return zlib.crc32(f"thatch-postgres pgvector {what} {schema}".encode())
