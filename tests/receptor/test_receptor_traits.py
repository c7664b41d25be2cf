"""Event traits: the receptor calls a source only on the events it can speak about."""

from __future__ import annotations

from collections.abc import Iterable

from receptor_streams import (
    Stream,
    delegate,
    grep,
    implementation,
    read,
    recall,
    run,
    trial_and_error,
)
from thatch.plugin import Event, EventHistory, SignalReading, ToolCall
from thatch_receptor import traits
from thatch_receptor.actions import actions_of
from thatch_receptor.receptor import Receptor
from thatch_receptor.signals import EditRunFailures, builtin_sources
from thatch_receptor.traits import declared_traits, traits_of


def mixed_calls() -> list[ToolCall]:
    """A session that gives every built-in source something to say."""
    return [
        read("src/auth/token.py"),
        grep("token refresh"),
        recall("token refresh", found=0),
        grep("refresh session cookie"),
        grep("token refreshing"),
        delegate(),
        *implementation(4),
        *trial_and_error(4),
        read("src/auth/token.py"),
        read("lib/auth/token.py"),
        read("tests/auth/token.py"),
        run("pytest tests/test_auth.py"),
    ]


class Called:
    """A source that counts its calls and says nothing."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        self.calls += 1
        return []


class Searches(Called):
    """Declares, beside its read, that it speaks on searches only."""

    speaks_on = traits.SEARCH

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        return super().read(event, history)


class Everything(EditRunFailures):
    """Reads differently from the class it extends, without saying when it can speak."""

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        return [SignalReading(self.name, "frustration", 0.1, "always")]


class Generic:
    """Wraps a source so that the receptor sees no ``speaks_on`` and gets a generator."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.name = inner.name  # type: ignore[attr-defined]

    def read(self, event: Event, history: EventHistory) -> Iterable[SignalReading]:
        yield from self.inner.read(event, history)  # type: ignore[attr-defined]


def test_the_traits_of_actions() -> None:
    stream = Stream()

    def of(call: ToolCall) -> int:
        return traits_of(actions_of(stream.event(call)))

    assert of(run("pytest tests/test_auth.py", error="AssertionError")) == (
        traits.FAILED_RUN | traits.PATHS
    )
    assert of(grep("token")) == traits.CLEAN | traits.SEARCH | traits.PATHS
    assert of(recall("token", found=0)) == traits.CLEAN | traits.SEARCH | traits.EMPTY_RESULT
    assert of(delegate()) == traits.CLEAN | traits.DELEGATION
    assert of(read("src/a.py")) == traits.CLEAN | traits.PATHS
    assert traits_of(()) == 0


def test_a_source_is_not_called_on_events_it_cannot_speak_on() -> None:
    searches, plain = Searches("searches"), Called("plain")
    receptor = Receptor([searches, plain])
    for event in Stream().events([read(), grep("token"), run(), grep("refresh")]):
        receptor.feed(event)
    assert (searches.calls, plain.calls) == (2, 4)


def test_a_subclass_that_reads_differently_is_called_every_time() -> None:
    assert declared_traits(EditRunFailures()) == traits.FAILED_RUN
    assert declared_traits(Everything()) is None
    step = Receptor([Everything()]).feed(Stream().event(read()))
    assert [reading.detail for reading in step.readings] == ["always"]


def test_the_builtins_read_the_same_called_on_every_event() -> None:
    events = list(Stream().events(mixed_calls()))
    gated = Receptor()
    every = Receptor([Generic(source) for source in builtin_sources()])
    gated_steps = [gated.feed(event) for event in events]
    every_steps = [every.feed(event) for event in events]
    assert [step.readings for step in gated_steps] == [step.readings for step in every_steps]
    sources = {reading.source for step in gated_steps for reading in step.readings}
    assert sources == {source.name for source in builtin_sources()}
