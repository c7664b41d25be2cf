"""The hook cap: environment first, then ``[hooks] timeout_ms``, else 300 ms."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from thatch.hookcmd import cap


def write_config(home: Path, text: str) -> Path:
    path = home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_default_without_env_or_config(tmp_path: Path) -> None:
    assert cap.timeout_ms({}, str(tmp_path)) == (cap.DEFAULT_TIMEOUT_MS, None)


def test_config_file_sets_the_cap(tmp_path: Path) -> None:
    write_config(tmp_path, "[hooks]\ntimeout_ms = 750\n")
    assert cap.timeout_ms({}, str(tmp_path)) == (750, None)


def test_thatch_home_in_the_environment_finds_the_config(tmp_path: Path) -> None:
    write_config(tmp_path, "[hooks]\ntimeout_ms = 420\n")
    assert cap.timeout_ms({"THATCH_HOME": str(tmp_path)}) == (420, None)


def test_home_argument_wins_over_thatch_home(tmp_path: Path) -> None:
    chosen, other = tmp_path / "chosen", tmp_path / "other"
    write_config(chosen, "[hooks]\ntimeout_ms = 111\n")
    write_config(other, "[hooks]\ntimeout_ms = 222\n")
    assert cap.timeout_ms({"THATCH_HOME": str(other)}, str(chosen)) == (111, None)


def test_environment_wins_over_config(tmp_path: Path) -> None:
    write_config(tmp_path, "[hooks]\ntimeout_ms = 750\n")
    assert cap.timeout_ms({cap.ENV_VAR: "1200"}, str(tmp_path)) == (1200, None)


@pytest.mark.parametrize("raw", ["abc", "10", "-5", "1.5", "0"])
def test_a_bad_environment_value_falls_back_and_names_the_fix(tmp_path: Path, raw: str) -> None:
    value, problem = cap.timeout_ms({cap.ENV_VAR: raw}, str(tmp_path))
    assert value == cap.DEFAULT_TIMEOUT_MS
    assert problem is not None
    assert cap.ENV_VAR in problem
    assert "whole number" in problem


@pytest.mark.parametrize("setting", ["timeout_ms = 'fast'", "timeout_ms = 5", "timeout_ms = true"])
def test_a_bad_config_value_falls_back_and_names_the_file(tmp_path: Path, setting: str) -> None:
    path = write_config(tmp_path, f"[hooks]\n{setting}\n")
    value, problem = cap.timeout_ms({}, str(tmp_path))
    assert value == cap.DEFAULT_TIMEOUT_MS
    assert problem is not None
    assert str(path) in problem
    assert "hooks.timeout_ms" in problem


def test_invalid_toml_falls_back_and_says_so(tmp_path: Path) -> None:
    write_config(tmp_path, "[hooks\ntimeout_ms = 500\n")
    value, problem = cap.timeout_ms({}, str(tmp_path))
    assert value == cap.DEFAULT_TIMEOUT_MS
    assert problem is not None
    assert "not valid TOML" in problem


def test_timeout_ms_in_another_table_is_not_the_hook_cap(tmp_path: Path) -> None:
    write_config(tmp_path, "[daemon]\ntimeout_ms = 900\n")
    assert cap.timeout_ms({}, str(tmp_path)) == (cap.DEFAULT_TIMEOUT_MS, None)


def test_tomllib_is_only_loaded_when_the_file_mentions_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry makes any `import tomllib` fail, so parsing would show.
    monkeypatch.setitem(sys.modules, "tomllib", None)
    write_config(tmp_path, "[nudges]\nbudget = 3000\n")
    assert cap.timeout_ms({}, str(tmp_path)) == (cap.DEFAULT_TIMEOUT_MS, None)
    write_config(tmp_path, "[hooks]\ntimeout_ms = 500\n")
    with pytest.raises(ImportError):
        cap.timeout_ms({}, str(tmp_path))


def test_config_file_matches_paths_under_a_home(tmp_path: Path) -> None:
    from thatch.paths import Paths

    assert cap.config_file({}, str(tmp_path)) == str(Paths.under_home(tmp_path).config_file)


def test_config_file_matches_paths_for_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from thatch.paths import Paths

    monkeypatch.delenv("THATCH_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert cap.config_file(os.environ) == str(Paths.for_user().config_file)
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert cap.config_file(os.environ) == str(Paths.for_user().config_file)


# -- the cold-start allowance -------------------------------------------------------------
def test_the_allowance_defaults_to_a_few_seconds(tmp_path: Path) -> None:
    assert cap.cold_start_ms({}, str(tmp_path)) == (cap.DEFAULT_COLD_START_MS, None)
    # Under the 10 s hook timeout setup writes for Claude Code and Cursor.
    assert cap.DEFAULT_TIMEOUT_MS < cap.DEFAULT_COLD_START_MS < 10_000


def test_the_allowance_from_the_config_file_then_the_environment(tmp_path: Path) -> None:
    write_config(tmp_path, "[hooks]\ntimeout_ms = 400\ncold_start_ms = 2500\n")
    assert cap.cold_start_ms({}, str(tmp_path)) == (2500, None)
    assert cap.timeout_ms({}, str(tmp_path)) == (400, None)
    assert cap.cold_start_ms({cap.COLD_START_ENV_VAR: "0"}, str(tmp_path)) == (0, None)


@pytest.mark.parametrize("raw", ["soon", "-1", "2.5"])
def test_a_bad_allowance_falls_back_and_names_the_fix(tmp_path: Path, raw: str) -> None:
    value, problem = cap.cold_start_ms({cap.COLD_START_ENV_VAR: raw}, str(tmp_path))
    assert value == cap.DEFAULT_COLD_START_MS
    assert problem is not None
    assert cap.COLD_START_ENV_VAR in problem


def test_a_bad_allowance_in_the_config_file_names_its_key(tmp_path: Path) -> None:
    path = write_config(tmp_path, "[hooks]\ncold_start_ms = 'long'\n")
    value, problem = cap.cold_start_ms({}, str(tmp_path))
    assert value == cap.DEFAULT_COLD_START_MS
    assert problem is not None
    assert str(path) in problem
    assert "hooks.cold_start_ms" in problem
    # The cap is another key: it is not bothered.
    assert cap.timeout_ms({}, str(tmp_path)) == (cap.DEFAULT_TIMEOUT_MS, None)


def test_the_bounds_match_the_daemons_settings(home: Path) -> None:
    from thatch.config.settings import RuntimeSettings
    from thatch.plugin.config import Config
    from thatch.plugin.errors import ConfigError

    (home / "config").mkdir()
    for key, lowest in (
        ("timeout_ms", cap.MIN_TIMEOUT_MS),
        ("cold_start_ms", cap.MIN_COLD_START_MS),
    ):
        (home / "config" / "config.toml").write_text(f"[hooks]\n{key} = {lowest}\n")
        RuntimeSettings.from_config(Config.load(home, environ={}))
        (home / "config" / "config.toml").write_text(f"[hooks]\n{key} = {lowest - 1}\n")
        with pytest.raises(ConfigError):
            RuntimeSettings.from_config(Config.load(home, environ={}))
