"""Receptor.feed: scripted streams in, firings, compositions and deep work out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from receptor_streams import (
    START,
    Stream,
    implementation,
    read,
    run,
    trial_and_error,
)
from thatch.plugin import AXES, WINDOW_SECONDS, Event, EventHistory, SignalReading, delta_key
from thatch_receptor.receptor import Receptor, Settings, Step
from thatch_receptor.signals import builtin_sources


def feed_all(receptor: Receptor, events: list[Event]) -> list[Step]:
    return [receptor.feed(event) for event in events]


def test_trial_and_error_inside_five_minutes_fires_frustration() -> None:
    stream = Stream(step=20.0)
    events = list(stream.events([read(), read(), *trial_and_error(5)]))
    assert events[-1].received_at - events[0].received_at < WINDOW_SECONDS["short"]  # type: ignore[operator]
    steps = feed_all(Receptor(), events)
    firings = [c for step in steps for c in step.compositions if "frustration" in c.fired]
    assert firings, "frustration never fired"
    first = firings[0]
    assert first.pattern == "trial_error"
    assert not first.in_flow
    assert first.signals[0].source == "edit-run-failures"
    fired_at = _step_of(steps, first)
    assert (first.event_id, first.at) == (fired_at.event_id, fired_at.at)
    assert set(first.axes) == set(AXES)
    assert delta_key("medium", "short", "frustration") in first.deltas
    assert "AssertionError: token expired" in steps[-1].texts[0]


def _step_of(steps: list[Step], composition: object) -> Step:
    return next(step for step in steps if composition in step.compositions)


def test_a_steady_implementation_chain_holds_flow() -> None:
    steps = feed_all(Receptor(), list(Stream().events(implementation(6))))
    assert steps[-1].in_flow
    assert all(step.in_flow for step in steps[6:])
    assert not any(step.held for step in steps)


class Forced:
    """A source that reads one axis at 1 from a given event on."""

    name = "forced"

    def __init__(self, axis: str, after: int) -> None:
        self.axis = axis
        self.after = after
        self.seen = 0

    def read(self, event: Event, history: EventHistory) -> Iterator[SignalReading]:
        self.seen += 1
        if self.seen > self.after:
            yield SignalReading(self.name, self.axis, 1.0, "forced")  # type: ignore[arg-type]


def test_compositions_during_deep_work_carry_in_flow() -> None:
    """Fire-through: B still composes during deep work, marked for the interpretation."""
    receptor = Receptor([*builtin_sources(), Forced("seeking", after=12)])
    steps = feed_all(receptor, list(Stream().events(implementation(6))))
    (composition,) = [c for step in steps for c in step.compositions]
    assert composition.in_flow
    assert "seeking" in composition.fired
    assert "forced" in {signal.source for signal in composition.signals}


def test_a_repeated_event_advances_nothing() -> None:
    receptor = Receptor()
    stream = Stream()
    events = list(stream.events(trial_and_error(4)))
    once = feed_all(receptor, events[:5])
    for _ in range(3):
        assert receptor.feed(events[4]) is once[-1]
        assert receptor.last(events[4].session_id) is once[-1]
    fresh = Receptor()
    feed_all(fresh, events[:5])
    assert fresh.feed(events[5]).axes == receptor.feed(events[5]).axes


def test_release_after_three_sub_threshold_events_through_the_receptor() -> None:
    """Held while under its threshold for 2 events, released on the 3rd, however often read."""
    settings = Settings(half_lives={"isolation": 30.0}, release_after=3)
    receptor = Receptor([Forced("isolation", after=0)], settings)
    source = receptor.sources[0]
    assert isinstance(source, Forced)
    stream = Stream()
    assert receptor.feed(stream.event(read())).fired == {"isolation"}
    source.after = 10**9  # silent from now on: the value decays
    steps = []
    for _ in range(12):
        steps.append(receptor.feed(stream.event(read())))
        for _ in range(4):
            receptor.last(stream.session_id)
    under = [step.axes["isolation"] <= step.thresholds["isolation"] for step in steps]
    first = under.index(True)
    assert all(under[first:]), "the value kept decaying"
    held = ["isolation" in step.held for step in steps]
    assert held[: first + 2] == [True] * (first + 2)
    assert not any(held[first + 2 :])


def test_events_without_time_are_a_nominal_step_apart() -> None:
    receptor = Receptor(settings=Settings(step_seconds=15.0))
    stream = Stream(step=0.0)
    times = [receptor.feed(event).at for event in stream.events([read()] * 4)]
    assert times == [0.0, 15.0, 30.0, 45.0]


def test_sessions_are_apart() -> None:
    receptor = Receptor()
    one, two = Stream(session_id="one"), Stream(session_id="two")
    feed_all(receptor, list(one.events(trial_and_error(5))))
    step = receptor.feed(two.event(read()))
    assert step.axes["frustration"] == 0.0
    assert receptor.sessions == ("one", "two")
    receptor.forget("one")
    assert receptor.last("one") is None


def test_a_failing_source_is_left_out(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        name = "broken"

        def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
            raise RuntimeError("boom")

    step = Receptor([Broken()]).feed(Stream().event(run()))
    assert step.readings == ()
    assert "broken" in caplog.text


def test_a_source_failing_on_every_event_logs_one_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken:
        name = "broken"

        def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
            raise RuntimeError("boom")

    receptor = Receptor([Broken(), Forced("flow", 0)])
    steps = feed_all(receptor, list(Stream().events([run()] * 5)))
    # The other source reads every event: one bad source breaks nothing else.
    assert all([r.source for r in step.readings] == ["forced"] for step in steps)
    tracebacks = [record for record in caplog.records if record.exc_info]
    assert len(tracebacks) == 1
    assert "'broken'" in tracebacks[0].getMessage()
    assert len(caplog.records) == 1  # the rest are counted, within the minute: no line yet
    assert receptor.failures.count("broken") == 5


def test_a_source_may_return_none_for_nothing(caplog: pytest.LogCaptureFixture) -> None:
    class Quiet:
        name = "quiet"

        def read(self, event: Event, history: EventHistory) -> None:
            return None

    step = Receptor([Quiet(), Forced("flow", 0)]).feed(Stream().event(run()))
    assert [reading.source for reading in step.readings] == ["forced"]
    assert "quiet" not in caplog.text


def test_two_sources_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="'forced'"):
        Receptor([Forced("flow", 0), Forced("flow", 0)])


def test_times_start_at_the_first_event() -> None:
    step = Receptor().feed(Stream().event(read()))
    assert step.at == START
