"""Riding out a lost connection: a call cut short is tried again, with growing waits, for a while.

A server restart, a network drop, an administrator's shutdown or a pool
with no connection to give cut a call short. What may be done next
depends on where it was cut (see :mod:`thatch_postgres.pooled`):

- before COMMIT was sent, the server rolls the whole transaction back, so
  running it again from the start is safe; a read is always safe again;
- during COMMIT nothing says whether the server committed. Writes that
  leave the same rows when run twice are run again; writes that add (a
  count, a row of evidence) carry a request id that settles it.

While the server is away, a try waits for the pool to connect again, up to
the time left (see :func:`thatch_postgres.connect.borrow`, which asks it
again twice a second); the waits below space the tries after a connection
that broke under a statement.

A deadlock or a serialization failure is tried again too: the server rolled
it all back. Any other error (a constraint, a refusal) is the answer and is
raised at once. A call still failing when the time allowed
(``[storage.postgres] retry_seconds``) is spent raises StorageError.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

import attrs
import psycopg
from psycopg import errors
from psycopg_pool import PoolTimeout

T = TypeVar("T")

log = logging.getLogger("thatch")

#: The waits before each new try, in seconds; the last repeats until the time allowed is spent.
#: Doubling from a tenth of a second: a blip (a pooled connection the server dropped,
#: replaced at once) costs 0.1 s, and the cap keeps a try within 2 s of a restarted
#: server coming back, rather than doubling far past it.
BACKOFF_SECONDS: tuple[float, ...] = (0.1, 0.2, 0.4, 0.8, 1.6, 2.0)

# SQLSTATEs of a connection that ended or could not start: the connection
# exceptions (class 08) and the server shutting down or starting (57P01-03).
_GONE = frozenset({"57P01", "57P02", "57P03"})

# When the running call gives up (a monotonic time), for the pool's wait
# for a connection; None outside a call.
_deadline: ContextVar[float | None] = ContextVar("thatch_postgres_deadline", default=None)


def lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the connection broke or none could be had (not that the SQL failed)."""
    if isinstance(exc, PoolTimeout):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    # No SQLSTATE: libpq's own "server closed the connection unexpectedly".
    return state is None or state.startswith("08") or state in _GONE


def rolled_back(exc: BaseException) -> bool:
    """Whether the server rolled the transaction back to break a deadlock or a conflict."""
    # Not all of class 40: 40003 says the outcome is unknown.
    return isinstance(
        exc, (errors.TransactionRollback, errors.SerializationFailure, errors.DeadlockDetected)
    )


def time_left(default: float) -> float:
    """Seconds the running call may still wait for a connection (``default`` outside one)."""
    deadline = _deadline.get()
    if deadline is None:
        return default
    return max(deadline - time.monotonic(), 0.0)


@attrs.frozen
class GaveUp:
    """Why a call stopped trying: the last error, how many tries, over how long."""

    error: BaseException
    tries: int
    seconds: float


@attrs.frozen
class Retry:
    """Tries a call until it succeeds, fails for good, or ``budget`` seconds are spent."""

    budget: float
    schedule: tuple[float, ...] = BACKOFF_SECONDS
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic

    def run(self, attempt: Callable[[], T], give_up: Callable[[GaveUp], Exception]) -> T:
        """``attempt()``'s result; ``give_up``'s error once the time allowed is spent.

        An error that is not a lost connection nor a rollback is raised at
        once. The last try starts at the latest when the time runs out.
        """
        started = self.clock()
        deadline = started + self.budget
        tries = 0
        while True:
            tries += 1
            token = _deadline.set(time.monotonic() + max(deadline - self.clock(), 0.0))
            try:
                result = attempt()
            except Exception as exc:
                if not (lost(exc) or rolled_back(exc)):
                    raise
                left = deadline - self.clock()
                if left <= 0:
                    raise give_up(GaveUp(exc, tries, self.clock() - started)) from exc
                wait = min(self.schedule[min(tries - 1, len(self.schedule) - 1)], left)
                log.info("PostgreSQL: try %d failed (%s); trying again in %.1f s", tries, exc, wait)
                self.sleep(wait)
            else:
                if tries > 1:
                    log.info("PostgreSQL: answered on try %d", tries)
                return result
            finally:
                _deadline.reset(token)
