"""Config tables plugins declare (``thatch_config_tables``): checked, filled, listed, documented."""

from __future__ import annotations

import importlib.metadata
import re
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from thatch.config import plugin_tables as plugin_parts
from thatch.plugin import ConfigError, ConfigKey, ConfigTable, hookimpl
from thatch.plugin.config import CORE_TABLES, Config
from thatch.plugin.errors import PluginConflictError
from thatch.plugins import ENTRY_POINT_GROUP
from thatch.testing import plugins_with

ROOT = Path(__file__).parents[2]
SOURCE = Path("/home/config.toml")

RECEPTOR = ConfigTable(
    "receptor",
    (
        ConfigKey("enabled", bool, True, "whether the receptor runs"),
        ConfigKey("step_seconds", float, 5.0, "time given to an event without one"),
        ConfigKey(
            "history",
            int,
            200,
            "events kept per session",
            check=lambda value: None if value > 0 else "must be positive",
        ),
        ConfigKey("rules", str, None, "a rule file of your own"),
        ConfigKey("axes", list, ["frustration"], "the axes to read"),
    ),
    help="the emotion receptor",
)


def read(text: str, table: ConfigTable = RECEPTOR) -> dict[str, Any]:
    import tomllib

    return table.read(tomllib.loads(text), SOURCE)


def test_a_table_the_file_leaves_out_is_its_defaults() -> None:
    assert read("") == {
        "enabled": True,
        "step_seconds": 5.0,
        "history": 200,
        "rules": None,
        "axes": ["frustration"],
    }


def test_values_from_the_file_replace_the_defaults_and_whole_numbers_may_be_floats() -> None:
    values = read("[receptor]\nstep_seconds = 2\nenabled = false\n")
    assert values["step_seconds"] == 2.0
    assert isinstance(values["step_seconds"], float)
    assert values["enabled"] is False
    assert values["history"] == 200


def test_an_unknown_key_names_the_file_the_table_the_key_and_the_keys_there_are() -> None:
    with pytest.raises(ConfigError) as raised:
        read("[receptor]\nhistroy = 10\n")
    assert str(raised.value) == (
        "config file /home/config.toml: [receptor] has no key 'histroy' "
        "(its keys: enabled, step_seconds, history, rules, axes); remove it or correct its name"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("history = true", "receptor.history = True is not a whole number; "),
        ("history = 2.5", "receptor.history = 2.5 is not a whole number; "),
        ('enabled = "yes"', "receptor.enabled = 'yes' is not true or false; "),
        ("step_seconds = true", "receptor.step_seconds = True is not a number; "),
        ("axes = 'flow'", "receptor.axes = 'flow' is not a list; "),
    ],
)
def test_a_value_of_the_wrong_type_names_the_key_and_an_example(line: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        read(f"[receptor]\n{line}\n")
    assert str(raised.value).startswith(f"config file {SOURCE}: {message}")
    assert "e.g." in str(raised.value)


def test_a_value_the_key_refuses_says_why_and_the_default() -> None:
    with pytest.raises(ConfigError) as raised:
        read("[receptor]\nhistory = 0\n")
    assert str(raised.value) == (
        f"config file {SOURCE}: receptor.history = 0: must be positive; "
        "set a whole number, e.g. history = 200, or remove it"
    )


def test_a_key_that_may_hold_a_secret_is_shown_without_it_when_refused() -> None:
    secret = ConfigTable(
        "storage.postgres",
        (
            ConfigKey(
                "dsn",
                str,
                "",
                "where the server is",
                check=lambda value: "not a server",
                shown=lambda value: value.replace("s3cret", "…"),
            ),
        ),
    )
    with pytest.raises(ConfigError) as refused:
        read('[storage.postgres]\ndsn = "user=me password=s3cret"\n', secret)
    assert "storage.postgres.dsn = 'user=me password=…': not a server" in str(refused.value)
    with pytest.raises(ConfigError) as refused:
        read('[storage.postgres]\ndsn = ["password=s3cret"]\n', secret)
    assert "storage.postgres.dsn = a list is not a string" in str(refused.value)


def test_a_sub_table_of_a_core_table_is_read_where_it_sits() -> None:
    postgres = ConfigTable("storage.postgres", (ConfigKey("dsn", str, "", "where the server is"),))
    assert read('[storage]\nbackend = "postgres"\n[storage.postgres]\ndsn = "x"\n', postgres) == {
        "dsn": "x"
    }
    with pytest.raises(ConfigError, match=r"storage\.postgres must be a table"):
        read('[storage]\npostgres = "x"\n', postgres)
    with pytest.raises(ConfigError, match="receptor must be a table"):
        read('receptor = "on"\n')


def test_a_declaration_with_a_default_of_the_wrong_type_or_a_key_twice_fails_at_once() -> None:
    with pytest.raises(TypeError, match="the default 'many' is not a whole number"):
        ConfigKey("history", int, "many", "events kept")
    key = ConfigKey("a", str, "", "a key")
    with pytest.raises(ValueError, match=r"\[t\] declares a twice"):
        ConfigTable("t", (key, key))


def declaring(*tables: ConfigTable, name: str = "declares") -> types.ModuleType:
    module = types.ModuleType(name)

    @hookimpl
    def thatch_config_tables() -> Iterable[ConfigTable]:
        return tables

    module.thatch_config_tables = thatch_config_tables  # type: ignore[attr-defined]
    return module


def config_in(home: Path, text: str) -> Config:
    (home / "config").mkdir(exist_ok=True)
    (home / "config" / "config.toml").write_text(text)
    return Config.load(home, environ={})


def test_the_plugin_reads_its_checked_table_from_the_config(home: Path) -> None:
    config = config_in(home, "[receptor]\nhistory = 50\n")
    checked = plugin_parts.with_plugin_tables(config, plugins_with(declaring(RECEPTOR)))
    assert checked.table("receptor")["history"] == 50
    assert checked.table("receptor")["enabled"] is True
    with pytest.raises(ConfigError, match=r"no loaded plugin declares the config table \[other\]"):
        checked.table("other")


def test_a_plugin_that_declares_a_core_table_is_refused_by_name(home: Path) -> None:
    config = config_in(home, "")
    storage = ConfigTable("storage", (ConfigKey("dsn", str, "", "x"),))
    with pytest.raises(PluginConflictError) as raised:
        plugin_parts.with_plugin_tables(config, plugins_with(declaring(storage, name="greedy")))
    assert "plugin 'greedy' declares the config table [storage], which is thatch's own" in str(
        raised.value
    )


def test_two_plugins_that_declare_one_table_are_refused(home: Path) -> None:
    plugins = plugins_with(declaring(RECEPTOR, name="one"), declaring(RECEPTOR, name="two"))
    with pytest.raises(PluginConflictError, match="both provide the config table 'receptor'"):
        plugin_parts.with_plugin_tables(config_in(home, ""), plugins)


def test_doctor_lists_each_table_and_warns_of_tables_no_plugin_declares(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_in(home, "[receptor]\nhistory = 5\n[old_plugin]\nx = 1\n[nudges]\nbudget = 900\n")
    monkeypatch.setattr(plugin_parts.Plugins, "load", lambda config: receptor_plugins)
    receptor_plugins = plugins_with(declaring(RECEPTOR, name="receptor"))
    checks = plugin_parts.doctor_checks(str(home))
    assert [(check.name, check.status) for check in checks] == [
        ("config table [receptor]", "ok"),
        ("config table [old_plugin]", "warn"),
    ]
    assert checks[0].detail.startswith("from plugin receptor: the emotion receptor: enabled = True")
    assert "history = 5" in checks[0].detail
    assert "no loaded plugin declares" in checks[1].detail
    assert checks[1].fix


def test_doctor_fails_a_table_with_a_bad_value(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_in(home, "[receptor]\nhistory = -1\n")
    monkeypatch.setattr(
        plugin_parts.Plugins, "load", lambda config: plugins_with(declaring(RECEPTOR))
    )
    (check,) = plugin_parts.doctor_checks(str(home))
    assert check.status == "fail"
    assert "receptor.history = -1: must be positive" in check.detail


def test_core_tables_are_never_reported_as_undeclared() -> None:
    sections = {name: {} for name in CORE_TABLES} | {"storage": {"postgres": {}}}
    assert plugin_parts.undeclared_tables(sections, {}) == []
    assert plugin_parts.undeclared_tables({"receptor": {}, "top_key": 3}, {}) == ["receptor"]


# -- every key of an installed plugin's table is documented --------------------------
def documentation() -> str:
    """docs/ and every plugin's and example's README, as one text."""
    files = [
        *(ROOT / "docs").rglob("*.md"),
        *ROOT.glob("plugins/*/README.md"),
        *ROOT.glob("examples/*/README.md"),
    ]
    return "\n".join(path.read_text(encoding="utf-8") for path in files)


def undocumented(tables: Iterable[ConfigTable], text: str) -> list[str]:
    """``TABLE.KEY`` of each key whose ``[TABLE]`` or `` `KEY` `` ``text`` lacks."""
    missing = []
    for table in tables:
        for key in table.keys:
            if f"[{table.name}]" not in text or not re.search(rf"`{re.escape(key.name)}\b", text):
                missing.append(f"{table.name}.{key.name}")
    return missing


def installed_tables() -> list[ConfigTable]:
    tables: list[ConfigTable] = []
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        declare = getattr(entry_point.load(), "thatch_config_tables", None)
        if declare is not None:
            tables.extend(declare() or ())
    return tables


def test_every_key_of_an_installed_plugins_table_is_documented() -> None:
    assert undocumented(installed_tables(), documentation()) == []


def test_an_undocumented_key_is_found() -> None:
    text = "## [receptor]\n\n- `enabled`: on or off\n- `step_seconds`, `history`, `rules`\n"
    assert undocumented([RECEPTOR], text) == ["receptor.axes"]
    assert undocumented([RECEPTOR], text.replace("[receptor]", "receptor")) == [
        f"receptor.{key.name}" for key in RECEPTOR.keys
    ]


def test_core_tables_are_the_ones_the_config_schema_describes() -> None:
    from thatch.config import schema as config_schema

    assert {table.name for table in config_schema.TABLES} == CORE_TABLES


def test_providers_names_every_plugin_that_offers_a_part() -> None:
    plugins = plugins_with(declaring(RECEPTOR, name="one"), declaring(RECEPTOR, name="two"))
    assert sorted(plugins.providers("thatch_config_tables", "receptor")) == [
        "one",
        "two",
    ]
    assert plugin_parts.provider(plugins, "thatch_config_tables", "nothing") == "?"


def test_doctor_warns_of_a_core_key_nothing_reads_and_names_the_nearest(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A typo in [storage] would otherwise keep everything in SQLite without a word.
    config_in(
        home,
        '[storage]\nbakend = "postgres"\nmmap_mb = 16\n[storage.postgres]\ndsn = ""\n'
        "[nudges]\nbudget = 900\nloudness = 3\n",
    )
    monkeypatch.setattr(plugin_parts.Plugins, "load", lambda config: plugins_with())
    checks = {check.name: check for check in plugin_parts.doctor_checks(str(home))}
    assert sorted(checks) == ["config key nudges.loudness", "config key storage.bakend"]
    typo = checks["config key storage.bakend"]
    assert typo.status == "warn"
    assert "sets bakend in [storage], which thatch does not read" in typo.detail
    assert "did you mean storage.backend?" in typo.detail
    assert typo.fix == "rename it to backend"
    assert "did you mean" not in checks["config key nudges.loudness"].detail
    assert checks["config key nudges.loudness"].fix == "remove it"
