"""thatch_receptor.testing: the ``receptor_replay`` fixture and its stream builder.

The fixture reaches these tests through pytest's plugin loading (the
``pytest11`` entry point of thatch-receptor), exactly as it reaches a third
party's tests; only the builder and the result types are imported.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from thatch.plugin import Event, EventHistory, SignalReading
from thatch_receptor import testing
from thatch_receptor.receptor import Settings
from thatch_receptor.signals import builtin_sources
from thatch_receptor.testing import (
    ReceptorReplay,
    Stream,
    implementation,
    read,
    trial_and_error,
)

BUILTIN = tuple(source.name for source in builtin_sources())


class Always:
    """A source that reads one axis at ``value`` on every event."""

    def __init__(self, name: str = "always", axis: str = "frustration", value: float = 1.0) -> None:
        self.name = name
        self.axis = axis
        self.value = value

    def read(self, event: Event, history: EventHistory) -> Iterator[SignalReading]:
        yield SignalReading(self.name, self.axis, self.value, "always")  # type: ignore[arg-type]


class FakePlugin:
    """An installed plugin's entry point, as importlib.metadata gives it."""

    def __init__(self, name: str, *sources: Any, value: str = "their_pkg.plugin") -> None:
        self.name, self.value, self.group = name, value, "thatch"
        self._module = type("Module", (), {"thatch_receptor_signals": lambda: list(sources)})

    def load(self) -> Any:
        return self._module


def installed(monkeypatch: pytest.MonkeyPatch, *plugins: FakePlugin) -> None:
    """Make ``plugins`` the thatch plugins installed (the receptor's own among them)."""
    receptor = FakePlugin("receptor", value="thatch_receptor.plugin")
    found = [receptor, *plugins]
    monkeypatch.setattr(testing.metadata, "entry_points", lambda group: found)


def test_pytest_loads_the_fixture_from_the_entry_point(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.has_plugin("thatch_receptor.testing")


def test_trial_and_error_fires_frustration_with_its_step(
    receptor_replay: ReceptorReplay,
) -> None:
    replay = receptor_replay(trial_and_error(6))
    assert "frustration" in replay.fired_axes()
    assert "trial_error" in replay.patterns()
    first = replay.first("frustration")
    assert first is not None
    assert first.step is replay.steps[first.index]
    assert first.composition.event_id == f"{testing.SESSION}-{first.index + 1}"
    assert "edit-run-failures" in first.sources
    assert replay.peak("frustration") >= first.step.thresholds["frustration"]


def test_an_implementation_chain_holds_flow_and_fires_nothing(
    receptor_replay: ReceptorReplay,
) -> None:
    replay = receptor_replay(implementation(6))
    assert replay.firings == ()
    assert replay.fired_axes() == frozenset()
    assert replay.first("frustration") is None
    assert replay.steps[-1].in_flow
    assert replay.peak("flow") >= 0.6


def test_an_empty_stream_replays_to_nothing(receptor_replay: ReceptorReplay) -> None:
    replay = receptor_replay([])
    assert (replay.steps, replay.firings, replay.patterns()) == ((), (), ())
    assert replay.peak("frustration") == 0.0


def test_explicit_sources_are_the_only_ones_read(receptor_replay: ReceptorReplay) -> None:
    replay = receptor_replay([read()], sources=[Always()])
    assert replay.sources == ("always",)
    (firing,) = replay.firings
    assert (firing.index, firing.fired, firing.sources) == (0, {"frustration"}, {"always"})
    assert receptor_replay([read()], sources=[]).firings == ()


def test_events_pass_as_they_are_and_calls_become_events(
    receptor_replay: ReceptorReplay,
) -> None:
    own = Stream(session_id="mine").event(read())
    replay = receptor_replay([own, read()], sources=[])
    assert [step.session_id for step in replay.steps] == ["mine", testing.SESSION]
    assert replay.steps[0].event_id == own.event_id


def test_settings_reach_the_receptor(receptor_replay: ReceptorReplay) -> None:
    calls = trial_and_error(6)
    muted = Settings(gains={**Settings().gains, "frustration": 0.0})
    assert receptor_replay(calls).firings
    assert not receptor_replay(calls, settings=muted).firings


def test_by_default_the_built_in_sources_come_first_then_each_plugin_s(
    monkeypatch: pytest.MonkeyPatch, receptor_replay: ReceptorReplay
) -> None:
    installed(
        monkeypatch,
        FakePlugin("zeta", Always("z")),
        FakePlugin("alpha", Always("a1"), Always("a2")),
        FakePlugin("harness"),
    )
    assert receptor_replay([read()]).sources == (*BUILTIN, "a1", "a2", "z")
    assert receptor_replay([read()], without=("alpha",)).sources == (*BUILTIN, "z")
    assert receptor_replay([read()], without=("receptor", "zeta")).sources == ("a1", "a2")


def test_a_plugin_s_source_changes_the_replay(
    monkeypatch: pytest.MonkeyPatch, receptor_replay: ReceptorReplay
) -> None:
    installed(monkeypatch, FakePlugin("loud", Always("loud", axis="seeking")))
    assert "seeking" in receptor_replay([read()]).fired_axes()
    assert "seeking" not in receptor_replay([read()], without=("loud",)).fired_axes()


def test_a_plugin_without_receptor_signals_offers_none(
    monkeypatch: pytest.MonkeyPatch, receptor_replay: ReceptorReplay
) -> None:
    silent = FakePlugin("silent")
    silent._module = type("Module", (), {})
    installed(monkeypatch, silent)
    assert receptor_replay([read()]).sources == BUILTIN


def test_two_plugins_offering_one_source_name_both(
    monkeypatch: pytest.MonkeyPatch, receptor_replay: ReceptorReplay
) -> None:
    installed(monkeypatch, FakePlugin("one", Always("same")), FakePlugin("two", Always("same")))
    with pytest.raises(ValueError, match=r"plugins 'one' and 'two' both provide .* 'same'"):
        receptor_replay([read()])
    assert receptor_replay([read()], without=("two",)).sources[-1] == "same"


def test_leaving_out_a_plugin_that_is_not_installed_names_those_that_are(
    monkeypatch: pytest.MonkeyPatch, receptor_replay: ReceptorReplay
) -> None:
    installed(monkeypatch, FakePlugin("mine"))
    with pytest.raises(ValueError, match=r"without= names nope, .* installed: mine, receptor"):
        receptor_replay([read()], without=("nope",))


def test_explicit_sources_and_without_together_are_refused(
    receptor_replay: ReceptorReplay,
) -> None:
    with pytest.raises(TypeError, match="not both"):
        receptor_replay([read()], sources=[Always()], without=("receptor",))


def test_the_real_installed_plugins_start_with_the_built_in_sources(
    receptor_replay: ReceptorReplay,
) -> None:
    sources = receptor_replay.installed_sources()
    assert tuple(source.name for source in sources[: len(BUILTIN)]) == BUILTIN
    alone = receptor_replay.installed_sources(without=("receptor",))
    assert not {source.name for source in alone} & set(BUILTIN)


def test_importing_the_plugin_is_cheap() -> None:
    # pytest imports it in every run: the receptor, plugins and models load with a replay.
    heavy = ("numpy", "fastembed", "thatch_receptor.receptor", "thatch_receptor.signals")
    code = (
        "import sys, thatch_receptor.testing\n"
        f"print([name for name in {heavy!r} if name in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
