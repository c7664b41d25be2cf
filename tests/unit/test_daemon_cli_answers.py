"""``thatch daemon start`` and ``status`` on answers a healthy daemon would not give."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_daemon import FakeDaemon
from thatch import rundir
from thatch.cli import runtime_commands
from thatch.daemon.client import DaemonUnavailableError

Respond = Callable[[dict[str, Any]], dict[str, Any] | None]


@pytest.fixture
def serve(home: Path) -> Iterator[Callable[[Respond], FakeDaemon]]:
    made: list[FakeDaemon] = []

    def start(respond: Respond) -> FakeDaemon:
        made.append(FakeDaemon(rundir.locate(home=str(home)).socket_path, respond))
        return made[-1]

    yield start
    for fake in made:
        fake.close()


def by_op(**answers: dict[str, Any]) -> Respond:
    return lambda request: answers[request["op"]]


def test_a_status_that_fails_after_start_is_a_clear_error(
    home: Path, serve: Callable[[Respond], FakeDaemon]
) -> None:
    serve(by_op(ping={"ok": True, "warm": True}, status={"ok": False, "error": "spool broke"}))
    with pytest.raises(DaemonUnavailableError, match=r"its status failed \(spool broke\)"):
        runtime_commands.daemon_start(argparse.Namespace(home=str(home)))


def test_a_status_without_a_pid_is_shown_without_one(
    home: Path, serve: Callable[[Respond], FakeDaemon], capsys: pytest.CaptureFixture[str]
) -> None:
    serve(by_op(ping={"ok": True, "warm": True}, status={"ok": True}))
    assert runtime_commands.daemon_start(argparse.Namespace(home=str(home))) == 0
    assert capsys.readouterr().out == "daemon running (pid ?, version ?)\n"


def test_a_refused_socket_is_named_by_status(
    home: Path, serve: Callable[[Respond], FakeDaemon], capsys: pytest.CaptureFixture[str]
) -> None:
    fake = serve(by_op(status={"ok": True}))
    folder = Path(rundir.locate(home=str(home)).socket_path).parent
    folder.chmod(0o777)
    status = runtime_commands.daemon_status(argparse.Namespace(home=str(home), json=True))
    assert status == runtime_commands.NOT_RUNNING
    data = json.loads(capsys.readouterr().out)
    assert (data["running"], data["answering"], data["refused"]) == (False, False, True)
    assert "can be written by other users" in data["problem"]
    assert fake.requests == []


def test_status_says_how_many_writes_wait_for_the_storage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = {
        "started_at": 0.0,
        "version": "1",
        "pid": 7,
        "db_path": "/x.db",
        "spool_backlog": 0,
        "sessions": [],
        "deferred_writes": {"waiting": 3, "last_error": "the server is down"},
    }
    runtime_commands._show_status(status)
    out = capsys.readouterr().out
    assert "writes waiting for the storage: 3 (last error: the server is down)" in out
    runtime_commands._show_status({**status, "deferred_writes": {"waiting": 0}})
    assert "writes waiting" not in capsys.readouterr().out
