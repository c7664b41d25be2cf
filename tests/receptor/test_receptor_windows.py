"""The windows a SessionHistory keeps up to date, against the same counts worked out afresh."""

from __future__ import annotations

import itertools

import pytest
from receptor_streams import Stream, delegate, edit, grep, read, recall, run
from thatch.plugin import ToolCall
from thatch_receptor.history import KeyTally, SessionHistory, WindowTally, tally_of
from thatch_receptor.patterns import pattern_of, pattern_of_tally

#: A mixed session: edits and runs alternating with failures, searches, scattered names.
CALLS: list[ToolCall] = [
    read("src/a/token.py"),
    grep("refresh token"),
    edit("src/a/token.py"),
    run(error="E AssertionError"),
    read("src/b/token.py"),
    edit("src/b/token.py"),
    run(),
    recall("token refresh"),
    delegate(),
    read("docs/token.md"),
    grep("expired", path="src/c/"),
    edit("src/c/token.py"),
    run(error="E KeyError"),
    edit("src/c/token.py"),
    run(),
    run(),
    read("src/a/token.py"),
]


def counts(tally: WindowTally) -> dict[str, object]:
    """Everything a tally tells, in plain values."""
    return {
        "actions": tally.actions,
        "looked": tally.looked,
        "edited": tally.edited,
        "ran": tally.ran,
        "failed_runs": tally.failed_runs,
        "delegated": tally.delegated,
        "switches": tally.switches,
        "queries": list(tally.queries),
        "chain": (tally.chain, tally.chain_edits, tally.chain_runs),
        "paths": keys(tally.paths),
        "folders": keys(tally.folders),
        "names": {name: dict(folders) for name, folders in tally.names.items()},
        "pattern": pattern_of_tally(tally),
    }


def keys(tally: KeyTally) -> tuple[dict[str, int], int, str | None, int]:
    return (
        tally.counts(),
        tally.total,
        tally.hottest(),
        tally.top(),
    )


@pytest.mark.parametrize(
    ("step", "max_events"),
    [(20.0, 10_000), (45.0, 10_000), (130.0, 10_000), (45.0, 7), (20.0, 12)],
)
def test_the_kept_windows_match_their_events_counted_afresh(step: float, max_events: int) -> None:
    history = SessionHistory("s", max_events=max_events)
    calls = list(itertools.islice(itertools.cycle(CALLS), 120))
    for event in Stream(step=step).events(calls):
        history.add(event)
        short = history.window("short")
        assert counts(history.short) == counts(tally_of(short))
        medium = history.window("medium")
        earlier = tally_of(medium[: len(medium) - len(short)]).folders
        assert keys(history.earlier_folders) == keys(earlier)
        assert pattern_of_tally(history.short) == pattern_of(history.actions("short"))
        assert list(history.current_paths()) == [
            path for action in history.current_actions() for path in action.paths
        ]


def test_the_hottest_key_is_the_first_in_the_window_of_equals() -> None:
    tally = KeyTally()
    tally.add(["a", "b", "a", "c"])
    assert (tally.hottest(), tally.top()) == ("a", 2)
    tally.remove(["a"])  # b, a, c: one each, b first now
    assert (tally.hottest(), tally.top(), tally.total) == ("b", 1, 3)
    tally.add(["c"])  # b, a, c, c
    assert tally.hottest() == "c"
    assert tally.hottest(minus=["c"]) == "b", "the window before the last key"
    assert tally.top(minus=["c"]) == 1
    assert KeyTally().hottest() is None
    assert KeyTally().top() == 0


def test_the_chain_is_the_windows_last_actions_without_a_failure() -> None:
    events = Stream().events([edit(), run(error="E x"), edit(), run(), read()])
    tally = tally_of(events)
    assert (tally.chain, tally.chain_edits, tally.chain_runs) == (3, 1, 1)
    assert (tally.switches, tally.ran, tally.failed_runs) == (3, 2, 1)
    assert tally.paths.count("src/auth/token.py") == 3  # the runs name no path
