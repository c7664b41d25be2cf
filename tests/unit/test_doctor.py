"""``thatch doctor``'s checks, with a fake embedder and no daemon (the real ones: integration)."""

from __future__ import annotations

import os
import socket
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
from thatch.instructions.briefing import BRIEFING
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
        "kept writes",
        "log",
        "harness setup",
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
    assert found["harness setup"].status == "warn"
    assert str(project) in found["harness setup"].detail
    assert all(check.ok for check in found.values())


def test_every_problem_has_a_fix(home: Path, project: Path) -> None:
    write(home / "config" / "config.toml", "[storage\nbackend = ")
    write(home / "state" / "spool" / "00000000000000000001-a.json", "{}\n")
    found = checks(home, project)
    problems = [check for check in found.values() if check.status != "ok"]
    assert {check.name for check in problems} >= {
        "plugins",
        "database",
        "model",
        "daemon",
        "spool",
        "harness setup",
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


@pytest.fixture
def linked_home(tmp_path: Path) -> tuple[Path, Path]:
    """A home too deep to bind its socket in, linked to a socket in a folder of the test's."""
    deep = tmp_path / ("d" * 90)
    located = rundir.locate(home=str(deep))
    assert located.socket_linked
    os.makedirs(located.runtime_dir, mode=0o700)
    folder = tmp_path / "sockets"
    folder.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind(str(folder / "daemon.sock"))
    os.chmod(folder / "daemon.sock", 0o600)
    os.symlink(folder / "daemon.sock", located.socket_path)
    return deep, folder


def test_the_folder_a_long_home_links_to_is_checked(
    linked_home: tuple[Path, Path], project: Path
) -> None:
    deep, folder = linked_home
    assert checks(deep, project)["socket permissions"] == Check(
        "socket permissions", "ok", f"{folder} is private to you"
    )
    folder.chmod(0o777)
    check = checks(deep, project)["socket permissions"]
    assert check.status == "fail"
    assert f"{folder} has mode 777" in check.detail
    assert str(folder) in check.fix


def test_what_the_clients_would_refuse_is_a_failure(
    linked_home: tuple[Path, Path], project: Path
) -> None:
    deep, folder = linked_home
    (folder / "daemon.sock").unlink()
    (folder / "daemon.sock").write_text("")
    (folder / "daemon.sock").chmod(0o600)
    check = checks(deep, project)["socket permissions"]
    assert check.status == "fail"
    assert "is not a socket" in check.detail


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


# -- the daemon --------------------------------------------------------------------
def test_a_daemon_that_never_answers_is_hung(home: Path, project: Path) -> None:
    from thatch import doctor

    server = FakeDaemon(rundir.locate(home=str(home)).socket_path, lambda request: None)
    try:
        check = checks(home, project)["daemon"]
    finally:
        server.close()
    assert check.status == "fail"
    assert check.detail.startswith("hung:")
    assert "kill" in check.fix
    assert doctor.DAEMON_ANSWER_SECONDS <= 2


def test_a_daemon_holding_its_lock_without_a_socket_is_not_answering(
    home: Path, project: Path
) -> None:
    from thatch import daemon_lock as lock

    located = rundir.locate(home=str(home))
    os.makedirs(located.runtime_dir, mode=0o700, exist_ok=True)
    held = lock.acquire(located.lock_path)
    Path(located.pid_path).write_text("4321\n")
    try:
        check = checks(home, project)["daemon"]
    finally:
        assert held is not None
        lock.release(held)
    assert check.status == "fail"
    assert "pid 4321" in check.detail
    assert "the socket is gone" in check.detail
    assert "kill 4321" in check.fix
    assert "thatch daemon stop" in check.fix


# -- harness setups ------------------------------------------------------------------
def test_no_harness_set_up_is_one_warning(home: Path, project: Path) -> None:
    found = checks(home, project)
    assert found["harness setup"].status == "warn"
    assert "thatch setup" in found["harness setup"].fix


def test_an_unsetup_harness_is_never_checked(
    home: Path, project: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code's folder exists (detected), but the user never set it up.
    (user_home / ".claude").mkdir()
    monkeypatch.setenv("THATCH_LOAD_PLUGINS", "sqlite,claude")
    found = checks(home, project)
    assert not [name for name in found if name.startswith("Claude Code")]


def test_a_command_that_fails_to_start_is_reported_once(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from thatch.plugin.setup import JsonListItem
    from thatch.setup import engine

    broken = write(tmp_path / "gone-venv" / "bin" / "thatch", "#!/nowhere/python\n")
    broken.chmod(0o755)
    settings = project / ".claude" / "settings.json"
    hook = {"hooks": [{"type": "command", "command": f"THATCH_HOME=/h {broken} hook x Y"}]}
    changes = [
        JsonListItem(settings, ("hooks", event), {**hook, "event": event})
        for event in ("SessionStart", "Stop")
    ]
    state = home / "state"
    key = f"project:{project}"
    engine.apply(engine.plan(changes, None), state_dir=state, target="example", scope_key=key)
    found = run_checks(str(home), project)
    failures = [check for check in found if check.name == "example commands"]
    assert len(failures) == 1, failures
    assert f"THATCH_HOME=/h {broken}" in failures[0].detail
    assert "cannot be started" in failures[0].detail
    assert "uv tool install" in failures[0].fix
    setup = [check for check in found if check.name.startswith("example setup")]
    assert setup[0].detail == "set up, but its plugin is not installed"


def test_claude_config_dir_is_where_doctor_looks_for_claude_code(
    home: Path, project: Path, user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from thatch.plugin import launcher
    from thatch.plugin.config import Config
    from thatch.plugin.setup import SetupContext
    from thatch.setup import engine
    from thatch_claude.target import ClaudeTarget

    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("THATCH_LOAD_PLUGINS", "sqlite,claude")
    context = SetupContext(
        briefing=BRIEFING,
        scope="global",
        project=None,
        user_home=user_home,
        command=launcher.choose().command,
        env={"THATCH_HOME": str(home)},
        environ={"CLAUDE_CONFIG_DIR": str(config)},
    )
    key = engine.scope_key(context)
    state = Config.load(str(home)).paths.state_dir
    edits = engine.plan(ClaudeTarget().changes(context), None)
    engine.apply(edits, state_dir=state, target="claude", scope_key=key)
    assert (config / "settings.json").exists()

    found = [c for c in run_checks(str(home), project) if c.name == "Claude Code setup (global)"]
    assert [c.status for c in found] == ["ok"]
    # The files it lists are Claude Code's own, under CLAUDE_CONFIG_DIR.
    assert found[0].detail.startswith(f"set up: {config / 'settings.json'}, ")
    assert f"{config / 'settings.json'} (missing)" not in found[0].detail


def test_writes_waiting_for_the_storage_are_a_warning_with_the_fix(
    home: Path, project: Path
) -> None:
    from thatch.sessions import SessionStore

    store = SessionStore(Path(rundir.locate(home=str(home)).sessions_db))
    try:
        store.keep_write(
            "recall",
            None,
            '{"ids": [1], "at": 0.0}',
            error="the server is down",
            next_at=0.0,
            limit=10,
        )
    finally:
        store.close()
    found = checks(home, project)["kept writes"]
    assert found.status == "warn"
    assert "1 writes wait" in found.detail
    assert "the server is down" in found.detail
    assert "thatch daemon status" in found.fix
