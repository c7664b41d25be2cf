"""Stage 1's observations: what a tool call becomes, and the SQLite store that keeps them."""

from __future__ import annotations

import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from receptor_streams import Stream, edit, run
from thatch.plugin import Event, StorageError, ToolCall
from thatch.testing import WordHashEmbedder
from thatch_receptor.insights import Insight
from thatch_receptor.observations import (
    MAX_TEXT,
    SCHEMA_VERSION,
    Observation,
    ObservationStore,
    observations_of,
)

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def observation(text: str, session: str = "s1", at: float = 1.0, **fields: object) -> Observation:
    values: dict[str, object] = {"repo": "acme/app", "kind": "run", "failed": False} | fields
    return Observation(session_id=session, at=at, text=text, **values)  # type: ignore[arg-type]


def vectors(observations: list[Observation], dim: int = 32) -> np.ndarray:
    return WordHashEmbedder(dim=dim).embed_passages([o.text for o in observations])


def insight(key: str = "k1", repo: str | None = "acme/app") -> Insight:
    return Insight(
        key=key,
        kind="struggle",
        text="You worked something out. Save it with memory_remember.",
        repo=repo,
        session_ids=("s1",),
        observation_ids=(1, 2),
        created_at=5.0,
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ObservationStore]:
    opened = ObservationStore(tmp_path / "receptor" / "observations.db")
    yield opened
    opened.close()


# --- observations_of ------------------------------------------------------------


def test_one_observation_per_tool_call_with_the_event_session_repo_and_time() -> None:
    event = Stream(session_id="s9").event(
        run("pytest tests/test_auth.py", error="AssertionError: token expired"),
        edit("src/auth.py"),
    )

    found = observations_of(event, repo="acme/app", at=42.0)

    assert [(o.session_id, o.repo, o.at, o.kind, o.failed) for o in found] == [
        ("s9", "acme/app", 42.0, "run", True),
        ("s9", "acme/app", 42.0, "edit", False),
    ]
    assert found[0].text == (
        "bash: pytest tests/test_auth.py -> exit 1: AssertionError: token expired"
    )
    assert found[1].paths == ("src/auth.py",)


def test_a_secret_in_a_command_is_redacted_before_the_observation_exists() -> None:
    event = Stream().event(run(f"curl -H 'Authorization: token {SECRET}' https://api.github.com"))

    [found] = observations_of(event, repo=None, at=1.0)

    assert SECRET not in found.text
    assert "REDACTED" in found.text


def test_a_traceback_is_named_by_the_exception_it_ends_in() -> None:
    error = 'Traceback (most recent call last):\n  File "x.py", line 3\nValueError: closed file'
    [found] = observations_of(Stream().event(run("python x.py", error=error)), repo=None, at=1.0)

    assert found.text == "bash: python x.py -> exit 1: ValueError: closed file"


def test_colour_codes_are_dropped_and_the_text_is_bounded() -> None:
    error = "\x1b[1m\x1b[31mtests/test_a.py\x1b[0m:36: AssertionError"
    long_command = "python -c '" + "x = 1; " * 200 + "'"
    event = Stream().event(run("pytest tests/test_a.py", error=error), run(long_command))

    coloured, long = observations_of(event, repo=None, at=1.0)

    assert coloured.text.endswith("-> exit 1: tests/test_a.py:36: AssertionError")
    assert len(long.text) <= MAX_TEXT


def test_an_event_without_tool_calls_gives_no_observation() -> None:
    prompt = Event(kind="prompt", harness="claude", session_id="s1", prompt="fix the login")
    assert observations_of(prompt, repo=None, at=1.0) == []


# --- the store --------------------------------------------------------------------


def test_a_secret_never_reaches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "observations.db"
    store = ObservationStore(path)
    event = Stream().event(
        run(f"export GITHUB_TOKEN={SECRET} && gh pr list", error=f"bad token {SECRET}"),
        ToolCall("Edit", {"file_path": f"notes/{SECRET}.md"}, {}),
    )
    found = observations_of(event, repo="acme/app", at=1.0)
    # A caller that builds its own observation is redacted too.
    found.append(observation(f"bash: echo {SECRET} -> ok"))
    store.add(found, vectors(found))
    store.save_insight(
        Insight("k", "recurring", f"saw {SECRET}", None, ("s1",), (1,), created_at=1.0)
    )

    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith(path.name))
    store.close()
    assert b"REDACTED" in raw
    assert SECRET.encode() not in raw


def test_the_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "receptor" / "observations.db"
    ObservationStore(path).close()

    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_observations_round_trip_with_their_vectors(store: ObservationStore) -> None:
    first = [
        observation("bash: pytest -q -> exit 1: boom", failed=True, paths=("tests/a.py",)),
        observation("edit src/a.py", kind="edit", at=2.0),
    ]
    ids = store.add(first, vectors(first))

    [a, b] = store.recent("s1")
    assert [a.id, b.id] == ids
    assert a == Observation(
        "s1", "acme/app", 1.0, first[0].text, "run", True, ids[0], ("tests/a.py",)
    )
    assert (b.kind, b.failed) == ("edit", False)
    world, matrix = store.world("acme/app")
    assert [o.id for o in world] == ids
    np.testing.assert_array_equal(matrix, vectors(first))
    assert matrix.dtype == np.float32


def test_recent_is_the_newest_of_one_session_oldest_first(store: ObservationStore) -> None:
    rows = [observation(f"bash: step {i} -> ok", at=float(i)) for i in range(5)]
    store.add([*rows, observation("bash: other -> ok", session="s2")], None)

    assert [o.text for o in store.recent("s1", limit=2)] == [
        "bash: step 3 -> ok",
        "bash: step 4 -> ok",
    ]


def test_world_filters_by_repo_and_session_and_skips_rows_without_vectors(
    store: ObservationStore,
) -> None:
    mine = [observation("bash: a -> ok"), observation("bash: b -> ok", session="s2")]
    other_repo = [observation("bash: c -> ok", repo="other/repo")]
    store.add(mine, vectors(mine))
    store.add(other_repo, vectors(other_repo))
    store.add([observation("bash: not embedded -> ok")], None)

    assert [o.text for o in store.world("acme/app")[0]] == ["bash: a -> ok", "bash: b -> ok"]
    assert [o.text for o in store.world("acme/app", exclude_session="s1")[0]] == ["bash: b -> ok"]
    assert len(store.world(None)[0]) == 3
    assert [o.text for o in store.world(None, limit=1)[0]] == ["bash: c -> ok"]


def test_for_clustering_reads_from_a_time_on(store: ObservationStore) -> None:
    rows = [observation(f"bash: step {i} -> ok", at=float(i)) for i in range(4)]
    store.add(rows, vectors(rows))

    found, matrix = store.for_clustering("acme/app", since=2.0)

    assert [o.at for o in found] == [2.0, 3.0]
    assert matrix.shape == (2, 32)
    assert len(store.for_clustering(None, None)[0]) == 4


def test_rows_of_another_dimension_are_never_mixed_in(store: ObservationStore) -> None:
    old = [observation("bash: old model -> ok")]
    new = [observation("bash: new model -> ok"), observation("bash: newer -> ok")]
    store.add(old, vectors(old, dim=16))
    store.add(new, vectors(new, dim=32))

    world, matrix = store.world(None)
    clustered, clustered_matrix = store.for_clustering(None, None)

    assert [o.text for o in world] == [o.text for o in new] == [o.text for o in clustered]
    assert matrix.shape == clustered_matrix.shape == (2, 32)


def test_an_empty_store_gives_an_empty_world(store: ObservationStore) -> None:
    found, matrix = store.world("acme/app")
    assert found == []
    assert matrix.shape[0] == 0


def test_vectors_must_match_the_observations(store: ObservationStore) -> None:
    rows = [observation("bash: a -> ok"), observation("bash: b -> ok")]
    with pytest.raises(ValueError, match="2 observations but 1 vectors"):
        store.add(rows, vectors(rows[:1]))
    assert store.count() == 0


def test_an_insight_is_saved_once(store: ObservationStore) -> None:
    assert store.save_insight(insight("k1")) is True
    assert store.save_insight(insight("k1")) is False
    assert store.save_insight(insight("k2", repo="other/repo")) is True

    assert [i.key for i in store.insights()] == ["k1", "k2"]
    assert store.insights(repo="acme/app") == [insight("k1")]


def test_a_delivered_insight_is_no_longer_pending(store: ObservationStore) -> None:
    store.save_insight(insight("k1"))
    store.save_insight(insight("k2"))

    store.mark_delivered("k1")

    assert [i.key for i in store.insights(pending_only=True)] == ["k2"]
    assert len(store.insights()) == 2
    # Delivered once is delivered: saving it again does not bring it back.
    assert store.save_insight(insight("k1")) is False
    assert [i.key for i in store.insights(pending_only=True)] == ["k2"]


def test_prune_keeps_the_newest(store: ObservationStore) -> None:
    store.add([observation(f"bash: step {i} -> ok", at=float(i)) for i in range(10)], None)

    assert store.prune(3) == 7
    assert [o.at for o in store.recent("s1")] == [7.0, 8.0, 9.0]
    assert store.prune(3) == 0


def test_a_newer_schema_is_refused_with_what_to_do(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "observations.db"
    ObservationStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()

    with pytest.raises(StorageError, match=r"newer than this receptor knows.*upgrade"):
        ObservationStore(path)


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "observations.db"
    stores = [ObservationStore(path) for _ in range(3)]

    def write(store: ObservationStore, n: int) -> None:
        for i in range(20):
            rows = [observation(f"bash: writer {n} step {i} -> ok", session=f"s{n}")] * 5
            store.add(rows, vectors(rows))

    threads = [threading.Thread(target=write, args=(s, n)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert stores[0].count() == 3 * 20 * 5
    assert len(stores[1].for_clustering(None, None)[0]) == 300
    for store in stores:
        store.close()


def test_a_writer_killed_mid_write_leaves_whole_batches(tmp_path: Path) -> None:
    path = tmp_path / "observations.db"
    writer = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        from pathlib import Path
        from thatch_receptor.observations import Observation, ObservationStore

        store = ObservationStore(Path({str(path)!r}))
        batch = [Observation("s1", None, 1.0, "bash: x -> ok", "run", False)] * 50
        matrix = np.ones((50, 64), dtype=np.float32)
        store.add(batch, matrix)
        print("ready", flush=True)
        while True:
            store.add(batch, matrix)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline() == "ready\n"
            threading.Event().wait(0.3)  # well inside the loop of writes
        finally:
            child.kill()

    store = ObservationStore(path)
    assert store.count() >= 50
    assert store.count() % 50 == 0
    found, matrix = store.for_clustering(None, None)
    assert matrix.shape == (len(found), 64)
    store.close()


@pytest.mark.slow
def test_real_model_vectors_round_trip(tmp_path: Path) -> None:
    import thatch

    event = Stream().event(run("pytest tests/test_auth.py", error="AssertionError"))
    found = observations_of(event, repo="acme/app", at=1.0)
    with thatch.open(home=tmp_path / "home") as th:
        matrix = th.embedder.embed_passages([o.text for o in found])
    store = ObservationStore(tmp_path / "observations.db")
    store.add(found, matrix)

    _, stored = store.world("acme/app")
    np.testing.assert_array_equal(stored, matrix.astype(np.float32))
    store.close()
