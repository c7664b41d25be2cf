"""Isolated hooks run through pluggy: wrappers, tracing and the block-list hold on every call."""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from thatch.plugin import ISOLATED_HOOKS, Event, HarnessBase, Nudge, hookimpl, specs
from thatch.plugin.errors import PluginConflictError
from thatch.plugins import Plugins, PluginSelection, ThatchPluginManager, create_manager

PROMPT = Event(kind="prompt", harness="test", session_id="s1", prompt="hello")


class _Source:
    def __init__(self, text: str) -> None:
        self.text = text

    @hookimpl
    def thatch_nudges(self, event: Event, app: object) -> list[Nudge]:
        return [Nudge(source=self.text, text=self.text)]


class _Failing:
    @hookimpl
    def thatch_nudges(self, event: Event, app: object) -> Iterator[Nudge]:
        yield Nudge(source="half", text="half")
        raise RuntimeError("broken half-way")

    @hookimpl
    def thatch_ingest(self, event: Event, app: object) -> None:
        raise RuntimeError("observer broke")


class _Wrapper:
    @hookimpl(wrapper=True)
    def thatch_nudges(self, event: Event, app: object) -> Generator[None, Any, Any]:
        results = yield
        return [[Nudge(source="wrapped", text=f"wrapped {len(results)}")], *results]


class _Seen:
    def __init__(self) -> None:
        self.events: list[Event] = []

    @hookimpl
    def thatch_ingest(self, event: Event, app: object) -> None:
        self.events.append(event)


def _plugins(**named: object) -> Plugins:
    manager = ThatchPluginManager()
    for name, plugin in named.items():
        manager.register(plugin, name=name)
    return Plugins(manager)


def test_the_spec_states_which_hooks_are_isolated() -> None:
    assert {
        "thatch_ingest",
        "thatch_nudges",
        "thatch_tool_nudges",
        "thatch_daemon_started",
        "thatch_daemon_stopping",
        "thatch_session_panels",
    } == ISOLATED_HOOKS
    assert "Isolated." in (specs.thatch_nudges.__doc__ or "")


def test_a_failing_nudge_source_is_skipped_whole_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    plugins = _plugins(good=_Source("kept"), bad=_Failing())
    with caplog.at_level(logging.ERROR, logger="thatch"):
        nudges = plugins.nudges(PROMPT, app=None)  # type: ignore[arg-type]
    assert [nudge.text for nudge in nudges] == ["kept"]
    assert "plugin bad failed in thatch_nudges" in caplog.text


def test_a_failing_observer_does_not_stop_the_others() -> None:
    seen = _Seen()
    _plugins(bad=_Failing(), seen=seen).ingest(PROMPT, app=None)  # type: ignore[arg-type]
    assert seen.events == [PROMPT]


def test_a_wrapper_wraps_the_nudges() -> None:
    plugins = _plugins(first=_Source("one"), second=_Source("two"), wrapper=_Wrapper())
    texts = [nudge.text for nudge in plugins.nudges(PROMPT, app=None)]  # type: ignore[arg-type]
    assert texts[0] == "wrapped 2"
    assert sorted(texts[1:]) == ["one", "two"]


def test_one_plugin_alone_is_asked_through_pluggy_and_a_wrapper_still_sees_it() -> None:
    plugins = _plugins(first=_Source("one"), second=_Source("two"), wrapper=_Wrapper())
    texts = [n.text for n in plugins.nudges(PROMPT, app=None, only="second")]  # type: ignore[arg-type]
    assert texts == ["wrapped 1", "two"]


def test_asking_a_blocked_or_absent_plugin_alone_gives_nothing() -> None:
    plugins = _plugins(first=_Source("one"))
    assert plugins.nudges(PROMPT, app=None, only="decision-nudge") == []  # type: ignore[arg-type]


def test_tracing_shows_the_isolated_hooks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manager, _ = create_manager(PluginSelection(allowed=frozenset()), trace=True)
    manager.register(_Source("traced"), name="traced")
    plugins = Plugins(manager)
    plugins.ingest(PROMPT, app=None)  # type: ignore[arg-type]
    plugins.nudges(PROMPT, app=None)  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert "[thatch trace] thatch_ingest(event, app)" in err
    assert "[thatch trace] thatch_nudges(event, app) -> [" in err
    assert "traced" in err


class _Harness(HarnessBase):
    def __init__(self, name: str) -> None:
        self.name = name
        self.title = name.title()


class _OffersHarness:
    def __init__(self, name: str) -> None:
        self.name = name

    @hookimpl
    def thatch_harnesses(self) -> list[_Harness]:
        return [_Harness(self.name)]


def test_harnesses_are_found_by_name() -> None:
    plugins = _plugins(a=_OffersHarness("alpha"), b=_OffersHarness("beta"))
    assert sorted(plugins.harnesses()) == ["alpha", "beta"]
    found = plugins.harness("ALPHA")
    assert found is not None
    assert found.title == "Alpha"
    assert plugins.harness("gamma") is None


def test_two_plugins_claiming_one_harness_fail_loudly() -> None:
    plugins = _plugins(a=_OffersHarness("same"), b=_OffersHarness("Same"))
    with pytest.raises(PluginConflictError, match="the harness 'same'"):
        plugins.harnesses()
