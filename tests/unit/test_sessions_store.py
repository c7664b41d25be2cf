"""The session store: records, duplicates, queues, nudge levels, compaction, held nudges, purge."""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from thatch.plugin.errors import StorageError
from thatch.plugin.events import Event, EventKind
from thatch.plugin.nudge import Nudge
from thatch.sessions import COMPACT_TIMEOUT_SECONDS, NewInteraction, SessionStore
from thatch.sessions.schema import MIGRATIONS, SCHEMA_VERSION
from thatch.sessions.store import MAX_DELIVERED


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


_counter = iter(range(1, 1_000_000))


def event(
    session: str = "s1",
    kind: EventKind = "tool_use",
    *,
    event_id: str | None = None,
    identity: str | None = None,
    at: float = 0.0,
    source: str | None = None,
    harness: str = "claude",
    cwd: str | None = "/repo",
) -> Event:
    return Event(
        kind=kind,
        harness=harness,
        session_id=session,
        cwd=cwd,
        source=source,
        event_id=event_id or f"ev-{next(_counter)}",
        identity=identity,
        received_at=at,
    )


def calls(*names: str) -> list[NewInteraction]:
    return [NewInteraction(name, f"in {name}", f"out {name}") for name in names]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> Iterator[SessionStore]:
    opened = SessionStore(tmp_path / "state" / "sessions.db", clock=clock)
    yield opened
    opened.close()


def names(store: SessionStore, session: str = "s1") -> list[str]:
    return [item.tool_name for item in store.pending(session)]


# -- the file ------------------------------------------------------------------


def test_file_is_private_and_versioned(tmp_path: Path) -> None:
    path = tmp_path / "state" / "sessions.db"
    store = SessionStore(path)
    store.record(event(), calls("Bash"))
    store.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for sibling in path.parent.glob("sessions.db-*"):  # -wal / -shm, when left behind
        assert stat.S_IMODE(sibling.stat().st_mode) & 0o077 == 0
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_an_existing_world_readable_file_is_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.touch(mode=0o644)
    path.chmod(0o644)
    SessionStore(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_newer_schema_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SessionStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StorageError, match=r"newer.*upgrade thatch, or delete"):
        SessionStore(path)


def test_a_file_of_the_first_version_gains_held_nudges_and_keeps_its_queues(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.db"
    with sqlite3.connect(path) as conn:
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO sessions (session_id, harness, last_seen) VALUES ('s1', 'cursor', 1.0)"
        )
        conn.execute(
            "INSERT INTO interactions (session_id, tool_name, tool_input, tool_response, "
            "created_at) VALUES ('s1', 'Shell', 'in', 'out', 1.0)"
        )
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    store = SessionStore(path)
    try:
        assert names(store) == ["Shell"]
        store.hold("s1", "cursor", [RECALL])
        assert texts(store.take_held("s1", "cursor")) == [RECALL.text]
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    conn.close()


def test_a_file_that_is_not_a_database_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StorageError, match=r"sessions\.db.*delete it"):
        SessionStore(path)


def test_commits_survive_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    first = SessionStore(path)
    assert first.record(event(event_id="a"), calls("Bash", "Read"))
    assert first.record(event(kind="prompt"), [])
    first.note_extraction_nudge("s1", 1)
    first.mark_shown("s1", [7])
    first.close()

    second = SessionStore(path)
    try:
        assert names(second) == ["Bash", "Read"]
        state = second.state("s1")
        assert state is not None
        assert (state.prompts, state.nudge_level, state.last_nudged_seq) == (1, 1, 1)
        assert second.shown_recently("s1", [7, 8], window=5) == {7}
        assert not second.record(event(event_id="a"), calls("Bash"))
    finally:
        second.close()


# -- recording and duplicates -----------------------------------------------------


def test_record_queues_interactions_in_arrival_order(store: SessionStore) -> None:
    assert store.record(event(), calls("Bash", "Read"))
    assert store.record(event(), calls("Edit"))
    queued = store.pending("s1")
    assert [item.tool_name for item in queued] == ["Bash", "Read", "Edit"]
    assert [item.seq for item in queued] == sorted(item.seq for item in queued)
    assert queued[0].tool_input == "in Bash"
    assert queued[0].tool_response == "out Bash"
    assert store.pending("s1", limit=2) == queued[:2]


def test_interaction_fields_round_trip(store: SessionStore, clock: Clock) -> None:
    item = NewInteraction("Bash", "ls", "boom", call_id="toolu_1", failed=True)
    store.record(event(at=123.5), [item])
    store.record(event(), [NewInteraction("Read", "", "")])
    first, second = store.pending("s1")
    assert (first.call_id, first.failed, first.created_at) == ("toolu_1", True, 123.5)
    assert (second.call_id, second.failed, second.created_at) == (None, False, clock.now)


def test_duplicate_event_id_changes_nothing(store: SessionStore) -> None:
    assert store.record(event(event_id="same", kind="prompt"), calls("Bash"))
    before = store.state("s1")
    assert not store.record(event(event_id="same", kind="prompt"), calls("Read", "Edit"))
    assert not store.record(event(event_id="same", kind="compact"), calls("Read"))
    assert names(store) == ["Bash"]
    assert store.state("s1") == before


def test_duplicate_identity_under_another_event_id_changes_nothing(store: SessionStore) -> None:
    assert store.record(event(event_id="claude-1", identity="gen-9", kind="prompt"), calls("A"))
    assert not store.record(
        event(event_id="cursor-1", identity="gen-9", kind="prompt", harness="cursor"), calls("B")
    )
    state = store.state("s1")
    assert state is not None
    assert (state.prompts, state.harness, state.pending) == (1, "claude", 1)
    # The rejected event's id was not kept either: it is a new event later.
    assert store.record(event(event_id="cursor-1"), calls("C"))
    assert names(store) == ["A", "C"]


def test_events_without_identity_are_not_duplicates_of_each_other(store: SessionStore) -> None:
    assert store.record(event(identity=None), calls("A"))
    assert store.record(event(identity=None), calls("B"))
    assert names(store) == ["A", "B"]


def test_an_event_without_id_is_refused(store: SessionStore) -> None:
    nameless = Event(kind="tool_use", harness="claude", session_id="s1")
    with pytest.raises(ValueError, match="event_id"):
        store.record(nameless, calls("Bash"))
    assert store.state("s1") is None


def test_session_row_follows_its_events(store: SessionStore, clock: Clock) -> None:
    store.record(event(at=50.0, cwd="/a"), [])
    store.record(event(at=40.0, cwd=None, harness=""), [])  # a late spool replay
    state = store.state("s1")
    assert state is not None
    assert (state.harness, state.cwd, state.last_seen) == ("claude", "/a", 50.0)
    store.record(event(at=60.0, cwd="/b", harness="cursor", kind="prompt"), [])
    store.record(event(kind="prompt", cwd=None, harness=""), [])
    state = store.state("s1")
    assert state is not None
    assert (state.harness, state.cwd, state.last_seen, state.prompts) == (
        "cursor",
        "/b",
        clock.now,
        2,
    )


def test_sessions_never_see_each_others_queues(store: SessionStore) -> None:
    store.record(event("one"), calls("A1", "A2"))
    store.record(event("two"), calls("B1"))
    store.record(event("one"), calls("A3"))
    assert names(store, "one") == ["A1", "A2", "A3"]
    assert names(store, "two") == ["B1"]
    assert all(item.session_id == "two" for item in store.pending("two"))

    store.note_extraction_nudge("one", store.pending("one")[-1].seq)
    assert store.extraction_done("one") == 3
    assert names(store, "one") == []
    assert names(store, "two") == ["B1"]
    two = store.state("two")
    assert two is not None
    assert (two.nudge_level, two.pending) == (0, 1)


def test_unknown_sessions(store: SessionStore) -> None:
    assert store.state("nobody") is None
    assert store.pending("nobody") == []
    assert store.extraction_done("nobody") == 0
    assert store.shown_recently("nobody", [1, 2], window=10) == set()


def test_sessions_lists_the_most_recent_first(store: SessionStore) -> None:
    store.record(event("old", at=10.0), calls("A"))
    store.record(event("new", at=20.0), [])
    listed = store.sessions()
    assert [state.session_id for state in listed] == ["new", "old"]
    assert [state.pending for state in listed] == [0, 1]


# -- extraction nudges and draining -------------------------------------------------


def test_nudge_levels_escalate_and_reset(store: SessionStore) -> None:
    store.record(event(), calls("A", "B"))
    last = store.pending("s1")[-1].seq
    assert [store.note_extraction_nudge("s1", last) for _ in range(3)] == [1, 2, 3]
    state = store.state("s1")
    assert state is not None
    assert (state.nudge_level, state.last_nudged_seq) == (3, last)
    assert store.extraction_done("s1") == 2
    state = store.state("s1")
    assert state is not None
    assert (state.nudge_level, state.pending) == (0, 0)


def test_pending_peeks_and_never_drains(store: SessionStore) -> None:
    store.record(event(), calls("A", "B"))
    assert store.pending("s1") == store.pending("s1")
    store.note_extraction_nudge("s1", store.pending("s1")[-1].seq)
    assert names(store) == ["A", "B"]


def test_done_drains_only_through_the_last_nudge(store: SessionStore) -> None:
    store.record(event(), calls("A", "B"))
    nudged_through = store.pending("s1")[-1].seq
    store.note_extraction_nudge("s1", nudged_through)
    store.record(event(), calls("C"))  # arrives after the nudge
    assert store.extraction_done("s1") == 2
    assert names(store) == ["C"]
    # The boundary stays where the last nudge put it: C was never shown.
    assert store.extraction_done("s1") == 0
    assert names(store) == ["C"]
    store.note_extraction_nudge("s1", store.pending("s1")[-1].seq)
    assert store.extraction_done("s1") == 1
    assert names(store) == []


def test_done_without_any_nudge_drains_everything(store: SessionStore) -> None:
    store.record(event(), calls("A", "B", "C"))
    assert store.extraction_done("s1") == 3
    assert names(store) == []


def test_nudge_boundary_never_moves_back(store: SessionStore) -> None:
    store.record(event(), calls("A", "B", "C"))
    seqs = [item.seq for item in store.pending("s1")]
    store.note_extraction_nudge("s1", seqs[2])
    store.note_extraction_nudge("s1", seqs[0])
    state = store.state("s1")
    assert state is not None
    assert state.last_nudged_seq == seqs[2]
    assert store.extraction_done("s1") == 3


def test_a_partial_nudge_drains_only_what_it_covered(store: SessionStore) -> None:
    store.record(event(), calls("A", "B", "C", "D"))
    seqs = [item.seq for item in store.pending("s1")]
    store.note_extraction_nudge("s1", seqs[1])
    assert store.extraction_done("s1") == 2
    assert names(store) == ["C", "D"]


# -- compaction ----------------------------------------------------------------------


def compacting(store: SessionStore, session: str = "s1") -> bool:
    state = store.state(session)
    assert state is not None
    return state.compacting


def test_compaction_starts_and_ends(store: SessionStore) -> None:
    store.record(event(kind="session_start", source="startup"), [])
    assert not compacting(store)
    store.record(event(kind="compact", source="auto"), [])
    assert compacting(store)
    store.record(event(kind="prompt"), [])
    assert compacting(store)
    store.record(event(kind="session_start", source="compact"), [])
    assert not compacting(store)


def test_compaction_ends_on_its_own_after_the_timeout(store: SessionStore, clock: Clock) -> None:
    store.record(event(kind="compact"), [])
    clock.now += COMPACT_TIMEOUT_SECONDS - 1
    assert compacting(store)
    clock.now += 2
    assert not compacting(store)


def test_a_late_replayed_compact_event_is_already_over(store: SessionStore, clock: Clock) -> None:
    store.record(event(kind="compact", at=clock.now - COMPACT_TIMEOUT_SECONDS - 5), [])
    assert not compacting(store)


def test_compaction_is_per_session(store: SessionStore) -> None:
    store.record(event("one", kind="compact"), [])
    store.record(event("two", kind="prompt"), [])
    assert compacting(store, "one")
    assert not compacting(store, "two")


# -- memories shown ------------------------------------------------------------------


def prompt(store: SessionStore, session: str = "s1") -> None:
    store.record(event(session, kind="prompt"), [])


def test_shown_memories_are_recent_for_the_window(store: SessionStore) -> None:
    prompt(store)
    store.mark_shown("s1", [1, 2])
    assert store.shown_recently("s1", [1, 2, 3], window=3) == {1, 2}
    for _ in range(3):
        prompt(store)
    assert store.shown_recently("s1", [1, 2, 3], window=3) == {1, 2}
    prompt(store)
    assert store.shown_recently("s1", [1, 2, 3], window=3) == set()
    assert store.shown_recently("s1", [1, 2, 3], window=4) == {1, 2}


def test_showing_again_restarts_the_window(store: SessionStore) -> None:
    prompt(store)
    store.mark_shown("s1", [1, 2])
    prompt(store)
    prompt(store)
    store.mark_shown("s1", [2])
    prompt(store)
    assert store.shown_recently("s1", [1, 2], window=2) == {2}


def test_window_zero_means_this_prompt_only(store: SessionStore) -> None:
    prompt(store)
    store.mark_shown("s1", [5])
    assert store.shown_recently("s1", [5], window=0) == {5}
    prompt(store)
    assert store.shown_recently("s1", [5], window=0) == set()


def test_shown_memories_are_per_session(store: SessionStore) -> None:
    prompt(store, "one")
    prompt(store, "two")
    store.mark_shown("one", [1])
    assert store.shown_recently("two", [1], window=10) == set()
    assert store.shown_recently("one", [1], window=10) == {1}


def test_marking_an_unknown_session_creates_it(store: SessionStore) -> None:
    store.mark_shown("fresh", [4])
    assert store.shown_recently("fresh", [4], window=1) == {4}
    state = store.state("fresh")
    assert state is not None
    assert (state.prompts, state.harness) == (0, "")


# -- held nudges -------------------------------------------------------------------

RECALL = Nudge(source="recall", text="[thatch] Relevant memories\n- refunds", memory_ids=(3, 9))
DECISIONS = Nudge(source="decisions", text="[thatch] User decision model", tier=2, priority=60)
EXTRACTION = Nudge(source="extraction", text="[thatch] Save what the tools taught", tier=1)


def texts(nudges: list[Nudge]) -> list[str]:
    return [nudge.text for nudge in nudges]


def test_held_nudges_are_taken_once_as_they_were_held(store: SessionStore) -> None:
    prompt(store)
    store.hold("s1", "cursor", [EXTRACTION, RECALL, DECISIONS])
    taken = store.take_held("s1", "cursor")
    assert taken == [EXTRACTION, RECALL, DECISIONS]
    assert [(n.source, n.tier, n.priority, n.memory_ids) for n in taken] == [
        ("extraction", 1, 0, ()),
        ("recall", 2, 0, (3, 9)),
        ("decisions", 2, 60, ()),
    ]
    assert store.take_held("s1", "cursor") == []


def test_held_nudges_keep_their_delivery_callbacks(store: SessionStore) -> None:
    calls_made: list[str] = []
    logged = Nudge(source="decisions", text="fires", on_delivered=lambda: calls_made.append("x"))
    store.hold("s1", "cursor", [RECALL, logged])
    first, second = store.take_held("s1", "cursor")
    assert first.on_delivered is None
    assert second.on_delivered is not None
    second.on_delivered()
    assert calls_made == ["x"]


def test_only_the_harness_that_held_them_takes_them(store: SessionStore) -> None:
    store.hold("s1", "cursor", [RECALL])
    assert store.take_held("s1", "claude") == []
    assert texts(store.take_held("s1", "cursor")) == [RECALL.text]


def test_a_newer_set_replaces_the_one_still_held(store: SessionStore) -> None:
    old = Nudge(source="decisions", text="old", on_delivered=lambda: None)
    store.hold("s1", "cursor", [old])
    store.hold("s1", "cursor", [RECALL])
    (taken,) = store.take_held("s1", "cursor")
    assert taken == RECALL
    # The replaced set's callback went with it.
    assert taken.on_delivered is None
    assert store.take_held("s1", "cursor") == []


def test_holding_nothing_drops_the_set_still_held(store: SessionStore) -> None:
    store.hold("s1", "cursor", [RECALL])
    store.hold("s1", "cursor", [])
    assert store.take_held("s1", "cursor") == []


def test_held_nudges_are_per_session(store: SessionStore) -> None:
    store.hold("one", "cursor", [RECALL])
    store.hold("two", "cursor", [DECISIONS])
    assert store.take_held("two", "cursor") == [DECISIONS]
    assert store.take_held("one", "cursor") == [RECALL]


def test_held_nudges_survive_a_restart_without_their_callbacks(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    first = SessionStore(path)
    first.hold("s1", "cursor", [attrs.evolve(RECALL, on_delivered=lambda: None)])
    first.close()
    second = SessionStore(path)
    try:
        (taken,) = second.take_held("s1", "cursor")
        assert (taken.text, taken.memory_ids, taken.on_delivered) == (RECALL.text, (3, 9), None)
    finally:
        second.close()


def test_a_set_is_handed_to_one_of_two_stores_on_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    first, second = SessionStore(path), SessionStore(path)
    try:
        first.hold("s1", "cursor", [RECALL])
        assert second.take_held("s1", "cursor") == [RECALL]
        assert first.take_held("s1", "cursor") == []
    finally:
        first.close()
        second.close()


# -- purge ---------------------------------------------------------------------------


def test_purge_forgets_stale_sessions_and_all_they_hold(store: SessionStore, clock: Clock) -> None:
    store.record(event("stale", event_id="old-event", kind="prompt", at=clock.now - 100), [])
    store.record(event("stale", at=clock.now - 100), calls("A"))
    store.mark_shown("stale", [1])
    store.hold("stale", "cursor", [RECALL])
    store.note_delivered("stale", "UserPromptSubmit", [RECALL])
    store.record(event("live", at=clock.now - 10), calls("B"))
    store.mark_shown("live", [1])
    store.hold("live", "cursor", [DECISIONS])

    assert store.purge(older_than_seconds=50) == 1
    assert store.state("stale") is None
    assert store.pending("stale") == []
    assert store.shown_recently("stale", [1], window=10) == set()
    assert store.take_held("stale", "cursor") == []
    assert store.delivered("stale") == []
    # Its event ids went too: the same id is a new event now.
    assert store.record(event("stale", event_id="old-event"), [])

    assert names(store, "live") == ["B"]
    assert store.shown_recently("live", [1], window=10) == {1}
    assert store.take_held("live", "cursor") == [DECISIONS]
    assert store.purge(older_than_seconds=50) == 0


# -- what the agent was told -----------------------------------------------------


def test_delivered_nudges_are_logged_newest_first_with_their_event(
    store: SessionStore, clock: Clock
) -> None:
    store.record(event("s1"), [])
    store.note_delivered("s1", "UserPromptSubmit", [RECALL, DECISIONS])
    clock.now += 5
    store.note_delivered("s1", "PostToolUse", [DECISIONS])
    store.note_delivered("s2", "UserPromptSubmit", [RECALL])
    got = store.delivered("s1")
    assert [(d.event, d.source, d.text) for d in got] == [
        ("PostToolUse", DECISIONS.source, DECISIONS.text),
        ("UserPromptSubmit", DECISIONS.source, DECISIONS.text),
        ("UserPromptSubmit", RECALL.source, RECALL.text),
    ]
    assert got[0].at == clock.now
    assert got[2].at == clock.now - 5
    assert [d.session_id for d in store.delivered("s2")] == ["s2"]
    assert len(store.delivered("s1", limit=1)) == 1
    store.note_delivered("s1", "Stop", [])  # nothing delivered, nothing logged
    assert len(store.delivered("s1")) == 3


def test_only_the_latest_delivered_nudges_of_a_session_are_kept(store: SessionStore) -> None:
    for number in range(MAX_DELIVERED + 7):
        store.note_delivered("s1", f"event {number}", [RECALL])
    store.note_delivered("s2", "other", [RECALL])
    kept = store.delivered("s1", limit=MAX_DELIVERED * 2)
    assert len(kept) == MAX_DELIVERED
    assert kept[0].event == f"event {MAX_DELIVERED + 6}"
    assert kept[-1].event == "event 7"
    assert len(store.delivered("s2")) == 1
