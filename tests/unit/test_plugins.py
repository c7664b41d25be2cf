from __future__ import annotations

import importlib.metadata
import types
from pathlib import Path

import pluggy
import pytest
from thatch import hookimpl
from thatch.plugin.config import Config
from thatch.plugin.errors import PluginMissingError
from thatch.plugins import Plugins, PluginSelection, create_manager
from thatch.testing import WordHashEmbedder


def _module(name: str, **hooks: object) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook_name, function in hooks.items():
        setattr(module, hook_name, function)
    return module


@hookimpl
def _storage_hook(config: Config) -> object:
    return "storage-from-fake"


@hookimpl
def _embedder_hook(config: Config) -> object:
    return WordHashEmbedder()


class _FakeEntryPoint:
    def __init__(self, name: str, module: types.ModuleType) -> None:
        self.name = name
        self.module = module
        self.dist = None

    def load(self) -> types.ModuleType:
        return self.module


@pytest.fixture
def fake_entry_points(monkeypatch: pytest.MonkeyPatch) -> dict[str, types.ModuleType]:
    """Replace the installed entry points with two fake plugins."""
    modules = {
        "fakestore": _module("fakestore", thatch_memory_storage=_storage_hook),
        "fakeembed": _module("fakeembed", thatch_embedder=_embedder_hook),
    }

    def entry_points(*, group: str) -> list[_FakeEntryPoint]:
        assert group == "thatch"
        return [_FakeEntryPoint(name, module) for name, module in modules.items()]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    return modules


def _installed(plugins: Plugins) -> list[str]:
    return [info.name for info in plugins.describe() if not info.builtin]


def test_core_nudge_sources_are_plugins_that_can_be_blocked(
    fake_entry_points: object, tmp_path: Path
) -> None:
    config = Config.load(tmp_path, environ={})
    builtin = {info.name for info in Plugins.load(config, environ={}).describe() if info.builtin}
    assert {"extraction-nudge", "recall-nudge", "decision-nudge", "save-reminder"} <= builtin
    # Output formats are the harnesses': core has no plain-text delivery of its own.
    assert "plain-delivery" not in builtin
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text('[plugins]\nblocked = ["recall-nudge"]\n')
    blocked = Plugins.load(Config.load(tmp_path, environ={}), environ={})
    assert "recall-nudge" not in {info.name for info in blocked.describe()}


def test_all_entry_points_load_by_default(fake_entry_points: object, tmp_path: Path) -> None:
    config = Config.load(tmp_path, environ={})
    plugins = Plugins.load(config, environ={})
    assert _installed(plugins) == ["fakeembed", "fakestore"]
    assert plugins.memory_storage(config) == "storage-from-fake"
    assert isinstance(plugins.embedder(config), WordHashEmbedder)
    hooks = {info.name: info.hooks for info in plugins.describe() if not info.builtin}
    assert hooks == {"fakeembed": ("thatch_embedder",), "fakestore": ("thatch_memory_storage",)}


def test_allow_list_and_empty_allow_list(fake_entry_points: object, tmp_path: Path) -> None:
    config = Config.load(tmp_path, environ={})
    only_store = Plugins.load(config, environ={"THATCH_LOAD_PLUGINS": "fakestore"})
    assert _installed(only_store) == ["fakestore"]
    with pytest.raises(PluginMissingError, match="THATCH_LOAD_PLUGINS"):
        only_store.embedder(config)
    none = Plugins.load(config, environ={"THATCH_LOAD_PLUGINS": ""})
    assert _installed(none) == []
    with pytest.raises(PluginMissingError) as caught:
        none.memory_storage(config)
    assert "backend 'sqlite'" in str(caught.value)
    assert "add 'sqlite' to THATCH_LOAD_PLUGINS" in str(caught.value)


def test_block_list_from_config(fake_entry_points: object, tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text(
        '[plugins]\nblocked = ["fakestore"]\n[storage]\nbackend = "fakestore"\n'
    )
    config = Config.load(tmp_path, environ={})
    plugins = Plugins.load(config, environ={})
    assert _installed(plugins) == ["fakeembed"]
    with pytest.raises(PluginMissingError, match="remove 'fakestore' from \\[plugins\\] blocked"):
        plugins.memory_storage(config)


def test_misspelled_hook_fails_loudly(
    fake_entry_points: dict[str, types.ModuleType],
) -> None:
    @hookimpl
    def thatch_storag(config: Config) -> None:  # the typo is the point
        return None

    fake_entry_points["typo"] = _module("typo", thatch_storag=thatch_storag)
    with pytest.raises(pluggy.PluginValidationError, match="thatch_storag"):
        create_manager(PluginSelection())


def test_tracing_prints_hook_calls(
    fake_entry_points: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manager, origins = create_manager(PluginSelection(), trace=True)
    Plugins(manager, origins=origins).memory_storage(Config.load(tmp_path, environ={}))
    err = capsys.readouterr().err
    assert "[thatch trace] thatch_memory_storage(config) -> [fakestore]" in err
    assert "returned 'storage-from-fake'" in err


def test_selection_from_environment() -> None:
    assert PluginSelection.from_environment(environ={}).allowed is None
    selection = PluginSelection.from_environment(("b",), {"THATCH_LOAD_PLUGINS": " a , b ,"})
    assert selection.allowed == frozenset({"a", "b"})
    assert selection.admits("a")
    assert not selection.admits("b")
    assert not selection.admits("c")
