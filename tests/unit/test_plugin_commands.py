"""Plugin subcommands (``thatch_commands``) in the real command line, run in this process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from thatch import cli
from thatch.cli import plugin_cli, unattended
from thatch.cli.parser import build_parser

MODULES = Path(__file__).parents[1] / "plugin_modules"


@pytest.fixture
def plugin_modules(monkeypatch: pytest.MonkeyPatch, home: Path) -> pytest.MonkeyPatch:
    """The test plugins importable; THATCH_PLUGIN_MODULES names the greeter (no entry points)."""
    monkeypatch.syspath_prepend(str(MODULES))
    monkeypatch.setenv("THATCH_LOAD_PLUGINS", "")
    monkeypatch.setenv("THATCH_PLUGIN_MODULES", "greeter_plugin")
    return monkeypatch


def run(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    status = cli.main(list(words))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_plugin_command_runs_with_its_arguments_and_exit_status(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "greet", "bob") == (0, "hello bob\n", "")
    assert run(capsys, "greet", "bob", "--shout") == (0, "HELLO BOB\n", "")
    assert run(capsys, "greet", "nobody")[0] == 3


def test_json_prints_the_data(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "greet", "bob", "--json")
    assert status == 0
    assert json.loads(out) == {"greeting": "hello bob", "name": "bob"}
    # --home comes with the command too, before or after it.
    assert run(capsys, "--home", str(Path.cwd()), "greet", "ann")[1] == "hello ann\n"


def test_control_characters_are_made_visible(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "greet", "\x1b[2Jbob")
    assert status == 0
    assert "\x1b" not in out
    assert out == "hello \\x1b[2Jbob\n"
    assert "\x1b" not in run(capsys, "greet", "\x1b]0;x\x07", "--json")[1]


def test_help_lists_plugin_commands_and_their_arguments(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        cli.main(["--help"])
    assert ended.value.code == 0
    assert "say hello to someone" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["greet", "--help"])
    shown = capsys.readouterr().out
    assert "who to greet" in shown
    assert "--shout" in shown
    assert "--json" in shown


def test_the_plugins_config_table_reaches_the_command(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    (home / "config").mkdir()
    (home / "config" / "config.toml").write_text('[greeter]\nword = "hi"\ntimes = 2\n')
    assert run(capsys, "greet", "bob") == (0, "hi bob hi bob\n", "")


def test_a_bad_value_in_the_plugins_table_is_one_line_naming_file_table_and_key(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    (home / "config").mkdir()
    config_file = home / "config" / "config.toml"
    config_file.write_text("[greeter]\ntimes = 0\n")
    status, out, err = run(capsys, "greet", "bob")
    assert (status, out) == (1, "")
    assert err == (
        f"thatch: config file {config_file}: greeter.times = 0: must be at least 1; "
        "set a whole number, e.g. times = 1, or remove it\n"
    )


def test_a_plugin_command_named_like_a_core_command_is_refused_naming_both(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin_modules.setenv("THATCH_PLUGIN_MODULES", "greeter_plugin,clashing_plugin")
    plugin_modules.setattr(unattended, "attended", lambda: True)
    status, out, err = run(capsys, "greet", "bob")
    assert (status, out) == (1, "")
    assert "plugin 'clashing_plugin' adds the command 'thatch search'" in err
    assert "[plugins] blocked" in err


def test_run_by_a_harness_an_unknown_command_still_fails_open_when_plugins_clash(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin_modules.setenv("THATCH_PLUGIN_MODULES", "clashing_plugin")
    plugin_modules.setattr(unattended, "attended", lambda: False)
    status, _, err = run(capsys, "echo")
    assert status == 0
    assert "ignored `thatch echo`" in err
    assert "plugin 'clashing_plugin' adds the command 'thatch search'" in err


def test_core_commands_parse_without_loading_plugins(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = build_parser()
    assert not plugin_cli.wanted(["search", "x"], parser)
    assert not plugin_cli.wanted(["--home", "greet", "daemon", "status"], parser)
    assert plugin_cli.wanted(["greet", "bob"], parser)
    assert plugin_cli.wanted(["--help"], parser)
    assert not plugin_cli.wanted(["--version"], parser)
    # A plugin that cannot even be imported does not stop a core command's help.
    plugin_modules.setenv("THATCH_PLUGIN_MODULES", "no_such_plugin_module")
    with pytest.raises(SystemExit) as ended:
        cli.main(["search", "--help"])
    assert ended.value.code == 0


def test_a_plugin_that_cannot_be_imported_is_one_line_at_a_terminal_and_ignored_by_a_hook(
    plugin_modules: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin_modules.setenv("THATCH_PLUGIN_MODULES", "no_such_plugin_module")
    plugin_modules.setattr(unattended, "attended", lambda: True)
    status, _, err = run(capsys, "greet", "bob")
    assert status == 1
    assert err.startswith("thatch: the plugins' commands could not be loaded (ModuleNotFoundError")
    assert len(err.splitlines()) == 1
    plugin_modules.setattr(unattended, "attended", lambda: False)
    status, _, err = run(capsys, "greet", "bob")
    assert status == 0
    assert "ignored `thatch greet bob`" in err
