"""The daemon's loop without a daemon: failing steps, and a socket that goes away."""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from thatch import rundir, wire
from thatch.daemon import lifecycle, security
from thatch.daemon.lifecycle import Listener, Steps
from thatch.daemon.server import DaemonServer


def failing(message: str) -> Any:
    def step() -> None:
        raise OSError(message)

    return step


def test_a_failing_step_is_logged_with_its_traceback_and_returns_none(
    caplog: pytest.LogCaptureFixture,
) -> None:
    steps = Steps()
    with caplog.at_level(logging.ERROR, logger="thatch"):
        assert steps.run("spool replay", failing("disk gone")) is None
        assert steps.run("idle check", lambda: True) is True
    (record,) = caplog.records
    assert "spool replay failed" in record.getMessage()
    assert record.exc_info is not None
    assert "disk gone" in caplog.text


def test_the_same_failure_is_logged_once_per_interval(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(lifecycle.time, "monotonic", lambda: now[0])
    steps = Steps(quiet_seconds=60)
    with caplog.at_level(logging.ERROR, logger="thatch"):
        for tick in range(10):
            # A message that changes every time (a path, a count) is still the same failure.
            steps.run("spool replay", failing(f"cannot list /spool/{tick}"))
            now[0] += 0.5
        steps.run("session purge", failing("locked"))  # another step: logged
        now[0] += 60
        steps.run("spool replay", failing("cannot list /spool/again"))  # a minute on: again
    messages = [record.getMessage() for record in caplog.records]
    assert [m.split(" failed")[0] for m in messages] == [
        "daemon loop: spool replay",
        "daemon loop: session purge",
        "daemon loop: spool replay",
    ]


class Recorder:
    """Stand-ins for the runtime, spool and listener the loop drives; counts each step."""

    def __init__(self, stopping: threading.Event, ticks: int) -> None:
        self.counts = {"keep": 0, "replay": 0, "deferred": 0, "purge": 0}
        self.stopping = stopping
        self.ticks = ticks
        self.app = SimpleNamespace(
            settings=SimpleNamespace(idle_minutes=0),
            sessions=SimpleNamespace(purge=self._purge),
            run_deferred=self._deferred,
            retry_writes=lambda: None,
        )
        self.spool = SimpleNamespace(replay=self._replay)
        self.listener = SimpleNamespace(keep=self._keep, idle_for=lambda: 0.0)

    def _keep(self) -> None:
        self.counts["keep"] += 1
        raise ValueError("socket check broke")

    def _purge(self, seconds: float) -> int:
        self.counts["purge"] += 1
        raise RuntimeError("purge broke")

    def _replay(self, handle: Any) -> int:
        self.counts["replay"] += 1
        raise NotADirectoryError("spool is a file")

    def _deferred(self) -> None:
        self.counts["deferred"] += 1
        if self.counts["deferred"] >= self.ticks:
            self.stopping.set()


def test_the_loop_goes_on_when_every_step_fails(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(lifecycle, "TICK_SECONDS", 0.001)
    stopping = threading.Event()
    parts = Recorder(stopping, ticks=5)
    with caplog.at_level(logging.ERROR, logger="thatch"):
        lifecycle._loop(parts.app, parts.spool, parts.listener, stopping)  # type: ignore[arg-type]
    assert parts.counts == {"keep": 5, "replay": 5, "deferred": 5, "purge": 1}
    logged = sorted(record.getMessage().split(" failed")[0] for record in caplog.records)
    assert logged == [
        "daemon loop: session purge",
        "daemon loop: socket check",
        "daemon loop: spool replay",
    ]


# -- the socket bound again --------------------------------------------------------
class Slow:
    """A request handler that holds ``op: slow`` until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("op") == "slow":
            self.entered.set()
            self.release.wait(10)
        return {"ok": True, "op": request.get("op")}


@pytest.fixture
def slow() -> Slow:
    return Slow()


@pytest.fixture
def listening(tmp_path: Path, slow: Slow) -> Iterator[Listener]:
    located = rundir.locate({"THATCH_HOME": str(tmp_path / "home")})
    bound = security.socket_to_bind(located)
    listener = Listener(DaemonServer(bound, slow), located, bound)
    listener.start()
    yield listener
    slow.release.set()
    listener.close()


def ask(listener: Listener) -> dict[str, Any]:
    return wire.request(listener.located.socket_path, {"op": "ping"}, timeout=5.0)


def test_an_intact_socket_is_left_alone(listening: Listener) -> None:
    before = os.stat(listening.bound).st_ino
    listening.keep()
    assert os.stat(listening.bound).st_ino == before
    assert ask(listening) == {"ok": True, "op": "ping"}


def test_a_deleted_socket_is_bound_again(
    listening: Listener, caplog: pytest.LogCaptureFixture
) -> None:
    os.unlink(listening.bound)
    with pytest.raises(FileNotFoundError):
        ask(listening)
    with caplog.at_level(logging.WARNING, logger="thatch"):
        listening.keep()
    assert ask(listening) == {"ok": True, "op": "ping"}
    assert "was removed or replaced; listening on a new one" in caplog.text
    assert oct(os.stat(listening.bound).st_mode & 0o777) == oct(0o600)


def test_a_replaced_socket_is_bound_again(listening: Listener) -> None:
    os.unlink(listening.bound)
    with socket.socket(socket.AF_UNIX) as stranger:
        stranger.bind(listening.bound)  # a socket file nobody listens on
    listening.keep()
    assert ask(listening) == {"ok": True, "op": "ping"}


def test_a_request_in_flight_across_the_rebind_is_still_answered(
    listening: Listener, slow: Slow
) -> None:
    answers: list[dict[str, Any]] = []
    thread = threading.Thread(
        target=lambda: answers.append(
            wire.request(listening.located.socket_path, {"op": "slow"}, timeout=10)
        )
    )
    thread.start()
    assert slow.entered.wait(5)
    os.unlink(listening.bound)
    listening.keep()
    assert ask(listening) == {"ok": True, "op": "ping"}
    slow.release.set()
    thread.join()
    assert answers == [{"ok": True, "op": "slow"}]
