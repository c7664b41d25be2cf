"""Retrying after a lost connection: the schedule, what is retried, and writes applied once.

The schedule is tested on a clock of its own (no waiting). The storage is
tested on the real server through a pool that fails the first borrows as a
lost server does, and through connections whose COMMIT is cut off, saved
or not: a write that adds is applied exactly once either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import psycopg
import pytest
from pg_handles import Open, settings_of
from psycopg import errors
from psycopg_pool import PoolTimeout
from thatch.plugin import ConfigError, NewMemory, StorageError
from thatch_postgres.connect import borrow
from thatch_postgres.retry import BACKOFF_SECONDS, GaveUp, Retry, lost, rolled_back
from thatch_postgres.settings import DEFAULT_RETRY_SECONDS
from thatch_postgres.storage import PostgresStorage

APP = "acme/app"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Clock:
    """A monotonic clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def retry(self, budget: float) -> Retry:
        return Retry(budget, sleep=self.sleep, clock=lambda: self.now)


def failing(times: int, error: Callable[[], Exception]) -> Callable[[], str]:
    """A call that raises ``error()`` ``times`` times, then answers "done"."""
    left = [times]

    def attempt() -> str:
        if left[0]:
            left[0] -= 1
            raise error()
        return "done"

    return attempt


def refuse(gave: GaveUp) -> Exception:
    return StorageError(f"gave up after {gave.tries} tries over {gave.seconds:g} s")


# -- the schedule ---------------------------------------------------------------------


def test_a_call_that_fails_n_times_waits_the_schedule_then_answers() -> None:
    clock = Clock()
    assert clock.retry(10).run(failing(4, PoolTimeout), refuse) == "done"
    assert clock.slept == list(BACKOFF_SECONDS[:4])


def test_the_last_wait_repeats_and_the_total_stays_within_the_budget() -> None:
    clock = Clock()
    with pytest.raises(StorageError, match="gave up after 10 tries over 10 s"):
        clock.retry(10).run(failing(1000, PoolTimeout), refuse)
    # 0.1 + 0.2 + 0.4 + 0.8 + 1.6 = 3.1, then 2 s waits; the last one is cut to the budget.
    assert clock.slept[: len(BACKOFF_SECONDS)] == list(BACKOFF_SECONDS)
    assert set(clock.slept[len(BACKOFF_SECONDS) : -1]) == {BACKOFF_SECONDS[-1]}
    assert sum(clock.slept) == pytest.approx(10.0)


def test_a_budget_of_zero_tries_once() -> None:
    clock = Clock()
    with pytest.raises(StorageError, match="after 1 tries"):
        clock.retry(0).run(failing(1, PoolTimeout), refuse)
    assert clock.slept == []


def test_an_error_that_is_not_a_lost_connection_is_raised_at_once() -> None:
    clock = Clock()
    with pytest.raises(errors.UniqueViolation):
        clock.retry(10).run(failing(1, errors.UniqueViolation), refuse)
    assert clock.slept == []


@pytest.mark.parametrize(
    "error",
    [
        PoolTimeout("couldn't get a connection after 1.00 sec"),
        psycopg.OperationalError("server closed the connection unexpectedly"),
        errors.AdminShutdown("terminating connection due to administrator command"),
        errors.CannotConnectNow("the database system is starting up"),
        errors.ConnectionFailure("connection failure"),
    ],
)
def test_a_lost_connection_is_told_apart(error: Exception) -> None:
    assert lost(error)


@pytest.mark.parametrize(
    "error",
    [
        errors.UniqueViolation("duplicate key"),
        errors.QueryCanceled("canceling statement due to statement timeout"),
        errors.DiskFull("could not extend file"),
        ValueError("not a database error"),
    ],
)
def test_a_refusal_is_not_a_lost_connection(error: Exception) -> None:
    assert not lost(error)


def test_a_deadlock_is_retried_as_rolled_back() -> None:
    assert rolled_back(errors.DeadlockDetected("deadlock detected"))
    assert rolled_back(errors.SerializationFailure("could not serialize access"))
    clock = Clock()
    assert clock.retry(10).run(failing(2, errors.DeadlockDetected), refuse) == "done"


# -- the setting ----------------------------------------------------------------------


def test_the_time_allowed_is_a_setting(tmp_path: Path) -> None:
    assert settings_of(tmp_path, "").retry_seconds == DEFAULT_RETRY_SECONDS == 10.0
    assert settings_of(tmp_path, "retry_seconds = 30\n").retry_seconds == 30.0
    with pytest.raises(ConfigError, match="retry_seconds"):
        settings_of(tmp_path, "retry_seconds = -1\n")


# -- the storage ----------------------------------------------------------------------


@attrs.define
class FlakyPool:
    """Stands for a storage's pool: the first ``failures`` borrows fail as a lost server does."""

    pool: Any
    failures: int
    error: Callable[[], Exception] = lambda: psycopg.OperationalError(
        "server closed the connection unexpectedly"
    )
    borrowed: int = 0

    def connection(self, timeout: float | None = None) -> AbstractContextManager[Any]:
        self.borrowed += 1
        if self.failures:
            self.failures -= 1
            raise self.error()
        return self.pool.connection(timeout=timeout)

    def close(self) -> None:
        self.pool.close()


@attrs.define
class CutCommits:
    """Cuts off the next ``count`` COMMITs as a dropped network would: after saving, or not."""

    count: int
    saved: bool
    cut: int = 0
    #: Called at each cut (the server then stays away, say).
    then: Callable[[], None] = lambda: None

    def take(self) -> bool:
        if self.count:
            self.count -= 1
            self.cut += 1
            self.then()
            return True
        return False


class CuttingConnection:
    """A pooled connection whose COMMIT ``cuts`` may cut off; everything else as it is."""

    def __init__(self, conn: psycopg.Connection[Any], cuts: CutCommits) -> None:
        self._conn = conn
        self._cuts = cuts

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        cut = self._cuts.take()
        with self._conn.transaction():
            yield
            if cut and not self._cuts.saved:
                raise psycopg.Rollback()  # rolled back, and the exception swallowed
        if cut:
            raise psycopg.OperationalError("server closed the connection unexpectedly")


@attrs.define
class CuttingPool:
    pool: Any
    cuts: CutCommits

    @contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[CuttingConnection]:
        with self.pool.connection(timeout=timeout) as conn:
            yield CuttingConnection(conn, self.cuts)

    def close(self) -> None:
        self.pool.close()


def quick(storage: PostgresStorage, clock: Clock | None = None) -> Clock:
    """Retries on ``storage`` wait on a clock of the test's, not the wall's."""
    clock = clock or Clock()
    storage._retry = attrs.evolve(storage._retry, sleep=clock.sleep)
    return clock


def memory(label: str, content: str = "a fact") -> NewMemory:
    return NewMemory(APP, label, content, None, "model-a", [1.0, 0.0, 0.0])


def test_a_write_waits_out_a_pool_that_fails_then_works(open_handle: Open) -> None:
    storage = open_handle()
    clock = quick(storage)
    storage._pool = FlakyPool(storage._pool, failures=3)  # type: ignore[assignment]
    [result] = storage.write_memories([memory("kept")])
    assert result.action == "created"
    assert clock.slept == list(BACKOFF_SECONDS[:3])
    assert storage.get_memory(APP, "kept") is not None


def test_a_borrow_asks_the_pool_again_until_its_time_is_up(open_handle: Open) -> None:
    storage = open_handle()
    pool = FlakyPool(storage._pool, failures=3, error=PoolTimeout)
    with borrow(pool, 5.0) as conn:  # type: ignore[arg-type]
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert pool.borrowed == 4
    pool.failures = 10**9
    with pytest.raises(PoolTimeout), borrow(pool, 0.2):  # type: ignore[arg-type]
        pass


def test_a_read_waits_out_a_lost_connection_too(open_handle: Open) -> None:
    storage = open_handle()
    storage.write_memories([memory("there")])
    clock = quick(storage)
    storage._pool = FlakyPool(  # type: ignore[assignment]
        storage._pool,
        failures=2,
        error=lambda: errors.AdminShutdown("terminating connection due to administrator command"),
    )
    assert [m.label for m in storage.list_memories()] == ["there"]
    assert clock.slept == list(BACKOFF_SECONDS[:2])


def test_a_write_that_never_gets_through_says_so_with_the_fix(open_handle: Open) -> None:
    storage = open_handle()
    storage._retry = attrs.evolve(storage._retry, budget=0.3)
    storage._pool = FlakyPool(storage._pool, failures=10**9)  # type: ignore[assignment]
    with pytest.raises(StorageError) as raised:
        storage.write_memories([memory("lost")])
    message = str(raised.value)
    assert "could not save memories on PostgreSQL (host=" in message
    assert "nothing of it was saved" in message
    assert "check that the server runs" in message
    assert "retry_seconds" in message


@attrs.define
class KillingPool:
    """Hands out connections whose session the server ends at once, the first ``kills`` times."""

    pool: Any
    kills: int
    killed: int = 0

    @contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[Any]:
        with self.pool.connection(timeout=timeout) as conn:
            if self.killed < self.kills:
                self.killed += 1
                # As a restart would: the session ends under the write.
                with self.pool.connection() as other:
                    other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
            yield conn

    def close(self) -> None:
        self.pool.close()


def test_a_connection_killed_under_a_write_is_run_again_from_the_start(
    open_handle: Open,
) -> None:
    storage = open_handle()
    clock = quick(storage)
    pool = KillingPool(storage._pool, kills=2)
    storage._pool = pool  # type: ignore[assignment]
    [result] = storage.write_memories([memory("once")])
    assert pool.killed == 2
    assert result.action == "created"
    assert clock.slept == list(BACKOFF_SECONDS[:2])
    assert [m.label for m in storage.list_memories()] == ["once"]


@pytest.mark.parametrize("saved", [True, False], ids=["saved", "not-saved"])
def test_evidence_whose_commit_is_cut_off_counts_once(open_handle: Open, saved: bool) -> None:
    storage = open_handle()
    prediction = storage.add_prediction(APP, "runs make", "habit", "model-a", [0.0, 1.0], 0.5)
    quick(storage)
    cuts = CutCommits(count=1, saved=saved)
    storage._pool = CuttingPool(storage._pool, cuts)  # type: ignore[assignment]

    def rule(confirm: float, disconfirm: float, prior: float) -> float:
        return (confirm + prior) / (confirm + disconfirm + 1.0)

    updated = storage.add_evidence(
        prediction.id,
        signal="confirm",
        confirm=1.0,
        disconfirm=0.0,
        detail="said yes",
        session="s",
        when=T0,
        rule=rule,
    )
    assert cuts.cut == 1
    assert updated.confirm_count == 1.0
    assert updated.confidence == pytest.approx(rule(1.0, 0.0, 0.5))
    assert storage.get_predictions([prediction.id])[prediction.id].confirm_count == 1.0
    assert [p.signal for p in storage.provenance(prediction.id)] == ["confirm"]


@pytest.mark.parametrize("saved", [True, False], ids=["saved", "not-saved"])
def test_rows_added_when_the_commit_is_cut_off_are_added_once(
    open_handle: Open, saved: bool
) -> None:
    storage = open_handle()
    [kept] = storage.write_memories([memory("kept")])
    quick(storage)
    cuts = CutCommits(count=4, saved=saved)
    storage._pool = CuttingPool(storage._pool, cuts)  # type: ignore[assignment]

    matcher = storage.add_matcher(APP, "reviewing a PR", "model-a", [1.0, 0.0])
    prediction = storage.add_prediction(APP, "asks for tests", "habit", "model-a", [0.0, 1.0], 0.4)
    storage.record_recall([kept.memory.id], T0)
    storage.record_fires("s", [(prediction.id, 0.4, 0.9)], T0)
    assert cuts.cut == 4

    assert storage.list_matchers() == [matcher]
    assert [p.id for p in storage.list_predictions()] == [prediction.id]
    assert storage.get_memory(APP, "kept").recall_count == 1  # type: ignore[union-attr]
    assert len(storage.fires()) == 1


def test_a_memory_saved_by_a_commit_cut_off_is_there_once(open_handle: Open) -> None:
    storage = open_handle()
    quick(storage)
    storage._pool = CuttingPool(storage._pool, CutCommits(count=1, saved=True))  # type: ignore[assignment]
    [result] = storage.write_memories([memory("once")])
    # Run again, the write finds its own first try's row, the same content.
    assert result.action == "unchanged"
    assert [m.label for m in storage.list_memories()] == ["once"]


def test_a_commit_cut_off_then_no_server_says_it_may_have_been_saved(open_handle: Open) -> None:
    storage = open_handle()
    storage._retry = attrs.evolve(storage._retry, budget=0.3)
    away = FlakyPool(storage._pool, failures=0)

    def server_gone() -> None:
        away.failures = 10**9

    storage._pool = CuttingPool(away, CutCommits(1, saved=True, then=server_gone))  # type: ignore[assignment]
    with pytest.raises(StorageError, match="may or may not have been saved"):
        storage.record_recall([1], T0)
