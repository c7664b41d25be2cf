"""Plugin subcommands through the real ``thatch`` console script; hooks never load plugins."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import Runner

pytestmark = pytest.mark.slow

MODULES = Path(__file__).parents[1] / "plugin_modules"


@pytest.fixture
def greeter(tmp_path: Path) -> dict[str, str]:
    """The environment that registers the (not installed) greeter plugin, and notes its import."""
    return {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(MODULES), os.environ.get("PYTHONPATH")])),
        "THATCH_PLUGIN_MODULES": "greeter_plugin",
        "GREETER_IMPORTED": str(tmp_path / "greeter-imported"),
    }


def test_a_plugin_command_runs_with_json_and_shows_in_help(
    thatch: Runner, greeter: dict[str, str]
) -> None:
    assert thatch("greet", "bob", env=greeter).stdout == "hello bob\n"
    assert json.loads(thatch("greet", "bob", "--json", env=greeter).stdout) == {
        "greeting": "hello bob",
        "name": "bob",
    }
    assert thatch("greet", "nobody", env=greeter, check=False).returncode == 3
    assert "say hello to someone" in thatch("--help", env=greeter).stdout
    assert "who to greet" in thatch("greet", "--help", env=greeter).stdout


def test_a_plugin_command_clashing_with_a_core_command_is_one_clear_line(
    thatch: Runner, greeter: dict[str, str]
) -> None:
    env = {**greeter, "THATCH_PLUGIN_MODULES": "greeter_plugin,clashing_plugin"}
    # stdin is no terminal, as in a harness: the command fails open, the error in its note
    # (at a terminal it exits 1; see tests/unit/test_plugin_commands.py).
    ran = thatch("greet", "bob", env=env, check=False, input="")
    assert ran.returncode == 0
    assert "plugin 'clashing_plugin' adds the command 'thatch search'" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_core_and_hook_commands_do_not_load_plugins(
    thatch: Runner, greeter: dict[str, str], tmp_path: Path
) -> None:
    imported = Path(greeter["GREETER_IMPORTED"])
    env = {**greeter, "THATCH_NO_AUTOSTART": "1"}
    payload = json.dumps({"session_id": "s", "hook_event_name": "SessionStart", "cwd": "/"})
    thatch("reminder", env=env, input=payload)
    thatch("hook", "claude", "SessionStart", env=env, input=payload)
    thatch("search", "--help", env=env)
    assert not imported.exists()
    thatch("greet", "bob", env=env)
    assert imported.exists()
