"""Writes after a hook's answer that fail are kept in the session store and made later, once.

The storage here fails a given number of times, then works; a clock the
test moves stands for the waits between tries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from daemon_hooks import SESSION, RuntimeFactory, payload, request
from thatch import deferred
from thatch.daemon.handlers import Handlers
from thatch.daemon.hook_events import handle_hook
from thatch.decisions.nudge import HEADER as DECISION_HEADER
from thatch.nudges.recall import HEADER as RECALL_HEADER
from thatch.plugin.errors import StorageError
from thatch.runtime import Runtime
from thatch.sessions.store import SessionStore

AT = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class Flaky:
    """Calls that raise StorageError ``failures`` times, then are recorded."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.tries = 0
        self.made: list[tuple[Any, ...]] = []

    def call(self, *args: Any) -> None:
        self.tries += 1
        if self.failures:
            self.failures -= 1
            raise StorageError("could not record on the backend: the server is away")
        self.made.append(args)


def fake_app(tmp_path: Path, recall: Flaky, fires: Flaky | None = None) -> Any:
    """The parts of the runtime the writes use: the session store and the storage."""
    decisions = SimpleNamespace(record_fires=(fires or Flaky(0)).call)
    return SimpleNamespace(
        sessions=SessionStore(tmp_path / "sessions.db"),
        thatch=SimpleNamespace(memory_storage=SimpleNamespace(record_recall=recall.call)),
        project=lambda cwd: SimpleNamespace(decision_storage=decisions),
    )


def tick_until_done(app: Any, clock: Clock, ticks: int = 50) -> int:
    """The loop's retries, each tick half a second later; how many ticks it took."""
    for tick in range(ticks):
        if not app.sessions.pending_writes():
            return tick
        clock.now += 0.5
        deferred.retry_due(app, clock)
    raise AssertionError("the writes never got made")


@pytest.mark.parametrize("failures", [1, 3, 8])
def test_recall_counts_that_fail_are_counted_once_the_storage_works(
    tmp_path: Path, failures: int
) -> None:
    clock, storage = Clock(), Flaky(failures)
    app = fake_app(tmp_path, storage)
    deferred.make(app, deferred.recall_counts([3, 5], AT), clock)
    assert storage.made == []
    assert [w.kind for w in app.sessions.pending_writes()] == ["recall"]
    tick_until_done(app, clock, ticks=400)
    assert storage.made == [([3, 5], AT)]
    assert storage.tries == failures + 1
    assert app.sessions.pending_writes() == []


def test_fires_that_fail_are_logged_once_the_storage_works(tmp_path: Path) -> None:
    clock, fires = Clock(), Flaky(2)
    app = fake_app(tmp_path, Flaky(0), fires)
    deferred.make(app, deferred.fire_log("/p", "s1", [(7, 80.0, 0.61)], AT), clock)
    tick_until_done(app, clock)
    assert fires.made == [("s1", [(7, 80.0, 0.61)], AT)]


def test_the_waits_between_tries_grow(tmp_path: Path) -> None:
    clock, storage = Clock(), Flaky(4)
    app = fake_app(tmp_path, storage)
    deferred.make(app, deferred.recall_counts([1], AT), clock)
    tried_at: list[float] = []
    start = clock.now
    while storage.made == []:
        before = storage.tries
        clock.now += 0.5
        deferred.retry_due(app, clock)
        if storage.tries > before:
            tried_at.append(clock.now - start)
    assert tried_at == [1.0, 3.0, 7.0, 15.0]


def test_a_write_while_others_wait_joins_them_untried(tmp_path: Path) -> None:
    clock, storage = Clock(), Flaky(1)
    app = fake_app(tmp_path, storage)
    deferred.make(app, deferred.recall_counts([1], AT), clock)
    deferred.make(app, deferred.recall_counts([2], AT), clock)
    # The second did not hold its thread for the backend's retry time.
    assert storage.tries == 1
    tick_until_done(app, clock)
    assert storage.made == [([1], AT), ([2], AT)]


def test_one_failure_in_a_pass_puts_off_every_kept_write(tmp_path: Path) -> None:
    clock, storage = Clock(), Flaky(1)
    app = fake_app(tmp_path, storage)
    deferred.make(app, deferred.recall_counts([1], AT), clock)
    clock.now += 5  # past the wait: a new write is tried, and fails
    storage.failures = 2
    deferred.make(app, deferred.recall_counts([2], AT), clock)
    clock.now += 5
    deferred.retry_due(app, clock)  # the first fails: the second is not tried
    assert storage.tries == 3
    tick_until_done(app, clock)
    assert sorted(storage.made) == [([1], AT), ([2], AT)]


def test_a_newer_stop_of_the_session_replaces_its_waiting_prediction_log(
    tmp_path: Path,
) -> None:
    clock = Clock()
    app = fake_app(tmp_path, Flaky(0))
    transcript = tmp_path / "s1.jsonl"
    for _ in range(3):
        app.sessions.keep_write(
            "predlog",
            deferred.prediction_log("claude", transcript, "s1").key,
            '{"harness": "claude", "transcript": "t", "session": "s1"}',
            error="down",
            next_at=clock.now,
            limit=deferred.MAX_WAITING,
        )
    assert len(app.sessions.pending_writes()) == 1


def test_past_the_bound_the_oldest_are_dropped_and_named_in_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(deferred, "MAX_WAITING", 3)
    clock, storage = Clock(), Flaky(100)
    app = fake_app(tmp_path, storage)
    with caplog.at_level(logging.ERROR, logger="thatch"):
        for memory_id in range(5):
            deferred.make(app, deferred.recall_counts([memory_id], AT), clock)
    kept = [w.args for w in app.sessions.pending_writes()]
    assert [('"ids": [2]' in a, '"ids": [3]' in a, '"ids": [4]' in a) for a in kept] == [
        (True, False, False),
        (False, True, False),
        (False, False, True),
    ]
    dropped = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(dropped) == 2
    assert "the recall counts of memories [0]" in dropped[0]
    assert "the recall counts of memories [1]" in dropped[1]
    assert "over 3 writes wait" in dropped[0]


def test_a_write_that_fails_otherwise_is_logged_and_not_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(ids: Sequence[int], when: datetime) -> None:
        raise ValueError("a bug")

    app = fake_app(tmp_path, Flaky(0))
    app.thatch.memory_storage.record_recall = broken
    with caplog.at_level(logging.ERROR, logger="thatch"):
        deferred.make(app, deferred.recall_counts([1], AT))
    assert app.sessions.pending_writes() == []
    assert "the recall counts of memories [1] failed" in caplog.text


def test_kept_writes_outlive_the_session_store_that_kept_them(tmp_path: Path) -> None:
    clock, storage = Clock(), Flaky(1)
    first = fake_app(tmp_path, storage)
    deferred.make(first, deferred.recall_counts([4], AT), clock)
    first.sessions.close()
    again = fake_app(tmp_path, storage)
    tick_until_done(again, clock)
    assert storage.made == [([4], AT)]


# -- on a real runtime -------------------------------------------------------------


@pytest.fixture
def make_app(runtimes: RuntimeFactory) -> Callable[[], Runtime]:
    import thatch_claude.plugin

    return lambda: runtimes(thatch_claude.plugin)


def fail(
    monkeypatch: pytest.MonkeyPatch, target: object, name: str, times: int
) -> list[tuple[Any, ...]]:
    """Make ``target.name`` raise StorageError ``times`` times; the calls that got through."""
    real = getattr(target, name)
    left = [times]
    made: list[tuple[Any, ...]] = []

    def flaky(*args: Any) -> Any:
        if left[0]:
            left[0] -= 1
            raise StorageError(f"could not {name} on PostgreSQL: the server is away")
        made.append(args)
        return real(*args)

    monkeypatch.setattr(target, name, flaky)
    return made


def deliver_recall_and_fires(app: Runtime, workdir: Path) -> None:
    """Two prompts answered: one shows a memory, one a prediction; then the bookkeeping."""
    asked = request("flush-tools", payload("user_prompt_submit", workdir, prompt="indent python"))
    assert RECALL_HEADER in handle_hook(app, asked)
    fired = request("flush-predictions", payload("user_prompt_submit", workdir, prompt="a parser"))
    assert handle_hook(app, fired).startswith(DECISION_HEADER)
    app.run_deferred()


def seed(app: Runtime) -> None:
    app.thatch.remember("tabs", "The user indents Python code with tabs", store="global")
    app.thatch.decisions.update("writing a parser", "handle errors first", "create", store="global")


def test_a_hook_s_writes_that_fail_are_made_by_the_loop_once(
    make_app: Callable[[], Runtime], workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deferred, "BACKOFF_SECONDS", (0.0,))
    app = make_app()
    seed(app)
    th = app.thatch
    recalls = fail(monkeypatch, th.memory_storage, "record_recall", 2)
    fires = fail(monkeypatch, th.decision_storage, "record_fires", 2)
    deliver_recall_and_fires(app, workdir)
    assert th.show("tabs", store="global").recall_count == 0
    assert th.decision_storage.fires() == []
    status = Handlers(app, stop=lambda: None, spool_backlog=lambda: 0).status()
    assert status["deferred_writes"]["waiting"] == 2
    assert "the server is away" in status["deferred_writes"]["last_error"]
    for _ in range(5):
        app.retry_writes()
    assert th.show("tabs", store="global").recall_count == 1
    assert [fire.session for fire in th.decision_storage.fires()] == [SESSION]
    assert (len(recalls), len(fires)) == (1, 1)
    assert Handlers(app, stop=lambda: None, spool_backlog=lambda: 0).status()[
        "deferred_writes"
    ] == {"waiting": 0, "oldest_at": None, "next_try_at": None, "last_error": None}


def test_writes_kept_by_a_daemon_are_made_by_the_next_one(
    make_app: Callable[[], Runtime], workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deferred, "BACKOFF_SECONDS", (0.0,))
    first = make_app()
    seed(first)
    fail(monkeypatch, first.thatch.memory_storage, "record_recall", 100)
    fail(monkeypatch, first.thatch.decision_storage, "record_fires", 100)
    deliver_recall_and_fires(first, workdir)
    assert len(first.sessions.pending_writes()) == 2
    first.close()

    restarted = make_app()
    restarted.retry_writes()
    th = restarted.thatch
    assert th.show("tabs", store="global").recall_count == 1
    assert [fire.session for fire in th.decision_storage.fires()] == [SESSION]
    assert restarted.sessions.pending_writes() == []
