"""The daemon's small parts: spool replay, the single-instance lock, handlers, its folders."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import platformdirs
import pytest
import thatch
import thatch_claude.plugin
import thatch_sqlite.plugin
from thatch import daemon_lock as lock
from thatch import rundir, wire
from thatch.daemon import lifecycle
from thatch.daemon.handlers import Handlers, version_tuple
from thatch.daemon.server import DaemonServer
from thatch.daemon.spool import Spool
from thatch.hookcmd.spool import spool_name
from thatch.paths import Paths
from thatch.plugin.config import Config
from thatch.runtime import Runtime
from thatch.testing import plugins_with

DATA = Path(__file__).parent.parent / "data" / "claude"


# -- spool -------------------------------------------------------------------------
def put(folder: Path, event_id: str, stamp: int, data: bytes | None = None) -> Path:
    """A spool file as a hook command leaves it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / spool_name(event_id, now_ns=stamp)
    path.write_bytes(data if data is not None else wire.encode({"event_id": event_id}))
    return path


def test_replay_takes_files_in_name_order_and_removes_them(tmp_path: Path) -> None:
    for event_id, stamp in (("b", 20), ("c", 300), ("a", 7)):
        put(tmp_path, event_id, stamp)
    spool = Spool(str(tmp_path))
    assert spool.backlog() == 3
    seen: list[str] = []
    assert spool.replay(lambda request: seen.append(request["event_id"])) == 3
    assert seen == ["a", "b", "c"]
    assert spool.backlog() == 0
    assert os.listdir(tmp_path) == []


def test_a_corrupt_file_is_kept_as_failed_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    put(tmp_path, "a", 1)
    bad = put(tmp_path, "bad", 2, b"{not json\n")
    put(tmp_path, "list", 3, b"[1, 2]\n")
    put(tmp_path, "c", 4)
    seen: list[str] = []
    with caplog.at_level(logging.ERROR, logger="thatch"):
        done = Spool(str(tmp_path)).replay(lambda request: seen.append(request["event_id"]))
    assert (done, seen) == (2, ["a", "c"])
    assert sorted(os.listdir(tmp_path)) == [
        spool_name("bad", 2) + ".failed",
        spool_name("list", 3) + ".failed",
    ]
    assert Path(str(bad) + ".failed").read_bytes() == b"{not json\n"
    messages = [r.getMessage() for r in caplog.records if r.name == "thatch"]
    assert len(messages) == 2
    assert bad.name in messages[0]
    assert all(r.exc_info for r in caplog.records if r.name == "thatch")


def test_a_request_the_handler_rejects_is_kept_as_failed(tmp_path: Path) -> None:
    put(tmp_path, "a", 1)
    put(tmp_path, "b", 2)

    def handle(request: dict[str, Any]) -> None:
        if request["event_id"] == "a":
            raise RuntimeError("storage is gone")

    spool = Spool(str(tmp_path))
    assert spool.replay(handle) == 1
    assert os.listdir(tmp_path) == [spool_name("a", 1) + ".failed"]
    # A failed file is not counted, nor replayed again.
    assert spool.backlog() == 0
    assert spool.replay(handle) == 0


def test_temporary_files_are_ignored(tmp_path: Path) -> None:
    put(tmp_path, "a", 1)
    half = tmp_path / (spool_name("b", 2) + ".tmp")
    half.write_bytes(b'{"event_id": "b"')
    spool = Spool(str(tmp_path))
    assert spool.backlog() == 1
    seen: list[str] = []
    assert spool.replay(lambda request: seen.append(request["event_id"])) == 1
    assert seen == ["a"]
    assert os.listdir(tmp_path) == [half.name]


def test_a_missing_spool_folder_is_an_empty_backlog(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path / "never-made"))
    assert spool.backlog() == 0
    assert spool.replay(lambda request: pytest.fail("nothing to replay")) == 0


def test_a_file_its_hook_still_holds_is_left_until_let_go(tmp_path: Path) -> None:
    from thatch.hookcmd import spool as hook_spool

    put(tmp_path, "a", 1)
    held = hook_spool.write_held(str(tmp_path), {"event_id": "held"})
    spool = Spool(str(tmp_path))
    seen: list[str] = []
    assert spool.replay(lambda request: seen.append(request["event_id"])) == 1
    assert seen == ["a"]
    assert spool.backlog() == 1  # still there, for its hook or a later replay
    held.release(taken=False)  # the hook gave up waiting
    assert spool.replay(lambda request: seen.append(request["event_id"])) == 1
    assert seen == ["a", "held"]
    assert os.listdir(tmp_path) == []


def test_a_file_its_hook_removed_after_the_daemon_took_it_is_not_replayed(
    tmp_path: Path,
) -> None:
    from thatch.hookcmd import spool as hook_spool

    held = hook_spool.write_held(str(tmp_path), {"event_id": "held"})
    path = Path(held.path)
    # A replay that opened the file just before its hook removed it.
    fd = os.open(path, os.O_RDONLY)
    try:
        held.release(taken=True)
        assert not path.exists()
        spool = Spool(str(tmp_path))
        assert spool._replay_one(fd, path.name, str(path), lambda r: pytest.fail("taken")) is False
    finally:
        os.close(fd)


def test_the_live_answer_and_the_replay_of_one_event_record_it_once(
    runtimes: Any, tmp_path: Path
) -> None:
    from daemon_hooks import payload, request
    from thatch.daemon.hook_events import handle_hook

    app = runtimes(thatch_claude.plugin)
    sent = request("flush-tools", payload("user_prompt_submit", tmp_path, session="s-once"))
    put(tmp_path / "spool", sent["event_id"], 1, wire.encode(sent))
    handle_hook(app, sent)
    assert (
        Spool(str(tmp_path / "spool")).replay(
            lambda spooled: handle_hook(app, spooled, replay=True)
        )
        == 1
    )
    state = app.sessions.state("s-once")
    assert state is not None
    assert state.prompts == 1


# -- a live event is answered after the events spooled before it --------------------
def test_catch_up_replays_only_the_files_spooled_before_the_live_event(tmp_path: Path) -> None:
    for event_id, stamp in (("b", 2_000_000_000), ("a", 1_000_000_000), ("late", 5_000_000_000)):
        put(tmp_path, event_id, stamp)
    spool = Spool(str(tmp_path))
    seen: list[str] = []
    # A live event received at t = 3 s: a and b came before it, "late" after.
    assert spool.catch_up(3.0, lambda request: seen.append(request["event_id"])) == 2
    assert seen == ["a", "b"]
    assert os.listdir(tmp_path) == [spool_name("late", 5_000_000_000)]


def test_catch_up_leaves_a_file_its_hook_holds(tmp_path: Path) -> None:
    from thatch.hookcmd import spool as hook_spool

    held = hook_spool.write_held(str(tmp_path), {"event_id": "held"})
    try:
        seen: list[str] = []
        spool = Spool(str(tmp_path))
        assert spool.catch_up(time.time() + 60, lambda r: seen.append(r["event_id"])) == 0
        assert seen == []
    finally:
        held.release(taken=False)


def test_catch_up_stops_after_its_time_and_leaves_the_rest_to_the_loop(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for n in range(5):
        put(tmp_path, f"e{n}", n + 1)
    spool = Spool(str(tmp_path))
    seen: list[str] = []

    def slow(request: dict[str, Any]) -> None:
        seen.append(request["event_id"])
        time.sleep(0.1)

    with caplog.at_level(logging.INFO, logger="thatch"):
        done = spool.catch_up(time.time(), slow, seconds=0.15)
    assert done == len(seen) == 2
    assert "answering a live event first" in caplog.text
    assert spool.backlog() == 3
    assert spool.replay(slow) == 3


def test_a_live_event_waits_for_the_file_the_loop_is_replaying(tmp_path: Path) -> None:
    put(tmp_path, "first", 1)
    put(tmp_path, "second", 2)
    spool = Spool(str(tmp_path))
    recorded: list[str] = []
    in_first = threading.Event()
    go_on = threading.Event()

    def loop_handle(request: dict[str, Any]) -> None:
        if request["event_id"] == "first":
            in_first.set()
            assert go_on.wait(10)
        recorded.append(request["event_id"])

    loop = threading.Thread(target=spool.replay, args=(loop_handle,))
    loop.start()
    assert in_first.wait(10)
    caught_up: list[int] = []
    live = threading.Thread(
        target=lambda: caught_up.append(spool.catch_up(time.time(), loop_handle))
    )
    live.start()
    time.sleep(0.1)
    assert caught_up == []  # waits while "first" is being recorded, not past it
    go_on.set()
    live.join(10)
    loop.join(10)
    assert sorted(recorded) == ["first", "second"]  # each once, by one or the other
    assert caught_up
    assert recorded.index("first") == 0
    assert os.listdir(tmp_path) == []


def test_the_handlers_replay_older_events_before_a_live_hook_event(
    runtimes: Any, tmp_path: Path
) -> None:
    from daemon_hooks import payload, request

    app = runtimes(thatch_claude.plugin)
    order: list[str] = []
    handlers = Handlers(
        app,
        stop=lambda: None,
        spool_backlog=lambda: 0,
        catch_up=lambda live: order.append(f"catch up before {live['event_id']}"),
    )
    sent = request(
        "flush-tools", payload("user_prompt_submit", tmp_path, session="s-live"), op="hook"
    )
    assert handlers(sent)["ok"] is True
    assert order == [f"catch up before {sent['event_id']}"]
    state = app.sessions.state("s-live")
    assert state is not None
    assert state.prompts == 1
    handlers({"op": "ping"})
    assert len(order) == 1  # only hook events wait for the spool


def test_a_failing_catch_up_does_not_fail_the_live_event(
    runtimes: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from daemon_hooks import payload, request

    def broken(live: dict[str, Any]) -> None:
        raise OSError("spool gone")

    app = runtimes(thatch_claude.plugin)
    handlers = Handlers(app, stop=lambda: None, spool_backlog=lambda: 0, catch_up=broken)
    sent = request(
        "flush-tools", payload("user_prompt_submit", tmp_path, session="s-live"), op="hook"
    )
    with caplog.at_level(logging.ERROR, logger="thatch"):
        assert handlers(sent)["ok"] is True
    assert "older than a live hook event failed" in caplog.text


def test_the_daemon_catches_up_with_the_spool_before_a_prompt(
    runtimes: Any, tmp_path: Path
) -> None:
    from daemon_hooks import payload, request

    app = runtimes(thatch_claude.plugin)
    spool = Spool(str(tmp_path / "spool"))
    batch = request("buffer-batch", payload("post_tool_batch", tmp_path, session="s-order"))
    put(tmp_path / "spool", batch["event_id"], time.time_ns(), wire.encode(batch))
    prompt = request("flush-tools", payload("user_prompt_submit", tmp_path, session="s-order"))
    prompt["received_at"] = time.time() + 1
    assert lifecycle._catch_up(app, spool, prompt) == 1
    assert len(app.sessions.pending("s-order")) == 3


def batch_request(project: Path, session: str, calls: int = 20, bad: int = 7) -> dict[str, Any]:
    """``buffer-batch`` with ``calls`` tool calls, call ``bad`` holding half an emoji."""
    from daemon_hooks import payload, request

    body = payload("post_tool_batch", project, session=session)
    first = body["tool_calls"][0]
    body["tool_calls"] = [
        {**first, "tool_use_id": f"toolu_{n}", "tool_response": {"stdout": f"run {n}"}}
        for n in range(calls)
    ]
    body["tool_calls"][bad]["tool_response"] = {"stdout": "cut in half: \ud83c"}
    return request("buffer-batch", body)


@pytest.mark.parametrize(
    "encode",
    [
        # What a JavaScript harness writes: the escape, as JSON text.
        lambda sent: json.dumps(sent).encode() + b"\n",
        # What a hook that passed the surrogate through wrote: its UTF-8-like bytes.
        lambda sent: json.dumps(sent, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n",
    ],
    ids=["escape", "surrogatepass-bytes"],
)
def test_a_spooled_batch_with_a_lone_surrogate_is_replayed_whole(
    runtimes: Any, tmp_path: Path, encode: Any
) -> None:
    from thatch.daemon.hook_events import handle_hook

    app = runtimes(thatch_claude.plugin)
    sent = batch_request(tmp_path, "s-cut")
    put(tmp_path / "spool", sent["event_id"], 1, encode(sent))
    spool = Spool(str(tmp_path / "spool"))
    assert spool.replay(lambda spooled: handle_hook(app, spooled, replay=True)) == 1
    assert os.listdir(tmp_path / "spool") == []
    queued = app.sessions.pending("s-cut")
    assert len(queued) == 20
    # Each byte of the surrogate's encoding is one U+FFFD; the escape gives one.
    assert queued[7].tool_response.rstrip("\ufffd") == "cut in half: "
    assert queued[7].tool_response != "cut in half: "


def test_a_spool_folder_that_cannot_be_listed_is_logged_once_and_replay_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    put(tmp_path, "a", 1)
    listdir = os.listdir

    def refused(path: Any = ".") -> list[str]:
        if str(path) == str(tmp_path):
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)

    monkeypatch.setattr(os, "listdir", refused)
    spool = Spool(str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="thatch"):
        for _ in range(3):
            assert spool.replay(lambda request: pytest.fail("nothing can be listed")) == 0
        assert spool.backlog() == 0
    (record,) = [r for r in caplog.records if r.name == "thatch"]
    assert str(tmp_path) in record.getMessage()
    assert "Permission denied" in record.getMessage()
    monkeypatch.setattr(os, "listdir", listdir)
    seen: list[str] = []
    assert spool.replay(lambda request: seen.append(request["event_id"])) == 1
    assert seen == ["a"]


def test_a_file_that_cannot_be_opened_is_logged_and_the_others_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    put(tmp_path, "a", 1)
    locked = put(tmp_path, "locked", 2)
    put(tmp_path, "c", 3)
    real_open = os.open

    def refused(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refused)
    spool = Spool(str(tmp_path))
    seen: list[str] = []
    with caplog.at_level(logging.WARNING, logger="thatch"):
        assert spool.replay(lambda request: seen.append(request["event_id"])) == 2
        assert spool.replay(lambda request: seen.append(request["event_id"])) == 0
    assert seen == ["a", "c"]
    (record,) = [r for r in caplog.records if r.name == "thatch"]
    assert locked.name in record.getMessage()
    # Kept for a later replay: the problem may pass (too many open files).
    assert os.listdir(tmp_path) == [locked.name]
    monkeypatch.setattr(os, "open", real_open)
    assert spool.replay(lambda request: seen.append(request["event_id"])) == 1
    assert seen == ["a", "c", "locked"]


def test_a_taken_file_that_cannot_be_removed_is_not_taken_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    stuck = put(tmp_path, "stuck", 1)
    put(tmp_path, "b", 2)
    real_unlink = os.unlink

    def refused(path: Any, *args: Any, **kwargs: Any) -> None:
        if str(path) == str(stuck):
            raise PermissionError(13, "Permission denied", str(path))
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refused)
    spool = Spool(str(tmp_path))
    seen: list[str] = []
    with caplog.at_level(logging.WARNING, logger="thatch"):
        assert spool.replay(lambda request: seen.append(request["event_id"])) == 2
        put(tmp_path, "c", 3)
        assert spool.replay(lambda request: seen.append(request["event_id"])) == 1
    assert seen == ["stuck", "b", "c"]
    assert spool.backlog() == 0
    (record,) = [r for r in caplog.records if r.name == "thatch"]
    assert stuck.name in record.getMessage()
    assert os.listdir(tmp_path) == [stuck.name]


def test_a_file_another_daemon_took_but_could_not_remove_is_recorded_once(
    runtimes: Any, tmp_path: Path
) -> None:
    from daemon_hooks import payload, request
    from thatch.daemon.hook_events import handle_hook

    app = runtimes(thatch_claude.plugin)
    sent = request("flush-tools", payload("user_prompt_submit", tmp_path, session="s-stuck"))
    put(tmp_path / "spool", sent["event_id"], 1, wire.encode(sent))
    # The first daemon took the event, then could not remove the file and stopped.
    handle_hook(app, sent, replay=True)
    again = Spool(str(tmp_path / "spool"))
    assert again.replay(lambda spooled: handle_hook(app, spooled, replay=True)) == 1
    state = app.sessions.state("s-stuck")
    assert state is not None
    assert state.prompts == 1


def test_a_failed_file_that_cannot_be_renamed_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bad = put(tmp_path, "bad", 1, b"{not json\n")
    real_replace = os.replace

    def refused(source: Any, target: Any, *args: Any, **kwargs: Any) -> None:
        if str(source) == str(bad):
            raise PermissionError(13, "Permission denied", str(source))
        real_replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", refused)
    spool = Spool(str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="thatch"):
        assert spool.replay(lambda request: pytest.fail("not JSON")) == 0
        assert spool.replay(lambda request: pytest.fail("not JSON")) == 0
    messages = [r.getMessage() for r in caplog.records if r.name == "thatch"]
    assert len(messages) == 2  # why it failed, and why it is still there
    assert all(bad.name in message for message in messages)
    assert spool.backlog() == 0


def age(path: Path, seconds: float) -> Path:
    """``path`` last changed ``seconds`` ago."""
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))
    return path


def test_half_written_files_are_removed_once_their_hook_is_surely_gone(tmp_path: Path) -> None:
    from thatch.daemon.spool import TMP_MAX_AGE_SECONDS

    dead = tmp_path / (spool_name("dead", 1) + ".tmp")
    writing = tmp_path / (spool_name("writing", 2) + ".tmp")
    for path in (dead, writing):
        path.write_bytes(b'{"event_id": ')
    age(dead, TMP_MAX_AGE_SECONDS + 60)
    assert Spool(str(tmp_path)).replay(lambda request: pytest.fail("nothing whole")) == 0
    assert os.listdir(tmp_path) == [writing.name]


def test_failed_files_are_kept_a_bounded_time_and_number_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from thatch.daemon import spool as daemon_spool

    monkeypatch.setattr(daemon_spool, "MAX_FAILED", 3)
    failed = [tmp_path / (spool_name(f"f{n}", n) + ".failed") for n in range(6)]
    for path in failed:
        path.write_bytes(b"{not json\n")
        age(path, 3600)
    age(failed[0], daemon_spool.FAILED_MAX_AGE_SECONDS + 60)
    spool = Spool(str(tmp_path))
    assert spool.failed() == 6
    put(tmp_path, "a", 10)
    assert spool.replay(lambda request: None) == 1
    # The oldest went for its age, then the oldest left over the limit.
    assert sorted(os.listdir(tmp_path)) == [path.name for path in failed[3:]]
    assert spool.failed() == 3
    assert spool.backlog() == 0


# -- lock ------------------------------------------------------------------------
def test_a_second_acquire_in_the_same_process_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "daemon.lock")
    assert not lock.is_held(path)
    first = lock.acquire(path)
    assert first is not None
    assert lock.acquire(path) is None
    assert lock.acquire(path, wait_seconds=0.1) is None
    assert lock.is_held(path)
    lock.release(first)
    assert not lock.is_held(path)
    again = lock.acquire(path)
    assert again is not None
    lock.release(again)


def test_is_held_creates_no_lock_file(tmp_path: Path) -> None:
    path = tmp_path / "daemon.lock"
    assert not lock.is_held(str(path))
    assert not path.exists()


def test_the_lock_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "daemon.lock"
    held = lock.acquire(str(path))
    assert held is not None
    lock.release(held)
    assert path.stat().st_mode & 0o077 == 0


HOLDER = """
import sys, time
from thatch import daemon_lock as lock
from thatch.daemon import lifecycle
fd = lock.acquire(sys.argv[1])
print("held" if fd is not None else "refused", flush=True)
time.sleep(60)
"""


def test_the_lock_is_freed_when_its_holder_is_killed(tmp_path: Path) -> None:
    path = str(tmp_path / "daemon.lock")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, path], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        assert lock.is_held(path)
        assert lock.acquire(path) is None
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        if holder.stdout is not None:
            holder.stdout.close()
    assert holder.returncode == -signal.SIGKILL
    taken = lock.acquire(path)
    assert taken is not None
    lock.release(taken)


# -- handlers ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.10.2", (0, 10, 2)),
        ("1.2", (1, 2)),
        ("1.2.3.4", (1, 2, 3)),
        ("0.2.0rc1", (0, 2, 0)),
        ("2.x.1", (2, 0, 1)),
        ("0", (0,)),
    ],
)
def test_version_tuple(version: str, expected: tuple[int, ...]) -> None:
    assert version_tuple(version) == expected


def test_versions_compare_as_numbers() -> None:
    assert version_tuple("0.10.0") > version_tuple("0.9.9")
    assert version_tuple("1.0.0") > version_tuple("0.99.99")


@attrs.define
class Served:
    handlers: Handlers
    app: Runtime
    stops: list[bool]


@pytest.fixture
def served(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    monkeypatch.chdir(tmp_path)
    app = Runtime(
        Config.load(home, environ={}), plugins_with(thatch_sqlite.plugin, thatch_claude.plugin)
    )
    stops: list[bool] = []
    handlers = Handlers(
        app, stop=lambda: stops.append(True), spool_backlog=lambda: 4, spool_failed=lambda: 2
    )
    yield Served(handlers, app, stops)
    app.close()


def ask(served: Served, op: str | None, **fields: Any) -> dict[str, Any]:
    return served.handlers(
        {"protocol": wire.PROTOCOL, "client": thatch.__version__, "op": op, **fields}
    )


@pytest.mark.parametrize("op", ["reboot", None, ""])
def test_an_unknown_op_is_refused_by_name(served: Served, op: str | None) -> None:
    answer = ask(served, op)
    assert answer == {"ok": False, "error": f"unknown op {op!r}", "daemon": thatch.__version__}
    assert served.stops == []


def test_a_newer_client_makes_the_daemon_stop_and_ask_for_a_restart(served: Served) -> None:
    major, minor, patch = version_tuple(thatch.__version__)
    newer = f"{major}.{minor}.{patch + 1}"
    answer = served.handlers({"client": newer, "op": "ping"})
    assert answer["ok"] is False
    assert answer["restart"] is True
    assert thatch.__version__ in answer["error"]
    assert answer["daemon"] == thatch.__version__
    assert served.stops == [True]


@pytest.mark.parametrize("client", ["0.0.1", "0", None, 7])
def test_an_older_or_unversioned_client_is_served(served: Served, client: Any) -> None:
    answer = served.handlers({"client": client, "op": "ping"})
    assert answer == {"ok": True, "warm": False, "daemon": thatch.__version__}
    assert served.stops == []


def test_ping_says_when_the_daemon_is_warm(served: Served) -> None:
    served.app.warm_up()
    assert ask(served, "ping")["warm"] is True


def test_a_hook_that_asks_hears_the_daemon_is_warming_until_it_is_warm(
    served: Served,
) -> None:
    hook = {"op": "hook", "warming_notice": True}
    assert served.handlers.notice(hook) == {
        "ok": True,
        "warming": True,
        "daemon": thatch.__version__,
    }
    assert served.handlers.notice({"op": "hook"}) is None  # did not ask: a tool call
    assert served.handlers.notice({"op": "ping", "warming_notice": True}) is None
    served.app.warm_up()
    assert served.handlers.notice(hook) is None


def test_the_server_sends_the_notice_before_it_works_on_the_answer(tmp_path: Path) -> None:
    from thatch.daemon.server import DaemonServer

    answering = threading.Event()
    heard: list[bool] = []

    def handle(request: dict[str, Any]) -> dict[str, Any]:
        # Held until the client has read the notice: so it came first.
        assert answering.wait(10)
        return {"ok": True, "output": "late answer"}

    def on_warming() -> float:
        heard.append(True)
        answering.set()
        return 10.0

    path = str(tmp_path / "d.sock")
    server = DaemonServer(path, handle, notice=lambda request: {"ok": True, "warming": True})
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    serving.start()
    try:
        answer = wire.request(path, {"op": "hook"}, 10.0, on_warming)
    finally:
        server.shutdown()
        serving.join()
        server.server_close()
    assert heard == [True]
    assert answer == {"ok": True, "output": "late answer"}


def test_two_lines_in_one_packet_are_read_one_at_a_time() -> None:
    left, right = socket.socketpair()
    with left, right:
        left.sendall(b'{"warming": true}\n{"ok": true, "output": "x"}\n')
        lines = wire.LineReader(right)
        assert lines.line() == b'{"warming": true}\n'
        assert lines.line() == b'{"ok": true, "output": "x"}\n'
        left.close()
        with pytest.raises(wire.WireError, match="closed before the end"):
            lines.line()


def test_a_line_over_the_limit_is_refused() -> None:
    left, right = socket.socketpair()
    with left, right:
        left.sendall(b"x" * 200)
        with pytest.raises(wire.WireError, match="over 100 bytes"):
            wire.LineReader(right, limit=100).line()


def test_stop_calls_the_stop_callback(served: Served) -> None:
    assert ask(served, "stop") == {"ok": True, "daemon": thatch.__version__}
    assert served.stops == [True]


def test_a_hook_request_is_answered_and_status_shows_its_session(
    served: Served, tmp_path: Path
) -> None:
    payload = json.loads((DATA / "post_tool_batch.json").read_text())
    payload.update(session_id="s-status", cwd=str(tmp_path))
    answer = ask(
        served,
        "hook",
        command="buffer-batch",
        payload=payload,
        event_id=uuid.uuid4().hex,
        received_at=1000.0,
        env={},
    )
    assert answer == {"ok": True, "output": "", "daemon": thatch.__version__}

    status = ask(served, "status")
    assert status["ok"] is True
    assert status["pid"] == os.getpid()
    assert status["version"] == thatch.__version__
    assert status["db_path"] == str(served.app.config.db_path)
    assert status["spool_backlog"] == 4
    assert status["spool_failed"] == 2
    assert status["warm"] is False
    assert status["uptime_seconds"] >= 0
    assert status["started_at"] == served.handlers.started_at
    assert status["settings"] == attrs.asdict(served.app.settings)
    assert status["sessions"] == [
        {
            "session_id": "s-status",
            "harness": "claude",
            "cwd": str(tmp_path),
            "pending": 3,
            "nudge_level": 0,
            "prompts": 0,
            "last_seen": 1000.0,
        }
    ]
    # The answer goes over the wire as JSON.
    assert wire.decode(wire.encode(status)) == status


# -- MCP sessions -------------------------------------------------------------------
def echo(sock: socket.socket, received: bytes) -> None:
    """A session that sends back every line until the client closes."""
    lines = wire.LineReader(sock, received=received)
    try:
        while True:
            sock.sendall(lines.line())
    except (OSError, wire.WireError):
        return


@contextlib.contextmanager
def serving(path: str, runner: Any = echo, **options: Any) -> Iterator[DaemonServer]:
    """A daemon server whose sessions run ``runner``; closed (in a bounded time) at the end."""
    server = DaemonServer(
        path,
        lambda request: {"ok": True, "op": request.get("op")},
        open_session=lambda request: ({"ok": True, "notice": ""}, runner),
        **options,
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join()
        closing = threading.Thread(target=server.server_close)
        closing.start()
        closing.join(30)
        assert not closing.is_alive(), "server_close waited for a session forever"


def open_session(path: str, first: bytes = b"") -> tuple[socket.socket, dict[str, Any], Any]:
    """Connect, open a session (``first`` in the same write) and read the answer."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(path)
    sock.sendall(wire.encode({"op": "mcp"}) + first)
    lines = wire.LineReader(sock)
    return sock, wire.decode(lines.line()), lines


def wait_until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_session_gets_what_came_with_its_opening_and_counts_as_activity(
    tmp_path: Path,
) -> None:
    with serving(str(tmp_path / "d.sock")) as server:
        sock, answer, lines = open_session(server.server_address, b'{"first": 1}\n')
        with sock:
            assert answer == {"ok": True, "notice": ""}
            assert lines.line() == b'{"first": 1}\n'
            sock.sendall(b'{"second": 2}\n')
            assert lines.line() == b'{"second": 2}\n'
            assert server.sessions == 1
            server.last_request = time.monotonic() - 3600
            # An open session is activity, however long since the last request.
            assert server.idle_for() == 0.0
        wait_until(lambda: server.sessions == 0)
        # Its end counts as the last request.
        assert 0.0 < server.idle_for() < 60


def test_sessions_beyond_the_limit_are_refused_until_one_ends(tmp_path: Path) -> None:
    with serving(str(tmp_path / "d.sock"), max_sessions=1) as server:
        first, answer, _ = open_session(server.server_address)
        assert answer["ok"] is True
        second, refused, _ = open_session(server.server_address)
        second.close()
        assert refused == {
            "ok": False,
            "error": "too many MCP sessions are open (at most 1)",
        }
        # Requests are still answered meanwhile.
        ping = wire.request(server.server_address, {"op": "ping"}, 10.0)
        assert ping == {"ok": True, "op": "ping"}
        first.close()
        wait_until(lambda: server.sessions == 0)
        third, again, _ = open_session(server.server_address)
        third.close()
        assert again["ok"] is True


def test_a_stopping_server_ends_its_sessions_after_their_running_calls(
    tmp_path: Path,
) -> None:
    finished: list[str] = []

    def busy(sock: socket.socket, received: bytes) -> None:
        echo(sock, received)
        # A tool call still running when the session ends: the runtime must outlive it.
        time.sleep(0.3)
        finished.append("call")

    with serving(str(tmp_path / "d.sock"), runner=busy) as server:
        sock, answer, lines = open_session(server.server_address)
        assert answer["ok"] is True
    # server_close returned: after the call, and the client was told the session ended.
    assert finished == ["call"]
    with sock, pytest.raises(wire.WireError, match="closed"):
        lines.line()


def test_a_failing_session_leaves_the_daemon_serving(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(sock: socket.socket, received: bytes) -> None:
        raise RuntimeError("the session broke")

    with serving(str(tmp_path / "d.sock"), runner=broken) as server:
        sock, answer, lines = open_session(server.server_address)
        with sock:
            assert answer["ok"] is True
            with pytest.raises(wire.WireError, match="closed"):
                lines.line()
        assert wire.request(server.server_address, {"op": "ping"}, 10.0)["ok"] is True
        wait_until(lambda: server.sessions == 0)
    assert "an MCP session failed" in caplog.text


def test_a_session_is_opened_with_the_relays_setup_notice(served: Served, tmp_path: Path) -> None:
    answer, runner = served.handlers.open_session(
        {
            "protocol": wire.PROTOCOL,
            "client": thatch.__version__,
            "op": "mcp",
            "cwd": str(tmp_path),
            "env": {"THATCH_HARNESS": "cursor"},
        }
    )
    assert runner is not None
    assert answer["ok"] is True
    assert answer["daemon"] == thatch.__version__
    # The daemon's plugins (here only storage) decide it, for the relay's harness.
    assert answer["notice"].startswith("thatch: the cursor plugin is not installed")
    assert served.stops == []


def test_a_newer_relay_makes_the_daemon_stop_instead_of_serving(served: Served) -> None:
    major, minor, patch = version_tuple(thatch.__version__)
    answer, runner = served.handlers.open_session(
        {"client": f"{major}.{minor}.{patch + 1}", "op": "mcp"}
    )
    assert runner is None
    assert (answer["ok"], answer["restart"]) == (False, True)
    assert served.stops == [True]


# -- rundir ------------------------------------------------------------------------
def test_locate_with_thatch_home(tmp_path: Path) -> None:
    located = rundir.locate({"THATCH_HOME": str(tmp_path / "h")})
    root = os.path.realpath(tmp_path / "h")
    assert located.runtime_dir == os.path.join(root, "run")
    assert located.state_dir == os.path.join(root, "state")
    assert located.socket_path == os.path.join(root, "run", "daemon.sock")
    assert located.lock_path == os.path.join(root, "run", "daemon.lock")
    assert located.pid_path == os.path.join(root, "run", "daemon.pid")
    assert located.spool_dir == os.path.join(root, "state", "spool")
    assert located.log_path == os.path.join(root, "state", "log", "thatch.log")
    assert located.sessions_db == os.path.join(root, "state", "sessions.db")


def test_the_home_argument_wins_over_thatch_home(tmp_path: Path) -> None:
    located = rundir.locate({"THATCH_HOME": str(tmp_path / "env")}, home=str(tmp_path / "arg"))
    assert located.runtime_dir == os.path.join(os.path.realpath(tmp_path / "arg"), "run")


def test_each_database_gets_its_own_socket(tmp_path: Path) -> None:
    home = str(tmp_path)
    plain = rundir.locate({"THATCH_HOME": home})
    one = rundir.locate({"THATCH_HOME": home, "THATCH_DB_PATH": str(tmp_path / "one.db")})
    two = rundir.locate({"THATCH_HOME": home, "THATCH_DB_PATH": str(tmp_path / "two.db")})
    sockets = {plain.socket_path, one.socket_path, two.socket_path}
    assert len(sockets) == 3
    assert len({plain.lock_path, one.lock_path, two.lock_path}) == 3
    name = os.path.basename(one.socket_path)
    assert name.startswith("daemon-")
    assert name.endswith(".sock")
    assert os.path.dirname(one.socket_path) == plain.runtime_dir
    # The queues and the spool stay per home, whatever the database.
    assert one.sessions_db == plain.sessions_db


def test_one_database_reached_two_ways_is_one_daemon(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    home = str(tmp_path / "h")
    direct = rundir.locate({"THATCH_HOME": home, "THATCH_DB_PATH": str(tmp_path / "real/x.db")})
    linked = rundir.locate({"THATCH_HOME": home, "THATCH_DB_PATH": str(tmp_path / "link/x.db")})
    assert direct.socket_path == linked.socket_path


def test_a_long_home_keeps_its_socket_path_and_its_lock_in_the_home(tmp_path: Path) -> None:
    deep = tmp_path / ("a" * 60) / ("b" * 60)
    located = rundir.locate({"THATCH_HOME": str(deep)})
    # Clients look for the daemon's link at the natural path (see test_daemon_security).
    assert located.socket_linked
    assert os.path.dirname(located.socket_path) == located.runtime_dir
    assert located.lock_path.startswith(os.path.realpath(deep))
    db = rundir.locate({"THATCH_HOME": str(deep), "THATCH_DB_PATH": "/x.db"})
    assert db.socket_path != located.socket_path


def test_a_short_enough_path_is_bound_where_it_is(tmp_path: Path) -> None:
    located = rundir.locate({"THATCH_HOME": str(tmp_path)})
    assert len(located.socket_path.encode()) <= rundir.MAX_SOCKET_PATH
    assert os.path.dirname(located.socket_path) == located.runtime_dir


@pytest.mark.skipif(sys.platform == "darwin", reason="XDG folders are Linux's")
@pytest.mark.parametrize("runtime", [None, "xdg-runtime"])
@pytest.mark.parametrize("state", [None, "xdg-state", ""])
def test_user_folders_match_paths_and_platformdirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: str | None, state: str | None
) -> None:
    for variable, value in (("XDG_RUNTIME_DIR", runtime), ("XDG_STATE_HOME", state)):
        if value is None:
            monkeypatch.delenv(variable, raising=False)
        else:
            monkeypatch.setenv(variable, str(tmp_path / value) if value else value)
    located = rundir.locate(os.environ)
    paths = Paths.for_user()
    assert paths.runtime_dir == Path(located.runtime_dir)
    assert paths.state_dir == Path(located.state_dir)
    dirs = platformdirs.PlatformDirs("thatch", appauthor=False)
    assert located.state_dir == dirs.user_state_dir
    if runtime:
        assert located.runtime_dir == str(tmp_path / runtime / "thatch")
    else:
        # Never a shared /tmp folder: inside the user's own state folder.
        assert located.runtime_dir == os.path.join(dirs.user_state_dir, "run")


@pytest.mark.skipif(sys.platform == "darwin", reason="XDG folders are Linux's")
@pytest.mark.parametrize("variable", ["XDG_STATE_HOME", "XDG_RUNTIME_DIR"])
def test_relative_xdg_folders_are_ignored(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv(variable, "relative/folder")
    located = rundir.locate(os.environ)
    assert os.path.isabs(located.runtime_dir)
    assert os.path.isabs(located.state_dir)
    dirs = platformdirs.PlatformDirs("thatch", appauthor=False)
    assert located.state_dir == dirs.user_state_dir


def test_the_daemon_maps_no_database_unless_asked(tmp_path: Path) -> None:
    from thatch.daemon.lifecycle import _long_lived
    from thatch.plugin.config import Config

    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    assert _long_lived(Config.load(home, environ={})).sections["storage"]["mmap_mb"] == 0
    (home / "config" / "config.toml").write_text('[storage]\nmmap_mb = 64\nbackend = "sqlite"\n')
    chosen = _long_lived(Config.load(home, environ={})).sections["storage"]
    assert chosen == {"mmap_mb": 64, "backend": "sqlite"}


@pytest.mark.parametrize(
    ("replacing", "waits"), [(False, 0.0), (True, lifecycle.LOCK_WAIT_SECONDS)]
)
def test_only_a_daemon_replacing_an_outdated_one_waits_for_the_lock(
    home: Path, monkeypatch: pytest.MonkeyPatch, replacing: bool, waits: float
) -> None:
    """A spare that waited would take over the moment 'thatch daemon stop' ended the first."""
    asked: list[float] = []

    def held_elsewhere(path: str, wait_seconds: float = 0.0) -> int | None:
        asked.append(wait_seconds)
        return None  # another daemon holds it

    monkeypatch.setattr(lock, "acquire", held_elsewhere)
    assert lifecycle.run(str(home), environ={}, replacing=replacing) == 0
    assert asked == [waits]


@pytest.mark.skipif(sys.platform == "darwin", reason="XDG folders are Linux's")
@pytest.mark.parametrize("moved", [False, True])
def test_platformdirs_and_the_standard_library_twin_place_every_folder_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved: bool
) -> None:
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        if moved:
            monkeypatch.setenv(variable, str(tmp_path / variable.lower()))
        else:
            monkeypatch.delenv(variable, raising=False)
    # os.environ itself: platformdirs; a copy of it: the twin the hook commands use.
    assert Paths.for_user() == Paths.for_user(dict(os.environ))


# -- plugins told of the start and the stop ----------------------------------------
def test_a_lifecycle_hook_that_returns_in_time_is_waited_for() -> None:
    seen: list[object] = []
    app: Any = object()
    assert lifecycle.tell_plugins("thatch_daemon_started", seen.append, app, seconds=5) is True
    assert seen == [app]


def test_a_lifecycle_hook_that_hangs_is_left_behind_after_its_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = threading.Event()
    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="thatch"):
        waited = lifecycle.tell_plugins(
            "thatch_daemon_stopping", lambda app: release.wait(), object(), seconds=0.2
        )
    release.set()
    assert waited is False
    assert time.monotonic() - began < 2
    assert "thatch_daemon_stopping still runs after 0.2 s" in caplog.text


def test_what_escapes_a_lifecycle_hook_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def wrapper_failed(app: object) -> None:
        raise RuntimeError("a wrapper broke")

    with caplog.at_level(logging.ERROR, logger="thatch"):
        assert lifecycle.tell_plugins("thatch_daemon_started", wrapper_failed, object()) is True
    assert "thatch_daemon_started failed" in caplog.text
    assert "a wrapper broke" in caplog.text


def test_the_bound_on_lifecycle_hooks_is_within_what_a_stop_waits() -> None:
    from thatch.daemon.client import TERM_GRACE_SECONDS

    # `thatch daemon stop` signals a daemon that has not exited after its grace.
    assert lifecycle.PLUGIN_HOOK_SECONDS < TERM_GRACE_SECONDS
