"""The real daemon tells plugins it started and is stopping, once each, however it stops."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from thatch import daemon_lock as lock

from .conftest import THATCH, Runner, claude_payload, daemon_pid

pytestmark = pytest.mark.slow

#: A plugin that is not installed: THATCH_PLUGIN_MODULES registers it from PYTHONPATH.
PROBE = """
import json, os
from thatch.plugin import hookimpl
from thatch.testing import WordHashEmbedder

def note(what, **more):
    with open(os.environ["LIFECYCLE_PROBE_LOG"], "a") as log:
        log.write(json.dumps({"what": what, **more}) + "\\n")

@hookimpl
def thatch_embedder(config):
    return WordHashEmbedder()

@hookimpl
def thatch_daemon_started(app):
    if os.environ.get("LIFECYCLE_PROBE_FAIL"):
        raise RuntimeError("probe failed on purpose")
    note("started", stores=len(app.thatch.stores()))

@hookimpl
def thatch_ingest(event, app):
    note("event", kind=event.kind)

@hookimpl
def thatch_daemon_stopping(app):
    if os.environ.get("LIFECYCLE_PROBE_FAIL"):
        raise RuntimeError("probe failed on purpose")
    # Storage is still open.
    note("stopping", stores=len(app.thatch.stores()))
"""

#: A second plugin that hears the hooks whatever the probe does.
WITNESS = """
import json, os
from thatch.plugin import hookimpl

@hookimpl
def thatch_daemon_started(app):
    with open(os.environ["LIFECYCLE_PROBE_LOG"], "a") as log:
        log.write(json.dumps({"what": "witness started"}) + "\\n")

@hookimpl
def thatch_daemon_stopping(app):
    with open(os.environ["LIFECYCLE_PROBE_LOG"], "a") as log:
        log.write(json.dumps({"what": "witness stopping"}) + "\\n")
"""


@pytest.fixture
def probe_env(tmp_path: Path) -> dict[str, str]:
    """The environment that loads the probe and the witness into the daemon the CLI starts."""
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "lifecycle_probe.py").write_text(PROBE)
    (modules / "lifecycle_witness.py").write_text(WITNESS)
    return {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(modules), os.environ.get("PYTHONPATH")])),
        "THATCH_LOAD_PLUGINS": "sqlite,claude",
        "THATCH_PLUGIN_MODULES": "lifecycle_probe,lifecycle_witness",
        "LIFECYCLE_PROBE_LOG": str(tmp_path / "probe.jsonl"),
    }


STARTED_AND_STOPPED = ["witness started", "started", "witness stopping", "stopping"]


def heard(env: dict[str, str]) -> list[str]:
    path = Path(env["LIFECYCLE_PROBE_LOG"])
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line)["what"] for line in lines]


def session_start(env: dict[str, str], cwd: Path) -> None:
    """One real hook command, answered by the daemon (an event the probe sees)."""
    payload = claude_payload("session_start", session_id="s-life", cwd=str(cwd))
    subprocess.run(
        [str(THATCH), "reminder"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **env, "THATCH_HOOK_COLD_START_MS": "20000"},
        timeout=60,
        check=True,
    )


def wait_released(home: Path, seconds: float = 60) -> None:
    from thatch.daemon.client import DaemonClient

    lock_path = DaemonClient(str(home)).located.lock_path
    deadline = time.monotonic() + seconds
    while lock.is_held(lock_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not lock.is_held(lock_path)


def test_plugins_hear_start_then_events_then_stop_on_daemon_stop(
    thatch: Runner, home: Path, tmp_path: Path, probe_env: dict[str, str]
) -> None:
    thatch("daemon", "start", env=probe_env)
    try:
        session_start(probe_env, tmp_path)
    finally:
        thatch("daemon", "stop", env=probe_env)
    # pluggy calls the plugin registered last first.
    assert heard(probe_env) == [
        "witness started",
        "started",
        "event",
        "witness stopping",
        "stopping",
    ]


def test_plugins_hear_the_stop_on_sigterm(
    thatch: Runner, home: Path, probe_env: dict[str, str]
) -> None:
    from thatch.daemon.client import DaemonClient

    thatch("daemon", "start", env=probe_env)
    pid = daemon_pid(DaemonClient(str(home)))
    assert pid is not None
    os.kill(pid, signal.SIGTERM)
    wait_released(home)
    assert heard(probe_env) == STARTED_AND_STOPPED


def test_plugins_hear_the_stop_when_the_daemon_exits_idle(
    thatch: Runner, home: Path, probe_env: dict[str, str]
) -> None:
    (home / "config").mkdir()
    (home / "config" / "config.toml").write_text("[daemon]\nidle_minutes = 0.02\n")
    thatch("daemon", "start", env=probe_env)
    wait_released(home)
    assert heard(probe_env) == STARTED_AND_STOPPED


def test_a_failing_plugin_neither_stops_the_daemon_nor_the_other_plugins(
    thatch: Runner, home: Path, probe_env: dict[str, str]
) -> None:
    env = {**probe_env, "LIFECYCLE_PROBE_FAIL": "1"}
    thatch("daemon", "start", env=env)
    assert json.loads(thatch("daemon", "status", "--json", env=env).stdout)["running"] is True
    thatch("daemon", "stop", env=env)
    assert heard(env) == ["witness started", "witness stopping"]
    from thatch.daemon.client import DaemonClient

    log = Path(DaemonClient(str(home)).located.log_path).read_text()
    assert "plugin lifecycle_probe failed in thatch_daemon_started" in log
    assert "plugin lifecycle_probe failed in thatch_daemon_stopping" in log
