"""The session store under concurrent writers: threads, processes, and a killed process.

Every writer records its own events and also races the others for a shared
set of event ids and identities; each event must land exactly once.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import signal
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from thatch.plugin.events import Event
from thatch.sessions import NewInteraction, SessionStore

WRITERS = 4
OWN_EVENTS = 60
SHARED_EVENTS = 40


def _tool_event(session: str, event_id: str, identity: str | None = None) -> Event:
    return Event(
        kind="tool_use",
        harness="claude",
        session_id=session,
        event_id=event_id,
        identity=identity,
        received_at=1.0,
    )


def _write(store: SessionStore, writer: int) -> int:
    """Record this writer's own events, then race for the shared ones; return the wins."""
    wins = 0
    for number in range(OWN_EVENTS):
        event = _tool_event(f"own-{writer % 2}", f"w{writer}-{number}")
        assert store.record(event, [NewInteraction("Bash", f"w{writer}-{number}", "ok")])
    for number in range(SHARED_EVENTS):
        # Half race on the event id, half on the identity under distinct ids.
        if number % 2:
            event = _tool_event("shared", f"shared-{number}")
        else:
            event = _tool_event("shared", f"w{writer}-id-{number}", identity=f"gen-{number}")
        item = NewInteraction("Read", f"shared-{number}", f"by {writer}")
        wins += store.record(event, [item])
    return wins


def _check(store: SessionStore, writers: int, wins: list[int]) -> None:
    assert sum(wins) == SHARED_EVENTS
    own = [item.tool_input for session in ("own-0", "own-1") for item in store.pending(session)]
    assert len(own) == writers * OWN_EVENTS
    assert len(set(own)) == len(own)
    shared = Counter(item.tool_input for item in store.pending("shared"))
    assert shared == Counter(f"shared-{number}" for number in range(SHARED_EVENTS))
    # Each writer's own events keep their order in the queue.
    for writer in range(writers):
        mine = [name for name in own if name.startswith(f"w{writer}-")]
        assert mine == sorted(mine, key=lambda name: int(name.rsplit("-", 1)[1]))


def _run_threads(target: Callable[[int], None], count: int) -> None:
    threads = [threading.Thread(target=target, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_threads_sharing_one_store_land_each_event_once(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions.db")
    wins = [0] * WRITERS
    barrier = threading.Barrier(WRITERS)

    def writer(index: int) -> None:
        barrier.wait()
        wins[index] = _write(store, index)

    try:
        _run_threads(writer, WRITERS)
        _check(store, WRITERS, wins)
    finally:
        store.close()


def test_threads_with_their_own_connections_land_each_event_once(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    wins = [0] * WRITERS
    barrier = threading.Barrier(WRITERS)

    def writer(index: int) -> None:
        store = SessionStore(path)
        try:
            barrier.wait()
            wins[index] = _write(store, index)
        finally:
            store.close()

    _run_threads(writer, WRITERS)
    store = SessionStore(path)
    try:
        _check(store, WRITERS, wins)
    finally:
        store.close()


def _process_writer(
    path: str, index: int, barrier: multiprocessing.synchronize.Barrier, wins: object
) -> None:
    barrier.wait()
    # Every process opens the fresh file at the same moment: the schema is
    # created once, whoever comes first.
    store = SessionStore(Path(path))
    try:
        wins[index] = _write(store, index)  # type: ignore[index]
    finally:
        store.close()


def test_processes_land_each_event_once(tmp_path: Path) -> None:
    path = tmp_path / "state" / "sessions.db"
    # spawn, not fork: forking a process that runs threads can deadlock.
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(WRITERS)
    wins = context.Array("i", WRITERS)
    processes = [
        context.Process(target=_process_writer, args=(str(path), index, barrier, wins))
        for index in range(WRITERS)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [process.exitcode for process in processes] == [0] * WRITERS
    store = SessionStore(path)
    try:
        _check(store, WRITERS, wins[:])
    finally:
        store.close()


_KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from thatch.plugin.events import Event
    from thatch.sessions import NewInteraction, SessionStore

    store = SessionStore(Path(sys.argv[1]))
    for number in range(50):
        event = Event(kind="tool_use", harness="claude", session_id="s",
                      event_id=f"e{number}", received_at=1.0)
        store.record(event, [NewInteraction("Bash", str(number), "ok")])
    store.note_extraction_nudge("s", 10)
    # Die without closing: no checkpoint, the commits live in the WAL only.
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_a_killed_process_loses_no_commit(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, str(path)], capture_output=True, timeout=60
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    store = SessionStore(path)
    try:
        assert [item.tool_input for item in store.pending("s")] == [str(n) for n in range(50)]
        state = store.state("s")
        assert state is not None
        assert (state.nudge_level, state.last_nudged_seq) == (1, 10)
        # Replaying the spool after the crash doubles nothing.
        replay = Event(kind="tool_use", harness="claude", session_id="s", event_id="e3")
        assert not store.record(replay, [NewInteraction("Bash", "3", "ok")])
    finally:
        store.close()
