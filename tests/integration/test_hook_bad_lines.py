"""A hook run with a closed stream, or with arguments this thatch does not know, exits 0.

Claude Code takes exit 2 from a hook as "block the prompt", and any other
failure as an error shown to the user: a hook written by a newer setup, or
run with its stdout or stderr closed, must fail open like any other hook
(the real console script; no daemon, THATCH_NO_AUTOSTART=1).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from thatch import wire

from integration.conftest import THATCH, at_terminal
from integration.hook_runs import PAYLOAD, Hooks


def shell(hooks: Hooks, command: str, payload: Path) -> subprocess.CompletedProcess[bytes]:
    """``command`` run by bash, stdin from ``payload``, then bash closes what ``>&-`` names."""
    return subprocess.run(
        ["bash", "-c", f"exec < {shlex.quote(str(payload))}; {command}"],
        capture_output=True,
        cwd=hooks.cwd,
        env={**hooks.env, "THATCH": str(THATCH)},
        timeout=60,
        check=False,
    )


@pytest.fixture
def payload_file(tmp_path: Path) -> Path:
    path = tmp_path / "prompt.json"
    path.write_text(json.dumps(PAYLOAD))
    return path


@pytest.mark.parametrize("closing", [">&-", "2>&-", ">&- 2>&-", "<&- >&-"])
@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit"])
def test_a_hook_with_a_closed_stream_exits_0(
    hooks: Hooks, payload_file: Path, closing: str, event: str
) -> None:
    completed = shell(hooks, f'"$THATCH" hook claude {event} {closing}', payload_file)
    assert completed.returncode == 0, completed.stderr
    assert b"Traceback" not in completed.stderr
    assert b"Error" not in completed.stderr
    if "<&-" in closing:
        assert hooks.spooled() == []  # no payload: nothing to keep
        return
    # The stand-in answer went nowhere, not into the spool file the hook opened.
    (path,) = hooks.spooled()
    request = wire.decode(path.read_bytes().strip())
    assert request["payload"] == PAYLOAD
    assert request["event"] == event


def test_a_closed_stdout_gets_no_note_meant_for_stderr(hooks: Hooks, payload_file: Path) -> None:
    # An unknown command's note goes to stderr; with stderr closed, never to stdout.
    completed = shell(hooks, '"$THATCH" echo hello 2>&-', payload_file)
    assert completed.returncode == 0
    assert completed.stdout == b""


@pytest.mark.parametrize(
    ("args", "event"),
    [
        (["hook", "claude", "UserPromptSubmit", "--bogus"], "UserPromptSubmit"),
        (["hook", "claude", "UserPromptSubmit", "--format", "v2"], "UserPromptSubmit"),
        (["hook", "claude", "PostToolBatch", "extra"], "PostToolBatch"),
        (["reminder", "--verbose"], None),
        (["flush-tools", "--bogus"], None),
        (["flush-predictions", "--bogus"], None),
        (["buffer-batch", "--json"], None),
        (["buffer-tool", "-x"], None),
    ],
)
def test_an_argument_error_under_a_hook_command_exits_0_and_spools_the_event(
    hooks: Hooks, args: list[str], event: str | None
) -> None:
    completed = hooks.run(*args)
    assert completed.returncode == 0  # Claude Code would take 2 as "block the prompt"
    assert completed.stdout == b""
    (note,) = completed.stderr.decode().splitlines()
    assert note.startswith("thatch: ignored the arguments of `thatch ")
    assert "run thatch setup" in note
    assert "spooled" in note
    (path,) = hooks.spooled()
    request = wire.decode(path.read_bytes().strip())
    assert request["command"] == args[0]
    assert request["event"] == event
    assert request["payload"] == PAYLOAD
    assert any("ignored the arguments" in line for line in hooks.log_lines())


@pytest.mark.parametrize("args", [["hook"], ["hook", "claude"], ["--home", "/nowhere", "hook"]])
def test_a_hook_command_missing_its_arguments_exits_0_with_a_note(
    hooks: Hooks, args: list[str]
) -> None:
    completed = hooks.run(*args)
    assert completed.returncode == 0
    assert completed.stdout == b""
    (note,) = completed.stderr.decode().splitlines()
    assert "ignored the arguments of `thatch " in note
    assert "the payload was not read" in note
    assert hooks.spooled() == []


def test_a_bad_hook_line_typed_at_a_terminal_still_exits_2(hooks: Hooks) -> None:
    completed = at_terminal(
        ["hook", "claude", "UserPromptSubmit", "--bogus"], {**os.environ, **hooks.env}, 60
    )
    assert completed.returncode == 2
    assert "unrecognized arguments: --bogus" in completed.stderr
