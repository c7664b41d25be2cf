"""The runtime's settings: [nudges], [hooks] and [daemon] in the config file."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from thatch.config.settings import RuntimeSettings
from thatch.plugin.config import Config
from thatch.plugin.errors import ConfigError


def settings(home: Path, text: str | None = None) -> RuntimeSettings:
    if text is not None:
        (home / "config").mkdir(exist_ok=True)
        (home / "config" / "config.toml").write_text(text)
    return RuntimeSettings.from_config(Config.load(home, environ={}))


def error(home: Path, text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        settings(home, text)
    return str(caught.value)


def test_defaults_without_a_config_file(home: Path) -> None:
    assert settings(home) == RuntimeSettings()
    assert attrs.asdict(settings(home)) == {
        "budget": 2000,
        "repeat_window": 10,
        "min_prompt_chars": 10,
        "hook_timeout_ms": 300,
        "hook_cold_start_ms": 6000,
        "idle_minutes": 30.0,
    }


def test_hook_defaults_match_what_the_hook_commands_use() -> None:
    from thatch.hookcmd import cap

    defaults = RuntimeSettings()
    assert defaults.hook_timeout_ms == cap.DEFAULT_TIMEOUT_MS
    assert defaults.hook_cold_start_ms == cap.DEFAULT_COLD_START_MS


def test_other_tables_and_keys_are_left_alone(home: Path) -> None:
    text = '[nudges]\nstyle = "terse"\n[daemon]\nname = "x"\n[storage]\nbackend = "sqlite"\n'
    assert settings(home, text) == RuntimeSettings()


@pytest.mark.parametrize(
    ("table", "key", "value", "field"),
    [
        ("nudges", "budget", 750, "budget"),
        ("nudges", "repeat_window", 3, "repeat_window"),
        ("nudges", "min_prompt_chars", 25, "min_prompt_chars"),
        ("hooks", "timeout_ms", 900, "hook_timeout_ms"),
        ("hooks", "cold_start_ms", 2500, "hook_cold_start_ms"),
        ("hooks", "cold_start_ms", 0, "hook_cold_start_ms"),
        ("daemon", "idle_minutes", 5, "idle_minutes"),
        ("daemon", "idle_minutes", 2.5, "idle_minutes"),
    ],
)
def test_each_value_is_read(home: Path, table: str, key: str, value: float, field: str) -> None:
    read = settings(home, f"[{table}]\n{key} = {value}\n")
    assert getattr(read, field) == value
    assert attrs.evolve(read, **{field: getattr(RuntimeSettings(), field)}) == RuntimeSettings()


def test_every_value_at_once(home: Path) -> None:
    text = (
        "[nudges]\nbudget = 200\nrepeat_window = 0\nmin_prompt_chars = 0\n"
        "[hooks]\ntimeout_ms = 50\ncold_start_ms = 0\n[daemon]\nidle_minutes = 0\n"
    )
    assert settings(home, text) == RuntimeSettings(
        budget=200,
        repeat_window=0,
        min_prompt_chars=0,
        hook_timeout_ms=50,
        hook_cold_start_ms=0,
        idle_minutes=0,
    )


@pytest.mark.parametrize(
    ("table", "key", "raw", "wanted"),
    [
        ("nudges", "budget", "true", "a whole number of at least 200"),
        ("nudges", "budget", '"2000"', "a whole number of at least 200"),
        ("nudges", "budget", "199", "a whole number of at least 200"),
        ("nudges", "budget", "2000.0", "a whole number of at least 200"),
        ("nudges", "repeat_window", "-1", "a whole number of at least 0"),
        ("nudges", "repeat_window", "false", "a whole number of at least 0"),
        ("nudges", "min_prompt_chars", '"ten"', "a whole number of at least 0"),
        ("nudges", "min_prompt_chars", "[10]", "a whole number of at least 0"),
        ("hooks", "timeout_ms", "49", "a whole number of at least 50"),
        ("hooks", "timeout_ms", "true", "a whole number of at least 50"),
        ("hooks", "timeout_ms", '"300ms"', "a whole number of at least 50"),
        ("hooks", "cold_start_ms", "-1", "a whole number of at least 0"),
        ("hooks", "cold_start_ms", "2.5", "a whole number of at least 0"),
        ("daemon", "idle_minutes", "-0.5", "a number of at least 0"),
        ("daemon", "idle_minutes", "false", "a number of at least 0"),
        ("daemon", "idle_minutes", '"30"', "a number of at least 0"),
    ],
)
def test_an_invalid_value_names_the_key_and_the_fix(
    home: Path, table: str, key: str, raw: str, wanted: str
) -> None:
    message = error(home, f"[{table}]\n{key} = {raw}\n")
    assert f"{table}.{key} = " in message
    assert f"use {wanted}" in message
    assert str(home / "config" / "config.toml") in message


@pytest.mark.parametrize("table", ["nudges", "hooks", "daemon"])
@pytest.mark.parametrize("value", ["5", '"fast"', "[1, 2]"])
def test_a_table_that_is_not_a_table_is_named(home: Path, table: str, value: str) -> None:
    message = error(home, f"{table} = {value}\n")
    assert f"[{table}] must be a table" in message
    assert str(home / "config" / "config.toml") in message
