"""Reads and writes on the pool that survive a lost connection (see :mod:`thatch_postgres.retry`).

A write is a function of a connection: :meth:`Pooled._write` runs it in a
transaction and, when the connection is lost, runs it again from the start:

- lost before COMMIT was sent: the server rolled it back, so it is simply
  run again;
- lost during COMMIT: it may have been saved. Most writes leave the same
  rows when run twice (an upsert, a delete, an archive, a score, a log row
  keyed by id), so they are run again. A write that adds (a recall count,
  evidence, a fire, a new matcher or prediction) passes :class:`Once`: its
  transaction first records a request id in ``write_requests``, and a
  retry that finds the id there answers from what was saved instead of
  adding twice. The id's primary key settles even a commit still in flight
  on the server: the retry's own insert waits for it. This costs one
  statement per such write, and was chosen over reporting "may or may not
  have been saved", which would leave the user to find out which.

A call that still fails when the time allowed is spent raises StorageError
naming the server, what became of the write, and what to do.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Generic, LiteralString, TypeVar

import attrs
import psycopg
from psycopg_pool import PoolTimeout
from thatch.plugin import StorageError

from thatch_postgres import listen, retry
from thatch_postgres.connect import borrow, describe, reporting

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

    from thatch_postgres.connect import Connection
    from thatch_postgres.vectors import Table

T = TypeVar("T")

_LOCK_GENERATION = "SELECT generation FROM vector_changes WHERE source = %s FOR UPDATE"
# Claims the request id. ON CONFLICT waits for a transaction still holding
# the id, then does nothing if it committed. Requests a day old are cleared
# on the way, a few at a time and never waiting (SKIP LOCKED), so two
# writers never deadlock over them.
_CLAIM_REQUEST = """
    WITH cleared AS (
        DELETE FROM write_requests WHERE id IN (
            SELECT id FROM write_requests WHERE done_at < now() - interval '1 day'
            ORDER BY done_at LIMIT 20 FOR UPDATE SKIP LOCKED
        )
    )
    INSERT INTO write_requests (id, done_at) VALUES (%s, now()) ON CONFLICT (id) DO NOTHING
"""
_REQUEST_ROW = "SELECT row_id FROM write_requests WHERE id = %s"
_NAME_REQUEST_ROW = "UPDATE write_requests SET row_id = %s WHERE id = %s"


@attrs.frozen
class Once(Generic[T]):
    """How a write that must not apply twice answers when a retry finds it already saved."""

    #: The result, read back; given the row :attr:`row` named when it was saved.
    again: Callable[[Connection, int | None], T]
    #: The row the result stands for (a new matcher's id), kept with the request.
    row: Callable[[T], int | None] = lambda _result: None


class Pooled:
    """The connection pool of a storage, and calls on it that retry."""

    dsn: str
    schema: str
    _pool: ConnectionPool[Connection]
    _retry: retry.Retry
    _connect_timeout: float

    @contextmanager
    def _connection(self, action: str) -> Iterator[Connection]:
        """One pooled connection, waiting for one no longer than the running call allows.

        A lost connection passes as it is, for the caller's retry; any
        other failure of the server is a StorageError.
        """
        try:
            with borrow(self._pool, retry.time_left(self._connect_timeout)) as conn:
                yield conn
        except psycopg.OperationalError as exc:
            if retry.lost(exc) or retry.rolled_back(exc):
                raise
            raise StorageError(
                f"could not {action} on PostgreSQL ({describe(self.dsn)}): {exc}"
            ) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            # A member's role on a schema not made (or not upgraded) yet by its
            # owner, or missing a grant: no retry helps. The primary message only:
            # the rest is PL/pgSQL context (a trigger's statement) over several lines.
            raise StorageError(
                f"could not {action} on PostgreSQL ({describe(self.dsn)}), schema "
                f"{self.schema!r}: {exc.diag.message_primary or exc}; its owner's role creates "
                "and upgrades the schema (connect once as the owner with this version of thatch), "
                "and a member's role needs the grants that docs/team.md lists under "
                "'Setting up the server'"
            ) from exc

    def _read(self, action: str, read: Callable[[Connection], T]) -> T:
        """``read(conn)``, run again on a fresh connection while the connection is lost."""

        def attempt() -> T:
            with self._connection(action) as conn:
                return read(conn)

        return self._retry.run(attempt, lambda gave: self._unreachable(action, gave, None))

    def _rows(self, query: LiteralString, params: Sequence[Any] | dict[str, Any]) -> list[Any]:
        return self._read("read", lambda conn: conn.execute(query, params).fetchall())

    def _write(
        self,
        action: str,
        work: Callable[[Connection], T],
        *,
        vectors: Table | None = None,
        once: Once[T] | None = None,
    ) -> T:
        """``work(conn)`` in one transaction, committed whole or not at all, retried when lost.

        ``work`` may run more than once, each time from the start: it
        changes nothing but the database, and builds its result afresh.
        A write that adds must pass ``once`` (see the module docstring).

        A transaction that may change the ``vectors`` table's vectors locks
        its generation row first (the trigger moves it anyway). Taken first,
        before any row of the table, that lock makes such writers take turns
        and can never close a deadlock with a row another writer holds.
        """
        request = secrets.token_hex(16) if once is not None else None
        # Set once a COMMIT was cut off: from then on it may have been saved.
        unsure = False

        def attempt() -> T:
            nonlocal unsure
            committing = False
            try:
                with self._connection(action) as conn, conn.transaction():
                    if vectors is not None:
                        conn.execute(_LOCK_GENERATION, (vectors,))
                    if once is not None and conn.execute(_CLAIM_REQUEST, (request,)).rowcount == 0:
                        # An earlier try committed after all.
                        row = conn.execute(_REQUEST_ROW, (request,)).fetchone()
                        return once.again(conn, row[0] if row else None)
                    result = work(conn)
                    if once is not None and (named := once.row(result)) is not None:
                        conn.execute(_NAME_REQUEST_ROW, (named, request))
                    committing = True
                return result
            except Exception as exc:
                if committing and retry.lost(exc):
                    unsure = True
                raise
            finally:
                # Committed or not, this process's next search checks the
                # server: it must see its own write before the notification.
                if vectors is not None:
                    listen.note_write(self.dsn, self.schema, vectors)

        return self._retry.run(
            attempt, lambda gave: self._unreachable(action, gave, "unsure" if unsure else "unsaved")
        )

    @contextmanager
    def _transaction(self, action: str, vectors: Table | None = None) -> Iterator[Connection]:
        """One transaction, tried once: for a body that cannot be a function run again.

        :meth:`_write` is the one that survives a lost connection; this
        reports it at once.
        """
        try:
            with (
                reporting(action, self.dsn),
                self._connection(action) as conn,
                conn.transaction(),
            ):
                if vectors is not None:
                    conn.execute(_LOCK_GENERATION, (vectors,))
                yield conn
        finally:
            if vectors is not None:
                listen.note_write(self.dsn, self.schema, vectors)

    def _unreachable(self, action: str, gave: retry.GaveUp, write: str | None) -> StorageError:
        """The error of a call that gave up: where, why, what became of the write, and the fix."""
        if retry.rolled_back(gave.error):
            why = f"the server kept rolling it back ({gave.error})"
        elif isinstance(gave.error, PoolTimeout):
            # Its message says only how long the pool was asked.
            why = "no connection to the server could be made"
        else:
            why = f"the connection was lost ({_first_line(gave.error)})"
        outcome = {
            None: "",
            "unsaved": "; nothing of it was saved",
            "unsure": (
                "; the connection broke while it was being committed, so it may or may not "
                "have been saved: check before doing it again"
            ),
        }[write]
        return StorageError(
            f"could not {action} on PostgreSQL ({describe(self.dsn)}): {why}, "
            f"still after {gave.seconds:.1f} s ({_tries(gave.tries)}){outcome}; check that the "
            "server runs and this machine reaches it, then try again "
            f"([storage.postgres] retry_seconds waits longer than {self._retry.budget:g} s)"
        )


def _tries(count: int) -> str:
    return "1 try" if count == 1 else f"{count} tries"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
