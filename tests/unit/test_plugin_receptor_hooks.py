"""Receptor parts from plugins (``thatch_receptor_signals``, ``thatch_receptor_rules``).

The receptor plugin gives them their behaviour; core collects them by name,
refuses two of one name, and the contract's types carry an event through a
source and a composition through a rule.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Sequence

import attrs
import pytest
from thatch.plugin import (
    AXES,
    DELIVERY_MODES,
    Event,
    EventHistory,
    FiringComposition,
    Interpretation,
    InterpretationRule,
    SignalReading,
    SignalSource,
    ToolCall,
    Window,
    hookimpl,
)
from thatch.plugin.errors import PluginConflictError
from thatch.plugin.receptor import PATTERNS, WINDOW_SECONDS, WINDOWS, delta_key
from thatch.testing import plugins_with


class FailedRuns:
    """Frustration from failing tool calls in the short window."""

    name = "failed-runs"

    def read(self, event: Event, history: EventHistory) -> Iterable[SignalReading]:
        failures = sum(call.failed for seen in history.window("short") for call in seen.tool_calls)
        if failures:
            yield SignalReading(
                self.name,
                "frustration",
                min(1.0, failures / 3),
                f"{failures} failed calls in 5 min",
            )


class ErrorContext:
    """The issue's first default: frustration + seeking + trial_error → error-context knowledge."""

    name = "error-context"

    def interpret(self, composition: FiringComposition) -> Interpretation | None:
        if {"frustration", "seeking"} <= composition.fired and composition.pattern == "trial_error":
            mode = "passive" if composition.in_flow else "active"
            return Interpretation(self.name, "error_context", mode, "the same test keeps failing")
        return None


@attrs.frozen
class History:
    """The session's events so far (every window the same here)."""

    session_id: str
    now: float
    events: tuple[Event, ...]

    def window(self, window: Window) -> Sequence[Event]:
        return self.events


def offering(name: str, *, sources: Iterable[object] = (), rules: Iterable[object] = ()) -> object:
    """A plugin module ``name`` whose parts' classes live in it, as a real plugin's do."""
    module = types.ModuleType(name)
    made_sources = [_owned(part, name) for part in sources]
    made_rules = [_owned(part, name) for part in rules]

    @hookimpl
    def thatch_receptor_signals() -> Iterable[object]:
        return made_sources

    @hookimpl
    def thatch_receptor_rules() -> Iterable[object]:
        return made_rules

    module.thatch_receptor_signals = thatch_receptor_signals  # type: ignore[attr-defined]
    module.thatch_receptor_rules = thatch_receptor_rules  # type: ignore[attr-defined]
    return module


def _owned(part: object, module: str) -> object:
    """``part`` as an instance of a subclass defined in ``module``."""
    return type(type(part).__name__, (type(part),), {"__module__": module})()


def test_sources_and_rules_are_collected_by_name_from_every_plugin() -> None:
    class Other(FailedRuns):
        name = "other-source"

    plugins = plugins_with(
        offering("receptor", sources=[FailedRuns()], rules=[ErrorContext()]),
        offering("third_party", sources=[Other()]),
    )
    sources = plugins.receptor_signals()
    assert list(sources) == ["failed-runs", "other-source"]
    assert all(isinstance(source, SignalSource) for source in sources.values())
    rules = plugins.receptor_rules()
    assert list(rules) == ["error-context"]
    assert isinstance(rules["error-context"], InterpretationRule)


@pytest.mark.parametrize("part", ["sources", "rules"])
def test_two_plugins_offering_one_name_are_refused_naming_both(part: str) -> None:
    item = FailedRuns() if part == "sources" else ErrorContext()
    plugins = plugins_with(
        offering("first", **{part: [item]}), offering("second", **{part: [item]})
    )
    collect = plugins.receptor_signals if part == "sources" else plugins.receptor_rules
    with pytest.raises(PluginConflictError) as raised:
        collect()
    # pluggy asks the plugin registered last first.
    assert "plugins 'first' and 'second' both provide the receptor" in str(raised.value)
    assert f"'{item.name}'" in str(raised.value)


def tool_event(failed: bool, at: float) -> Event:
    call = ToolCall(
        "Bash", {"command": "pytest"}, failed=failed, error="exit 1" if failed else None
    )
    return Event("tool_use", "claude", "s1", tool_calls=(call,), received_at=at)


def test_an_event_goes_through_a_source_and_its_composition_through_a_rule() -> None:
    events = tuple(tool_event(failed=True, at=1000.0 + 30 * i) for i in range(3))
    history = History("s1", events[-1].received_at, events)
    assert isinstance(history, EventHistory)
    (reading,) = FailedRuns().read(events[-1], history)
    assert reading == SignalReading("failed-runs", "frustration", 1.0, "3 failed calls in 5 min")

    composition = FiringComposition(
        session_id="s1",
        axes={"frustration": 1.0, "seeking": 0.7},
        fired=frozenset({"frustration", "seeking"}),
        signals=(reading,),
        deltas={delta_key("medium", "short", "frustration"): 0.6},
        pattern="trial_error",
        event_id="e3",
        at=history.now,
    )
    assert ErrorContext().interpret(composition) == Interpretation(
        "error-context", "error_context", "active", "the same test keeps failing"
    )
    # Deep work: never active.
    quiet = ErrorContext().interpret(attrs.evolve(composition, in_flow=True))
    assert quiet is not None
    assert quiet.mode == "passive"
    assert ErrorContext().interpret(attrs.evolve(composition, pattern="exploring")) is None


def test_the_types_refuse_values_outside_their_range() -> None:
    with pytest.raises(ValueError, match=r"value must be between 0 and 1, not 1\.5"):
        SignalReading("s", "frustration", 1.5)
    with pytest.raises(ValueError, match="axes: fatigue not between 0 and 1"):
        FiringComposition("s1", {"fatigue": 2.0}, frozenset(), (), {}, "wandering")
    with pytest.raises(ValueError, match=r"score must be between 0 and 1, not -0\.1"):
        Interpretation("r", "break", "active", "rest", score=-0.1)


def test_the_shape_matches_the_receptor_design() -> None:
    assert AXES == ("frustration", "seeking", "uncertainty", "fatigue", "isolation", "flow")
    assert DELIVERY_MODES == ("drop", "silent", "passive", "notification", "active")
    assert WINDOWS == ("short", "medium", "session")
    assert WINDOW_SECONDS == {"short": 300.0, "medium": 1800.0, "session": None}
    assert {"trial_error", "wandering", "exploring", "implementation"} <= set(PATTERNS)
    assert delta_key("medium", "short", "frustration") == "medium-short:frustration"
