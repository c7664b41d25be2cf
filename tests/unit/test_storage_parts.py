"""Core opens each storage part through its own hook, lazily, and closes each object once."""

from __future__ import annotations

from pathlib import Path

import pytest
from thatch.api import Thatch
from thatch.plugin import Config, PluginMissingError, hookimpl
from thatch.testing import plugins_with


class Backend:
    """Stands in for a storage object: reports set problems and counts its closes."""

    def __init__(self, *problems: str) -> None:
        self.problems = list(problems)
        self.closes = 0

    def integrity_problems(self) -> list[str]:
        return self.problems

    def close(self) -> None:
        self.closes += 1


class Parts:
    """A plugin that hands out the given object for each part and counts the hook calls."""

    def __init__(self, memories: Backend, decisions: Backend, predictions: Backend) -> None:
        self.objects = {"memories": memories, "decisions": decisions, "predictions": predictions}
        self.calls: list[str] = []

    def _part(self, part: str) -> Backend:
        self.calls.append(part)
        return self.objects[part]

    @hookimpl
    def thatch_memory_storage(self, config: Config) -> Backend:
        return self._part("memories")

    @hookimpl
    def thatch_decision_storage(self, config: Config) -> Backend:
        return self._part("decisions")

    @hookimpl
    def thatch_prediction_storage(self, config: Config) -> Backend:
        return self._part("predictions")


def _thatch(home: Path, plugin: object) -> Thatch:
    return Thatch(Config.load(home, environ={}), plugins_with(plugin), home)


def test_a_part_opens_on_first_use_and_once(tmp_path: Path) -> None:
    shared, log = Backend(), Backend()
    parts = Parts(shared, shared, log)
    th = _thatch(tmp_path, parts)
    assert parts.calls == []
    assert th.memory_storage is shared
    assert th.memory_storage is shared
    assert parts.calls == ["memories"]
    assert th.view(tmp_path / "elsewhere").decision_storage is shared
    assert th.decision_storage is shared
    assert parts.calls == ["memories", "decisions"]


def test_each_distinct_object_is_closed_once_and_views_close_nothing(tmp_path: Path) -> None:
    shared, log = Backend(), Backend()
    th = _thatch(tmp_path, Parts(shared, shared, log))
    view = th.view(tmp_path / "elsewhere")
    assert (view.memory_storage, view.decision_storage, view.prediction_storage) == (
        shared,
        shared,
        log,
    )
    view.close()
    assert (shared.closes, log.closes) == (0, 0)
    th.close()
    assert (shared.closes, log.closes) == (1, 1)
    th.close()
    assert (shared.closes, log.closes) == (1, 1)


def test_integrity_problems_of_every_part_named_by_part_when_apart(tmp_path: Path) -> None:
    shared, log = Backend("a bad page"), Backend("a torn row")
    assert _thatch(tmp_path, Parts(shared, shared, log)).integrity_problems() == [
        "memories and decisions: a bad page",
        "predictions: a torn row",
    ]
    one = Backend("a bad page")
    assert _thatch(tmp_path, Parts(one, one, one)).integrity_problems() == ["a bad page"]


def test_a_part_no_plugin_keeps_is_named_with_its_backend(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text('[storage]\npredictions = "team"\n')

    class MemoriesOnly:
        @hookimpl
        def thatch_memory_storage(self, config: Config) -> Backend:
            return Backend()

    th = _thatch(tmp_path, MemoriesOnly())
    assert isinstance(th.memory_storage, Backend)
    with pytest.raises(PluginMissingError, match="keeps predictions in backend 'team'"):
        th.prediction_storage  # noqa: B018
