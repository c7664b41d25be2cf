"""Two homes, each with its own daemon, on one server: what one remembers, the other finds."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from machines import Machine, machine
from pg_cluster import Server, schema_for
from pg_handles import query

#: Stop words only: PostgreSQL's english full text ignores every one of them, so
#: only a meaning search (the daemon's vector cache) can find this memory.
CONTENT = "it is what it is and we are where we are"
QUERY = "what it is and where we are"

pytestmark = pytest.mark.slow


@pytest.fixture
def two_homes(postgres_server: Server, tmp_path: Path) -> Iterator[tuple[Machine, Machine]]:
    schema = schema_for(tmp_path)
    homes = (
        machine(tmp_path / "laptop", postgres_server.dsn("postgres"), schema),
        machine(tmp_path / "desktop", postgres_server.dsn("postgres"), schema),
    )
    try:
        for home in homes:
            home.thatch("daemon", "start")
        yield homes
    finally:
        for home in homes:
            home.thatch("daemon", "stop", check=False)
            home.daemon().wait_stopped(timeout=30)


def labels(hits: list[dict[str, object]]) -> set[object]:
    return {hit["label"] for hit in hits}


def test_a_memory_remembered_through_one_home_is_found_through_the_other(
    two_homes: tuple[Machine, Machine],
) -> None:
    laptop, desktop = two_homes
    # The desktop's daemon has its vectors in memory before the laptop writes.
    laptop.tool("memory_remember", label="warm-up", content="a first memory", overwrite=False)
    assert "warm-up" in labels(desktop.tool("memory_recall", query="a first memory"))
    assert "motto" not in labels(desktop.tool("memory_recall", query=QUERY))

    laptop.tool("memory_remember", label="motto", content=CONTENT, overwrite=False)
    saved = time.monotonic()
    while "motto" not in labels(desktop.tool("memory_recall", query=QUERY)):
        assert time.monotonic() - saved < 2.0, "the desktop's daemon did not find it within 2 s"
        time.sleep(0.01)
    through_daemon = time.monotonic() - saved

    # `thatch search` is a process of its own, on a cold copy: the time it
    # takes is its start-up, not the sharing; it is shown, and only checked
    # to find the memory by meaning and not by words.
    searched = desktop.thatch("search", QUERY, "--json")
    through_search = time.monotonic() - saved
    assert '"motto"' in searched.stdout
    assert '"motto"' not in desktop.thatch("search", QUERY, "--mode", "words", "--json").stdout
    print(
        f"\nfound through the other daemon after {through_daemon * 1000:.0f} ms; "
        f"`thatch search` there returned after {through_search * 1000:.0f} ms"
    )


#: One writer: N memories through its home's daemon, each under a label of its own.
WRITER = """
import sys
from thatch.daemon.client import DaemonClient

home, cwd, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
client = DaemonClient(home)
for n in range(count):
    answer = client.call(
        "call",
        tool="memory_remember",
        arguments={"label": f"{name}-{n}", "content": f"fact {n} written by {name}"},
        cwd=cwd,
        env={},
    )
    assert answer["ok"] and not answer["is_error"], answer
"""

WRITERS = 4
EACH = 500


def test_four_writers_through_two_daemons_save_every_memory_once(
    two_homes: tuple[Machine, Machine], postgres_server: Server, tmp_path: Path
) -> None:
    started = time.monotonic()
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER,
                str(home.home),
                str(home.outside_git),
                f"w{i}",
                str(EACH),
            ],
            env=home.env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, home in enumerate(two_homes * (WRITERS // 2))
    ]
    for writer in writers:
        _, errors = writer.communicate(timeout=170)
        assert writer.returncode == 0, errors
    took = time.monotonic() - started

    rows = query(
        postgres_server,
        schema_for(tmp_path),
        "SELECT count(*), count(DISTINCT (store, label)), count(DISTINCT id) FROM memories",
    )
    assert rows == [(WRITERS * EACH, WRITERS * EACH, WRITERS * EACH)]
    # Each daemon lists them all: its copy and the server agree.
    for home in two_homes:
        listed = home.tool("memory_list", store="global")
        assert len(listed) == WRITERS * EACH
    print(f"\n{WRITERS} x {EACH} memories through two daemons in {took:.1f} s")
