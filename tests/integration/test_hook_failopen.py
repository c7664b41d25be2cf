"""The real ``thatch`` hook commands fail open: exit 0, print nothing harmful, lose nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from thatch import wire
from thatch.instructions.reminders import SAVE_REMINDER

from integration.conftest import THATCH
from integration.hook_runs import PAYLOAD, Hooks


def echo(request: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "daemon": "test", "output": f"nudge for {request['payload']['prompt']}"}


def test_the_daemons_output_is_exactly_what_is_printed(hooks: Hooks) -> None:
    fake = hooks.daemon(echo)
    completed = hooks.run("flush-tools", env={"CLAUDE_PROJECT_DIR": str(hooks.cwd)})
    assert completed.returncode == 0
    assert completed.stdout == b"nudge for hello\n"
    (request,) = fake.requests
    assert request["op"] == "hook"
    assert request["protocol"] == wire.PROTOCOL
    assert request["command"] == "flush-tools"
    assert request["payload"] == PAYLOAD
    assert request["cwd"] == str(hooks.cwd)
    assert request["env"] == {"CLAUDE_PROJECT_DIR": str(hooks.cwd)}
    assert request["json"] is False
    assert hooks.spooled() == []
    assert hooks.log_lines() == []


def test_the_generic_hook_sends_harness_event_and_json(hooks: Hooks) -> None:
    fake = hooks.daemon(lambda request: {"ok": True, "output": '{"hookSpecificOutput": {}}\n'})
    completed = hooks.run("hook", "claude", "SessionStart", "--json")
    assert completed.returncode == 0
    assert completed.stdout == b'{"hookSpecificOutput": {}}\n'
    (request,) = fake.requests
    assert (request["harness"], request["event"], request["json"]) == (
        "claude",
        "SessionStart",
        True,
    )


def test_no_daemon_exits_0_silently_and_spools_the_request(hooks: Hooks) -> None:
    completed = hooks.run("buffer-tool")
    assert completed.returncode == 0
    assert completed.stdout == b""
    (spooled,) = hooks.spooled()
    request = wire.decode(spooled.read_bytes())
    assert request["command"] == "buffer-tool"
    assert request["payload"] == PAYLOAD
    assert spooled.name == f"{spooled.name[:20]}-{request['event_id']}.json"
    (line,) = hooks.log_lines()
    assert "not running" in line
    assert "hello" not in line  # the payload never reaches the log


def test_no_hook_table_a_prompt_is_spooled_and_sent_with_nothing_printed(hooks: Hooks) -> None:
    hooks.table.unlink()
    completed = hooks.run("flush-tools", env={"CLAUDE_PROJECT_DIR": str(hooks.cwd)})
    assert completed.returncode == 0
    assert completed.stdout == b""
    (spooled,) = hooks.spooled()
    assert wire.decode(spooled.read_bytes())["payload"] == PAYLOAD
    (line,) = hooks.log_lines()
    assert "no hook table" in line
    # A daemon running takes the event and answers it all the same.
    fake = hooks.daemon(echo)
    completed = hooks.run("flush-tools")
    assert completed.stdout == b"nudge for hello\n"
    assert len(fake.requests) == 1


def test_the_home_option_chooses_where_the_event_is_spooled(hooks: Hooks, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    completed = hooks.run("--home", str(other), "buffer-batch")
    assert completed.returncode == 0
    assert hooks.spooled() == []
    assert len(hooks.spooled(other)) == 1
    assert len(hooks.log_lines(other)) == 1


def test_a_hung_daemon_cannot_hold_the_hook(hooks: Hooks) -> None:
    fake = hooks.daemon(lambda request: None)
    started = time.monotonic()
    completed = hooks.run("flush-tools", env={"THATCH_HOOK_TIMEOUT_MS": "200"})
    elapsed = time.monotonic() - started
    fake.release.set()
    assert completed.returncode == 0
    assert completed.stdout == (SAVE_REMINDER + "\n").encode()
    # A sanity bound only (the speed goal is measured in bench/).
    assert elapsed < 3
    assert len(fake.requests) == 1
    (spooled,) = hooks.spooled()
    assert wire.decode(spooled.read_bytes())["event_id"] == fake.requests[0]["event_id"]
    assert len(hooks.log_lines()) == 1


@pytest.mark.parametrize(
    "stdin",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"this is not json", id="not-json"),
        pytest.param(b'{"session_id": ', id="cut-short"),
        pytest.param(b"\xff\xfe\x00garbage", id="invalid-utf8"),
        pytest.param(b"[1, 2, 3]", id="array"),
        pytest.param(b"12", id="number"),
        pytest.param(b'{"x": "' + b"a" * (10 * 1024 * 1024) + b'"}', id="10MB"),
    ],
)
def test_malformed_stdin_exits_0_with_one_log_line(hooks: Hooks, stdin: bytes) -> None:
    fake = hooks.daemon(echo)
    completed = hooks.run("flush-tools", stdin=stdin)
    assert completed.returncode == 0
    assert completed.stdout == b""
    assert fake.requests == []
    assert hooks.spooled() == []
    assert len(hooks.log_lines()) == 1


def start_holding_stdin(hooks: Hooks, command: str, data: bytes) -> subprocess.Popen[bytes]:
    """Start ``thatch COMMAND``, write ``data`` and keep stdin open, as some harnesses do."""
    process = subprocess.Popen(
        [str(THATCH), command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=hooks.cwd,
        env=hooks.env,
    )
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.flush()
    return process


def test_stdin_never_closed_still_gets_an_answer(hooks: Hooks) -> None:
    hooks.daemon(echo)
    with start_holding_stdin(hooks, "flush-tools", json.dumps(PAYLOAD).encode()) as process:
        returncode = process.wait(timeout=30)
        assert process.stdout is not None
        stdout = process.stdout.read()
    assert returncode == 0
    assert stdout == b"nudge for hello\n"


def test_half_a_payload_on_stdin_never_closed_is_dropped(hooks: Hooks) -> None:
    fake = hooks.daemon(echo)
    with start_holding_stdin(hooks, "buffer-tool", b'{"session_id": "sess-1", "tool_') as process:
        returncode = process.wait(timeout=30)
        assert process.stdout is not None
        stdout = process.stdout.read()
    assert returncode == 0
    assert stdout == b""
    assert fake.requests == []
    assert hooks.spooled() == []
    (line,) = hooks.log_lines()
    assert "not closed" in line


def test_help_and_unknown_options_go_to_argparse(hooks: Hooks) -> None:
    helped = hooks.run("flush-tools", "--help", stdin=b"")
    assert helped.returncode == 0
    assert b"usage:" in helped.stdout
    assert hooks.log_lines() == []
    # Run by a harness, argparse's error fails open: one note, exit 0 (not 2, "block").
    wrong = hooks.run("buffer-tool", "--json", stdin=b"")
    assert wrong.returncode == 0
    assert wrong.stdout == b""
    (note,) = wrong.stderr.decode().splitlines()
    assert "unrecognized arguments: --json" in note
    assert hooks.spooled() == []  # empty stdin: no event to keep
    (line,) = hooks.log_lines()
    assert "unrecognized arguments: --json" in line
    assert "empty stdin" in line


RUNNER = textwrap.dedent(
    """
    import sys
    import thatch.rundir, thatch.wire  # allowed: measured from here on
    before = set(sys.modules)
    from thatch.hookcmd import main
    status = main(sys.argv[1:])
    new = sorted(set(sys.modules) - before)
    files = {name: getattr(sys.modules[name], "__file__", None) or "" for name in new}
    sys.stderr.write("\\n" + __import__("json").dumps({"status": status, "files": files}))
    """
)
#: Never on the success path (see the brief in thatch.hookcmd's docstring).
FORBIDDEN = {
    "argparse",
    "asyncio",
    "attr",
    "attrs",
    "cattrs",
    "dataclasses",
    "inspect",
    "logging",
    "numpy",
    "platformdirs",
    "pluggy",
    "subprocess",
    "threading",
    "tomllib",
    "typing",
}
#: stdlib-only modules of thatch a hook may load: ``private`` creates the spool
#: folder the first time, ``socketguard`` checks the socket is the user's.
ALLOWED_THATCH = {
    "thatch",
    "thatch.private",
    "thatch.rundir",
    "thatch.socketguard",
    "thatch.unicode_fix",
    "thatch.wire",
}


def test_the_success_path_imports_only_the_standard_library(hooks: Hooks) -> None:
    hooks.daemon(echo)
    completed = subprocess.run(
        [sys.executable, "-c", RUNNER, "flush-tools", "--json"],
        input=json.dumps(PAYLOAD).encode(),
        capture_output=True,
        cwd=hooks.cwd,
        env=hooks.env,
        timeout=60,
        check=False,
    )
    assert completed.stdout == b"nudge for hello\n"
    report = json.loads(completed.stderr.decode().rsplit("\n", 1)[-1])
    assert report["status"] == 0
    files: dict[str, str] = report["files"]
    assert not FORBIDDEN & {name.split(".")[0] for name in files} - {"thatch"}
    outside = [
        name
        for name in files
        if name.split(".")[0] == "thatch"
        and name not in ALLOWED_THATCH
        and not name.startswith("thatch.hookcmd")
    ]
    assert outside == []
    assert "thatch.logfile" not in files
    third_party = [name for name, path in files.items() if "site-packages" in path]
    assert third_party == []
