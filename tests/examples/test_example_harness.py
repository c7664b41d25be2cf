"""The example harness plugin: a fourth harness, set up and parsed with no change to core.

``thatch-example-harness`` is installed like any third-party plugin (entry
point ``example``); nothing in core names it. These tests show that
``thatch setup --example`` exists and writes its config, that its checks
find what is missing, and that ``thatch hook example EVENT`` reaches the
daemon and is parsed by the plugin.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import thatch_example_harness.plugin
import thatch_sqlite.plugin
from harness_clis import user_env, user_path
from thatch import rundir
from thatch.instructions.briefing import BRIEFING
from thatch.plugin import Harness, InvalidInputError
from thatch.plugin.setup import SetupContext
from thatch.runtime import Runtime
from thatch.testing import EventRecorder, answer_hook, make_runtime, send_hook, set_up
from thatch_example_harness.harness import ExampleHarness

THATCH = Path(sys.executable).with_name("thatch")
PROMPT = {"session": "s-1", "cwd": "/work/app", "prompt": "how do we deploy?"}


@pytest.fixture
def recorder() -> EventRecorder:
    return EventRecorder()


@pytest.fixture
def app(tmp_path: Path, recorder: EventRecorder) -> Iterator[Runtime]:
    runtime = make_runtime(
        tmp_path / "home", thatch_sqlite.plugin, thatch_example_harness.plugin, recorder
    )
    yield runtime
    runtime.close()


def context(tmp_path: Path) -> SetupContext:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return SetupContext(
        scope="project",
        project=project,
        user_home=tmp_path / "user",
        command=("thatch",),
        briefing=BRIEFING,
    )


def thatch(*args: str, cwd: Path, env: dict[str, str], stdin: str = "") -> Any:
    """Run the real console script as a user's shell would: their HOME, no virtualenv on PATH."""
    return subprocess.run(
        [str(THATCH), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_plugin_offers_a_harness() -> None:
    (harness,) = thatch_example_harness.plugin.thatch_harnesses()
    assert isinstance(harness, Harness)
    assert (harness.name, harness.title) == ("example", "Example Agent")


# -- the hook path, in process -----------------------------------------------------
def test_a_hook_event_is_parsed_by_the_plugin_in_the_daemon(
    app: Runtime, recorder: EventRecorder
) -> None:
    send_hook(app, "example", "prompt", PROMPT)
    (event,) = recorder.events
    assert (event.harness, event.kind, event.hook_event) == ("example", "prompt", "prompt")
    assert (event.session_id, event.prompt, event.cwd) == ("s-1", "how do we deploy?", "/work/app")


def test_a_tool_event_carries_its_call(app: Runtime, recorder: EventRecorder) -> None:
    send_hook(app, "example", "tool", {"session": "s-1", "tool": "shell", "input": {"cmd": "ls"}})
    (event,) = recorder.events
    assert event.kind == "tool_use"
    assert [(call.name, call.input) for call in event.tool_calls] == [("shell", {"cmd": "ls"})]


def test_answers_are_one_json_line_or_nothing() -> None:
    harness = ExampleHarness()
    event = harness.parse_event("prompt", PROMPT)
    assert harness.deliver([], event) == ""


def test_an_unknown_event_names_the_ones_it_reads() -> None:
    with pytest.raises(InvalidInputError, match="session-start, prompt, tool, session-end"):
        ExampleHarness().parse_event("typing", PROMPT)
    with pytest.raises(InvalidInputError, match="session"):
        ExampleHarness().parse_event("prompt", {"prompt": "no session"})


# -- setup and its checks, in process ------------------------------------------------
def test_setup_writes_the_config_and_the_checks_then_pass(tmp_path: Path) -> None:
    harness = ExampleHarness(which=lambda name: None)
    setup = context(tmp_path)
    assert not harness.detect(setup).found
    assert "config.json is missing" in harness.problems(setup)[0]
    set_up(harness, setup, tmp_path / "state")
    config = json.loads((tmp_path / "project" / ".example-agent" / "config.json").read_text())
    assert config["hooks"]["prompt"] == "thatch hook example prompt"
    assert config["mcpServers"]["thatch"]["env"] == {"THATCH_HARNESS": "example"}
    assert harness.problems(setup) == []
    assert harness.detect(setup).found
    assert [path.name for path in harness.config_files(setup)] == ["config.json", "thatch.md"]


def test_a_removed_hook_is_a_problem_with_its_fix(tmp_path: Path) -> None:
    harness = ExampleHarness()
    setup = context(tmp_path)
    set_up(harness, setup, tmp_path / "state")
    path = tmp_path / "project" / ".example-agent" / "config.json"
    config = json.loads(path.read_text())
    del config["hooks"]["tool"]
    path.write_text(json.dumps(config))
    (problem,) = harness.problems(setup)
    assert "has no hook for tool" in problem
    assert "thatch setup --example --project" in problem


# -- the real CLI --------------------------------------------------------------------
@pytest.fixture
def user(tmp_path: Path) -> dict[str, str]:
    """A user's shell: a temporary HOME, a PATH without the virtualenv, a home for thatch."""
    home = tmp_path / "user"
    home.mkdir()
    return {**user_env(home, user_path()), "THATCH_HOME": str(tmp_path / "thatch-home")}


def test_thatch_setup_has_a_flag_for_the_example_harness(
    tmp_path: Path, user: dict[str, str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    done = thatch("setup", "--example", "--json", cwd=project, env=user)
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)
    assert result["harness"] == "example"
    config = json.loads((project / ".example-agent" / "config.json").read_text())
    # Not on the user's PATH, so the hooks run thatch by its absolute path.
    assert config["hooks"]["prompt"].endswith(f"{THATCH} hook example prompt")
    status = json.loads(thatch("setup", "--status", "--json", cwd=project, env=user).stdout)
    assert "example" in status["plugins"]
    assert [i["harness"] for i in status["installed"]] == ["example"]
    help_text = thatch("setup", "--help", cwd=project, env=user).stdout
    assert "--example" in help_text
    assert "set up Example Agent" in help_text


def test_thatch_hook_example_spools_an_event_the_daemon_parses(
    tmp_path: Path, user: dict[str, str], app: Runtime, recorder: EventRecorder
) -> None:
    # No daemon, none started: the hook spools the event and exits 0 at once.
    env = {**user, "THATCH_NO_AUTOSTART": "1"}
    done = thatch("hook", "example", "prompt", cwd=tmp_path, env=env, stdin=json.dumps(PROMPT))
    assert done.returncode == 0, done.stderr
    spool = Path(rundir.locate({}, home=user["THATCH_HOME"]).spool_dir)
    (spooled,) = [path for path in spool.iterdir() if path.suffix == ".json"]
    request = json.loads(spooled.read_text())
    assert (request["harness"], request["event"]) == ("example", "prompt")
    # The daemon replays it through the plugin.
    answer_hook(app, request, replay=True)
    (event,) = recorder.events
    assert (event.harness, event.prompt) == ("example", "how do we deploy?")
