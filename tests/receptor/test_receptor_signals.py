"""The built-in signal sources and the session history they read."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import thatch_receptor.plugin
from receptor_streams import START, Stream, delegate, edit, grep, read, recall, run
from thatch.plugin import Event, EventHistory, SignalReading, SignalSource, ToolCall
from thatch.testing import plugins_with
from thatch_receptor.history import SessionHistory
from thatch_receptor.signals import (
    Delegation,
    EditRunFailures,
    EmptySearch,
    Fatigue,
    ImplementationChain,
    PathHeatmap,
    RephrasedSearch,
    SearchDiversity,
    builtin_sources,
)


def readings(
    source: SignalSource, calls: Sequence[ToolCall], *, step: float = 20.0
) -> list[SignalReading]:
    """The source's readings of the last call, after the others went before it."""
    history = SessionHistory("s")
    stream = Stream(step=step)
    last: list[SignalReading] = []
    for event in stream.events(calls):
        history.add(event)
        last = list(source.read(event, history))
    return last


def test_the_builtin_sources_are_signal_sources_with_unique_names() -> None:
    sources = builtin_sources()
    assert all(isinstance(source, SignalSource) for source in sources)
    assert len({source.name for source in sources}) == len(sources)


def test_history_windows_reach_back_five_and_thirty_minutes() -> None:
    history = SessionHistory("s")
    stream = Stream(step=60.0)
    events = list(stream.events([read()] * 40))
    for event in events:
        history.add(event)
    assert isinstance(history, EventHistory)
    assert history.now == events[-1].received_at
    assert list(history.window("short")) == events[-6:]
    assert list(history.window("medium")) == events[-31:]
    assert list(history.window("session")) == events
    assert history.started_at == START


def test_history_places_untimed_events_a_step_after_the_last() -> None:
    history = SessionHistory("s", step_seconds=7.0)
    timed, untimed = Stream(step=20.0), Stream(step=0.0)
    assert history.add(timed.event(read())) == START
    assert history.add(untimed.event(read())) == START + 7.0
    assert history.add(Stream(at=START - 100).event(read())) == START + 7.0, "never backwards"


def test_history_keeps_its_last_events() -> None:
    history = SessionHistory("s", max_events=10)
    for event in Stream().events([read()] * 25):
        history.add(event)
    assert len(history.window("session")) <= 10
    assert history.count == 25


def test_a_failing_run_reads_frustration_more_when_alternating() -> None:
    (alone,) = readings(EditRunFailures(), [run(error="E boom")])
    (streak,) = readings(
        EditRunFailures(), [edit(), run(error="E a"), edit(), run(error="E b")] * 2
    )
    assert alone.axis == streak.axis == "frustration"
    assert alone.value == pytest.approx(0.2)
    assert streak.value > 0.8
    assert readings(EditRunFailures(), [edit(), run()]) == []


def test_a_query_in_other_words_reads_frustration_without_embeddings() -> None:
    (reading,) = readings(
        RephrasedSearch(), [grep("token refresh"), grep("refreshing the auth session")]
    )
    assert reading.axis == "frustration"
    assert readings(RephrasedSearch(), [grep("token refresh"), grep("token refresh")]) == []
    assert readings(RephrasedSearch(), [grep("token refresh"), grep("ledger account")]) == []


def test_a_query_in_other_words_reads_frustration_with_embeddings() -> None:
    meanings = {
        "token refresh": (1.0, 0.0),
        "renew expired credentials": (0.96, 0.28),
        "css": (0.0, 1.0),
    }
    source = RephrasedSearch(embed=lambda text: meanings[text])
    assert readings(source, [grep("token refresh"), grep("renew expired credentials")])
    assert readings(source, [grep("token refresh"), grep("css")]) == []


def test_with_embeddings_a_query_sharing_some_words_still_reads_frustration() -> None:
    # As the daemon runs it: the words rule holds beside the meaning rule, so a
    # replay without the model and the daemon read the same searches.
    source = RephrasedSearch(embed=lambda text: (1.0, 0.0) if "fromstring" in text else (0.0, 1.0))
    (reading,) = readings(source, [grep("def fromstring"), grep("def _pad")])
    assert reading.axis == "frustration"
    assert readings(source, [grep("def fromstring"), grep("def fromstring")]) == []
    assert readings(source, [grep("def fromstring"), grep("ledger account")]) == []


def test_an_empty_recall_reads_seeking_more_than_an_empty_search() -> None:
    (empty_recall,) = readings(EmptySearch(), [recall("refund ledger", found=0)])
    (empty_search,) = readings(EmptySearch(), [grep("refund", found=0)])
    assert empty_recall.axis == "seeking"
    assert empty_recall.value > empty_search.value
    assert readings(EmptySearch(), [recall("refund ledger", found=2)]) == []


def test_diverse_searches_read_uncertainty_converging_ones_less() -> None:
    (diverse,) = readings(
        SearchDiversity(), [grep(q) for q in ("auth", "ledger", "css grid", "cache ttl")]
    )
    (converging,) = readings(
        SearchDiversity(),
        [grep(q) for q in ("token refresh", "token refresh expiry", "token refresh", "token")],
    )
    assert diverse.axis == "uncertainty"
    assert diverse.value > converging.value


def test_fatigue_grows_with_session_hours() -> None:
    (early,) = readings(Fatigue(), [read()] * 3)
    (late,) = readings(Fatigue(), [read()] * 3, step=3600.0)
    assert late.value > early.value


@pytest.mark.parametrize("step", [1.0, 20.0, 179.0, 180.0, 181.0, 359.9, 3600.0])
def test_fatigue_s_detail_is_the_hours_formatted_across_their_tenths(step: float) -> None:
    # The detail is formatted again only when the hours leave their tenth: at every
    # event it must still read as the hours formatted afresh, boundaries included.
    fatigue, history = Fatigue(), SessionHistory("s")
    for event in Stream(step=step).events([read()] * 40):
        history.add(event)
        (reading,) = fatigue.read(event, history)
        hours = (history.now - history.started_at) / 3600
        assert reading.detail == f"{hours:.1f} h, {history.size('short')} events in 5 min"


def test_a_passing_chain_reads_flow_a_failure_breaks_it() -> None:
    (chain,) = readings(ImplementationChain(), [read(), edit(), run(), read(), edit(), run()])
    assert chain.axis == "flow"
    assert chain.value > 0.8
    assert readings(ImplementationChain(), [edit(), run(), edit(), run(error="E x")]) == []


def test_delegating_reads_isolation() -> None:
    (reading,) = readings(Delegation(), [read(), delegate(), delegate()])
    assert reading.axis == "isolation"
    assert readings(Delegation(), [delegate(), read()]) == []


def test_a_hot_folder_shift_reads_uncertainty() -> None:
    settled = [read(f"src/auth/f{i}.py") for i in range(10)]
    # 15 events of 20 s fill the short window; the medium window remembers the settled folder.
    calls = [*settled, *[run("true")] * 15, read("web/css/site.css")]
    found = [r for r in readings(PathHeatmap(), calls) if r.axis == "uncertainty"]
    assert found
    assert "web/css" in found[0].detail


def test_a_path_never_touched_reads_seeking_after_warm_up() -> None:
    calls = [read("src/a.py")] * 6 + [read("docs/unknown.md")]
    assert [r.axis for r in readings(PathHeatmap(), calls)] == ["seeking"]
    assert readings(PathHeatmap(), [read("docs/unknown.md")]) == []


def test_one_file_name_under_many_folders_reads_frustration() -> None:
    calls = [read("a/token.py"), read("b/token.py"), read("c/token.py")]
    assert "frustration" in {r.axis for r in readings(PathHeatmap(), calls)}


def test_sources_read_any_event_history() -> None:
    """A history that is not the receptor's own still works (the actions are worked out again)."""

    class Plain:
        session_id = "s"

        def __init__(self, events: list[Event]) -> None:
            self.events = events
            self.now = events[-1].received_at

        def window(self, window: str) -> list[Event]:
            return self.events

    events = list(Stream().events([edit(), run(error="E x"), edit(), run(error="E y")]))
    (reading,) = EditRunFailures().read(events[-1], Plain(events))  # type: ignore[arg-type]
    assert reading.value > 0.2


def test_the_plugin_offers_the_builtin_sources() -> None:
    offered = plugins_with(thatch_receptor.plugin).receptor_signals()
    assert sorted(offered) == sorted(source.name for source in builtin_sources())


def test_converging_on_one_path_with_passing_runs_reads_flow() -> None:
    calls = [read("src/b.py"), read("src/c.py"), run("true"), read("src/d.py")]
    calls += [edit("src/a.py"), read("src/a.py"), edit("src/a.py")]
    (reading,) = readings(PathHeatmap(), calls)
    assert (reading.axis, reading.value) == ("flow", 0.25)
    assert reading.detail == "50% of the last 5 minutes' path accesses on src/a.py"


def test_convergence_speaks_once_when_it_begins() -> None:
    calls = [read("src/b.py"), read("src/c.py"), read("src/d.py"), *[edit("src/a.py")] * 4]
    assert readings(PathHeatmap(), calls[:5]) == []  # too few accesses yet
    assert [r.axis for r in readings(PathHeatmap(), calls[:6])] == ["flow"]
    assert readings(PathHeatmap(), calls) == []  # converged already


def test_converging_while_runs_fail_is_frustration_only_when_turned_on() -> None:
    calls = [read("src/b.py"), run("pytest", error="E x"), read("src/c.py")]
    calls += [run("pytest", error="E y"), read("src/d.py"), *[edit("src/a.py")] * 3]
    assert readings(PathHeatmap(), calls) == []
    (reading,) = readings(PathHeatmap(converged_stuck=0.3), calls)
    assert (reading.axis, reading.value) == ("frustration", 0.3)


def test_history_gives_each_window_its_paths_and_size() -> None:
    history = SessionHistory("s")
    for event in Stream(step=200.0).events([read("a.py"), read("b.py"), read("c.py")]):
        history.add(event)
    assert list(history.paths("session")) == ["a.py", "b.py", "c.py"]
    assert list(history.paths("short")) == ["b.py", "c.py"]  # 5 minutes reach 200 s back, not 400
    assert (history.size("short"), history.size("session")) == (2, 3)
    assert list(SessionHistory("empty").paths("short")) == []


def test_history_windows_hold_after_trimming() -> None:
    history = SessionHistory("s", max_events=10)
    for event in Stream().events([read(f"f{i}.py") for i in range(25)]):
        history.add(event)
    kept = [action.paths[0] for action in history.actions("session")]
    assert list(history.paths("session")) == kept
    assert kept[-1] == "f24.py"
    assert len(kept) == len(history.window("session"))
