"""``thatch doctor``'s checks, with a fake embedder and no daemon (the real ones: integration)."""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import thatch
from fake_daemon import FakeDaemon
from thatch import hookimpl, rundir
from thatch.doctor import Check, run_checks
from thatch.testing import WordHashEmbedder

FAKE_EMBEDDER_MODULE = "doctor_test_embedder"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of its own, so the user's real ~/.claude and ~/.cursor are never read."""
    folder = tmp_path / "user"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture(autouse=True)
def fake_model(monkeypatch: pytest.MonkeyPatch, user_home: Path) -> None:
    """Plugins: sqlite from its entry point, and a module whose embedder is the fake one."""
    module = types.ModuleType(FAKE_EMBEDDER_MODULE)

    @hookimpl
    def thatch_embedder(config: object) -> object:
        return WordHashEmbedder()

    module.thatch_embedder = thatch_embedder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, FAKE_EMBEDDER_MODULE, module)
    monkeypatch.setenv("THATCH_LOAD_PLUGINS", "sqlite")
    monkeypatch.setenv("THATCH_PLUGIN_MODULES", FAKE_EMBEDDER_MODULE)


def checks(home: Path, project: Path) -> dict[str, Check]:
    found = run_checks(str(home), project)
    by_name = {check.name: check for check in found}
    assert len(by_name) == len(found), [check.name for check in found]
    return by_name


def claude_settings(command: Any) -> str:
    hook = {"type": "command", "command": command}
    return json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}})


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_fresh_home_without_a_daemon(home: Path, project: Path) -> None:
    found = checks(home, project)
    assert list(found) == [
        "plugins",
        "database",
        "model",
        "socket permissions",
        "daemon",
        "spool",
        "log",
        "harness configs",
    ]
    assert found["plugins"].status == "ok"
    assert FAKE_EMBEDDER_MODULE in found["plugins"].detail
    assert "sqlite" in found["plugins"].detail
    assert found["database"].status == "ok"
    assert str(home) in found["database"].detail
    assert found["model"] == Check("model", "ok", "test/word-hash loads (64 dimensions)")
    assert found["daemon"].status == "warn"
    assert "not running" in found["daemon"].detail
    assert "thatch daemon start" in found["daemon"].fix
    assert found["spool"].status == "ok"
    assert found["log"].detail == rundir.locate(home=str(home)).log_path
    assert found["harness configs"].status == "warn"
    assert str(project) in found["harness configs"].detail
    assert all(check.ok for check in found.values())


def test_every_problem_has_a_fix(home: Path, project: Path) -> None:
    write(home / "config" / "config.toml", "[storage\nbackend = ")
    write(home / "state" / "spool" / "00000000000000000001-a.json", "{}\n")
    write(project / ".claude" / "settings.json", claude_settings("/nowhere/bin/thatch flush-tools"))
    found = checks(home, project)
    problems = [check for check in found.values() if check.status != "ok"]
    assert {check.name for check in problems} >= {
        "plugins",
        "database",
        "model",
        "daemon",
        "spool",
        "Claude Code hooks",
    }
    for check in problems:
        assert check.fix, check
    assert not all(check.ok for check in found.values())


def test_a_bad_config_file_fails_the_checks_that_read_it(home: Path, project: Path) -> None:
    config = write(home / "config" / "config.toml", "[nudges\nbudget = 5")
    found = checks(home, project)
    for name in ("plugins", "database", "model"):
        assert found[name].status == "fail"
        assert str(config) in found[name].detail
        assert found[name].fix
    # The checks that do not read it still run.
    assert found["daemon"].status == "warn"
    assert found["spool"].status == "ok"


def test_no_embedder_fails_the_model_check(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("THATCH_PLUGIN_MODULES")
    model = checks(home, project)["model"]
    assert model.status == "fail"
    assert "embedder" in model.detail
    assert "fastembed" in model.fix


def test_a_file_that_is_not_a_database_fails(home: Path, project: Path) -> None:
    write(home / "data" / "thatch.db", "this is not sqlite " * 100)
    database = checks(home, project)["database"]
    assert database.status == "fail"
    assert "thatch.db" in database.detail
    assert database.fix


def test_a_check_that_raises_is_still_named(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THATCH_PLUGIN_MODULES", "no_such_thatch_plugin_module")
    found = run_checks(str(home), project)
    names = [check.name for check in found]
    assert names[:3] == ["plugins", "database", "model"]
    assert all("no_such_thatch_plugin_module" in check.detail for check in found[:3])


# -- the daemon and its folders ----------------------------------------------------
@pytest.fixture
def fake_daemon(home: Path) -> Iterator[list[dict[str, Any]]]:
    """Answers a status request as a daemon of the version in ``answers[0]`` would."""
    answers: list[dict[str, Any]] = [{"version": thatch.__version__}]
    server = FakeDaemon(
        rundir.locate(home=str(home)).socket_path,
        lambda request: {"ok": True, "pid": 4321, "daemon": "x", **answers[0]},
    )
    yield answers
    server.close()


def test_a_running_daemon_is_ok(home: Path, project: Path, fake_daemon: Any) -> None:
    daemon = checks(home, project)["daemon"]
    assert daemon == Check("daemon", "ok", f"pid 4321, version {thatch.__version__}")


def test_an_older_daemon_is_a_warning(
    home: Path, project: Path, fake_daemon: list[dict[str, Any]]
) -> None:
    fake_daemon[0] = {"version": "0.0.1"}
    daemon = checks(home, project)["daemon"]
    assert daemon.status == "warn"
    assert "0.0.1" in daemon.detail
    assert "thatch daemon stop" in daemon.fix


def test_an_open_runtime_folder_fails(home: Path, project: Path) -> None:
    located = rundir.locate(home=str(home))
    folder = Path(located.socket_path).parent
    if not folder.is_relative_to(home):
        pytest.skip("the socket moved to the shared short folder; do not loosen it")
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    check = checks(home, project)["socket permissions"]
    assert check.status == "fail"
    assert "755" in check.detail
    assert "thatch daemon stop" in check.fix
    assert str(folder) in check.fix


def test_a_private_runtime_folder_is_ok(home: Path, project: Path) -> None:
    folder = Path(rundir.locate(home=str(home)).socket_path).parent
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    check = checks(home, project)["socket permissions"]
    assert check.status == "ok"


def test_waiting_spool_files_are_a_warning(home: Path, project: Path) -> None:
    spool = Path(rundir.locate(home=str(home)).spool_dir)
    write(spool / "00000000000000000001-a.json", "{}\n")
    write(spool / "00000000000000000002-b.json", "{}\n")
    write(spool / "00000000000000000003-c.json.tmp", "{")
    check = checks(home, project)["spool"]
    assert check.status == "warn"
    assert "2 events wait" in check.detail
    assert "thatch daemon start" in check.fix


def test_failed_spool_files_point_at_the_log(home: Path, project: Path) -> None:
    located = rundir.locate(home=str(home))
    write(Path(located.spool_dir) / "00000000000000000001-a.json.failed", "{")
    check = checks(home, project)["spool"]
    assert check.status == "warn"
    assert "1 spooled events could not be replayed" in check.detail
    assert located.log_path in check.fix


# -- harness configs ---------------------------------------------------------------
def test_a_thatch_command_not_on_path_fails(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = write(project / ".claude" / "settings.json", claude_settings("thatch flush-tools"))
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    check = checks(home, project)["Claude Code hooks"]
    assert check.status == "fail"
    assert str(settings) in check.detail
    assert "thatch, which is not on PATH" in check.detail
    assert "absolute path" in check.fix


def test_a_thatch_command_on_path_is_ok(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project / ".claude" / "settings.json", claude_settings("thatch flush-tools --json"))
    bin_dir = tmp_path / "bin"
    write(bin_dir / "thatch", "#!/bin/sh\n").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    check = checks(home, project)["Claude Code hooks"]
    assert check.status == "ok"
    assert "harness configs" not in checks(home, project)


@pytest.mark.parametrize("executable", [True, False])
def test_an_absolute_command_must_be_executable(
    home: Path, project: Path, tmp_path: Path, executable: bool
) -> None:
    program = write(tmp_path / "opt" / "thatch", "#!/bin/sh\n")
    program.chmod(0o755 if executable else 0o644)
    write(project / ".claude" / "settings.local.json", claude_settings(f"{program} reminder"))
    check = checks(home, project)["Claude Code hooks"]
    assert check.status == ("ok" if executable else "fail")
    assert check.ok is executable


def test_a_config_in_the_users_home_is_checked(home: Path, project: Path, user_home: Path) -> None:
    hooks = {"version": 1, "hooks": {"postToolUse": [{"command": "/gone/thatch buffer-tool"}]}}
    path = write(user_home / ".cursor" / "hooks.json", json.dumps(hooks))
    check = checks(home, project)["Cursor hooks"]
    assert check.status == "fail"
    assert str(path) in check.detail
    assert "/gone/thatch" in check.detail


def test_a_list_command_is_checked(home: Path, project: Path) -> None:
    config = {"mcp": {"thatch": {"type": "local", "command": ["/gone/thatch", "mcp"]}}}
    write(project / "opencode.json", json.dumps(config))
    check = checks(home, project)["opencode"]
    assert check.status == "fail"
    assert "/gone/thatch" in check.detail


def test_a_corrupt_json_config_fails(home: Path, project: Path) -> None:
    path = write(project / ".cursor" / "mcp.json", '{"mcpServers": {"thatch": {"command": ')
    check = checks(home, project)["Cursor MCP"]
    assert check.status == "fail"
    assert "not valid JSON" in check.detail
    assert check.fix == f"fix {path}"


def test_opencode_jsonc_is_not_parsed(home: Path, project: Path) -> None:
    text = '{\n  // thatch memory\n  "mcp": {"thatch": {"command": ["thatch", "mcp"]}},\n}\n'
    write(project / "opencode.json", text)
    check = checks(home, project)["opencode"]
    assert check.status == "ok"
    assert "JSONC" in check.detail


def test_configs_that_do_not_mention_thatch_are_skipped(home: Path, project: Path) -> None:
    write(project / ".mcp.json", json.dumps({"mcpServers": {"other": {"command": "other"}}}))
    write(project / ".cursor" / "hooks.json", "{ broken")
    found = checks(home, project)
    assert "Claude Code MCP" not in found
    assert "Cursor hooks" not in found
    assert found["harness configs"].status == "warn"


def test_each_mentioning_file_is_its_own_check(home: Path, project: Path) -> None:
    absolute = Path(sys.executable).with_name("thatch")
    write(project / ".mcp.json", json.dumps({"mcpServers": {"t": {"command": str(absolute)}}}))
    write(project / ".claude" / "settings.json", claude_settings("/gone/thatch reminder"))
    found = run_checks(str(home), project)
    harness = [(c.name, c.status) for c in found if c.name.startswith("Claude")]
    expected_mcp = "ok" if os.access(absolute, os.X_OK) else "fail"
    assert harness == [("Claude Code hooks", "fail"), ("Claude Code MCP", expected_mcp)]


def test_a_hook_command_after_variable_assignments_is_found(tmp_path: Path) -> None:
    from thatch.doctor import _program

    assert _program("THATCH_HOME='/a b' /opt/bin/thatch hook claude Stop") == "/opt/bin/thatch"
    assert _program("thatch flush-tools") == "thatch"
    assert _program("A=1 B=2") is None
    assert _program("unbalanced 'quote") is None
