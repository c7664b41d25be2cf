"""A hook command in-process against a fake daemon: print its answer, or spool and exit 0.

The cold-start cases at the end: a session start or a prompt waits for a
daemon that is starting or warming up; other events do not.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import thatch
from fake_daemon import FakeDaemon, Responder, write_hook_table
from thatch import rundir, wire
from thatch.hookcmd import HookArgs, autostart, backstop, cap, command, spool
from thatch.hookcmd.command import run_hook
from thatch.instructions import reminders as reminder_text

#: The pid a fake spawn reports: this process, which is nobody's child to wait for.
FAKE_PID = os.getpid()
#: Starting a real process, for the tests that need one (the harness replaces _spawn).
REAL_SPAWN = autostart._spawn


class Harness:
    """Runs a hook command in-process with a given stdin and captures its stdout."""

    def __init__(self, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.home = home
        self.located = rundir.locate({}, home=str(home))
        # As after `thatch setup` or a daemon start: the hook knows the harnesses.
        self.table = write_hook_table(home)
        self.env: dict[str, str] = {"THATCH_HOME": str(home)}
        self.spawned: list[tuple[list[str], dict[str, str]]] = []
        self.daemons: list[FakeDaemon] = []
        #: Runs in place of starting the daemon; returns the pid to report.
        self.on_spawn: Callable[[], int] = lambda: FAKE_PID
        monkeypatch.setattr(autostart, "_spawn", self._record_spawn)

    def _record_spawn(self, argv: list[str], env: dict[str, str]) -> int:
        self.spawned.append((argv, env))
        return self.on_spawn()

    def daemon(self, respond: Responder, notice: Responder | None = None) -> FakeDaemon:
        fake = FakeDaemon(self.located.socket_path, respond, notice)
        self.daemons.append(fake)
        return fake

    def daemon_later(self, seconds: float, respond: Responder) -> list[FakeDaemon]:
        """Make the next spawn start a fake daemon ``seconds`` later; it appears in the list."""
        started: list[FakeDaemon] = []

        def spawn() -> int:
            def later() -> None:
                time.sleep(seconds)
                started.append(self.daemon(respond))

            threading.Thread(target=later, daemon=True).start()
            return FAKE_PID

        self.on_spawn = spawn
        return started

    def run(self, args: HookArgs, stdin: bytes = b'{"session_id": "s1"}') -> str:
        in_read, in_write = os.pipe()
        out_read, out_write = os.pipe()
        try:
            os.write(in_write, stdin)
            os.close(in_write)
            status = run_hook(args, stdin_fd=in_read, stdout_fd=out_write, environ=self.env)
            os.close(out_write)
            assert status == 0
            chunks = []
            while chunk := os.read(out_read, 65536):
                chunks.append(chunk)
            return b"".join(chunks).decode()
        finally:
            for fd in (in_read, out_read):
                os.close(fd)

    def spooled(self) -> list[dict[str, Any]]:
        folder = Path(self.located.spool_dir)
        if not folder.exists():
            return []
        return [wire.decode(path.read_bytes()) for path in sorted(folder.iterdir())]

    def log_lines(self) -> list[str]:
        path = Path(self.located.log_path)
        return path.read_text().splitlines() if path.exists() else []

    def close(self) -> None:
        for fake in self.daemons:
            fake.close()


@pytest.fixture
def harness(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    made = Harness(home, monkeypatch)
    yield made
    made.close()


#: What a prompt, and a session start, print when no daemon answers them
#: (see tests/unit/test_parity_hook_fallback.py).
SAVE_REMINDER = reminder_text.SAVE_REMINDER + "\n"
SESSION_REMINDER = reminder_text.SESSION_REMINDER_STATIC + "\n"


def echo(request: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "daemon": "0.1.0", "output": f"seen {request['payload']['session_id']}"}


def test_the_daemons_output_is_printed_with_a_newline(harness: Harness) -> None:
    harness.daemon(echo)
    assert harness.run(HookArgs("flush-tools")) == "seen s1\n"
    assert harness.spooled() == []
    assert harness.log_lines() == []


@pytest.mark.parametrize(("output", "printed"), [("done\n", "done\n"), ("", ""), (None, "")])
def test_output_keeps_one_trailing_newline_and_empty_prints_nothing(
    harness: Harness, output: str | None, printed: str
) -> None:
    harness.daemon(lambda request: {"ok": True, "output": output})
    assert harness.run(HookArgs("buffer-tool")) == printed


def test_the_request_carries_the_event(harness: Harness) -> None:
    fake = harness.daemon(echo)
    harness.env.update({"CLAUDE_PROJECT_DIR": "/p", "CURSOR_VERSION": "", "UNRELATED": "x"})
    before = time.time()
    harness.run(HookArgs("hook", "claude", "UserPromptSubmit", json=True))
    harness.run(HookArgs("hook", "claude", "UserPromptSubmit", json=True))
    first, second = fake.requests
    assert first["protocol"] == wire.PROTOCOL
    assert first["client"] == thatch.__version__
    assert first["op"] == "hook"
    assert (first["command"], first["harness"], first["event"]) == (
        "hook",
        "claude",
        "UserPromptSubmit",
    )
    assert first["payload"] == {"session_id": "s1"}
    assert first["json"] is True
    assert first["cwd"] == os.getcwd()
    assert first["env"] == {"CLAUDE_PROJECT_DIR": "/p", "CURSOR_VERSION": ""}
    assert before <= first["received_at"] <= time.time()
    assert len(first["event_id"]) == 32
    int(first["event_id"], 16)
    assert first["event_id"] != second["event_id"]


def test_plain_commands_send_no_harness(harness: Harness) -> None:
    fake = harness.daemon(echo)
    harness.run(HookArgs("buffer-batch"))
    (request,) = fake.requests
    assert (request["command"], request["harness"], request["event"]) == (
        "buffer-batch",
        None,
        None,
    )
    assert request["json"] is False


def test_no_daemon_spools_the_request_and_starts_one(harness: Harness) -> None:
    assert harness.run(HookArgs("buffer-tool")) == ""
    (spooled,) = harness.spooled()
    assert spooled["command"] == "buffer-tool"
    assert spooled["payload"] == {"session_id": "s1"}
    ((argv, env),) = harness.spawned
    assert argv == autostart.daemon_command()
    assert argv[-4:] == ["-m", "thatch", "daemon", "run"]
    assert env["THATCH_HOME"] == str(harness.home)
    (line,) = harness.log_lines()
    assert "not running" in line
    assert "spooled" in line
    assert "starting the daemon" in line


def test_spawns_are_spaced_out(harness: Harness) -> None:
    for _ in range(3):
        harness.run(HookArgs("buffer-tool"))
    assert len(harness.spawned) == 1
    assert len(harness.spooled()) == 3
    stamp = Path(harness.located.runtime_dir) / autostart.STAMP_NAME
    old = time.time() - 10
    os.utime(stamp, (old, old))
    harness.run(HookArgs("buffer-tool"))
    assert len(harness.spawned) == 2


def test_no_autostart_keeps_the_daemon_down(harness: Harness) -> None:
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    harness.run(HookArgs("buffer-tool"))
    assert harness.spawned == []
    assert len(harness.spooled()) == 1
    assert autostart.NO_AUTOSTART_VAR in harness.log_lines()[0]


def test_a_stale_socket_counts_as_no_daemon(harness: Harness) -> None:
    path = harness.located.socket_path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stale:
        stale.bind(path)
    try:
        harness.run(HookArgs("flush-tools"))
    finally:
        os.unlink(path)
    assert len(harness.spooled()) == 1
    assert len(harness.spawned) == 1


def test_an_error_answer_spools_without_starting_a_daemon(harness: Harness) -> None:
    harness.daemon(lambda request: {"ok": False, "error": "storage is locked"})
    assert harness.run(HookArgs("flush-tools")) == SAVE_REMINDER
    assert len(harness.spooled()) == 1
    assert harness.spawned == []
    (line,) = harness.log_lines()
    assert "storage is locked" in line


def test_an_outdated_daemon_is_replaced(harness: Harness) -> None:
    harness.daemon(lambda request: {"ok": False, "error": "outdated", "restart": True})
    harness.run(HookArgs("flush-tools"))
    assert len(harness.spooled()) == 1
    ((argv, _env),) = harness.spawned
    # It waits for the outdated one to let go of the lock; an ordinary start does not.
    assert argv == autostart.daemon_command(replacing=True)
    assert argv[-1] == "--replacing"


def test_a_hung_daemon_times_out_and_the_event_is_spooled(harness: Harness) -> None:
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "100"
    fake = harness.daemon(lambda request: None)
    assert harness.run(HookArgs("flush-tools")) == SAVE_REMINDER
    fake.release.set()
    assert len(harness.spooled()) == 1
    assert harness.spawned == []
    (line,) = harness.log_lines()
    assert "did not answer within 100 ms" in line


def test_a_garbled_answer_is_spooled(harness: Harness) -> None:
    path = harness.located.socket_path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen()

    def garble() -> None:
        connection, _ = server.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"this is not json\n")

    thread = threading.Thread(target=garble)
    thread.start()
    try:
        assert harness.run(HookArgs("reminder")) == SESSION_REMINDER
    finally:
        thread.join()
        server.close()
        os.unlink(path)
    assert len(harness.spooled()) == 1
    assert "could not be reached" in harness.log_lines()[0]


@pytest.mark.parametrize("stdin", [b"", b"nope", b"[1]", b"\xff", b"7"])
def test_bad_stdin_is_logged_once_and_neither_sent_nor_spooled(
    harness: Harness, stdin: bytes
) -> None:
    fake = harness.daemon(echo)
    assert harness.run(HookArgs("flush-tools"), stdin=stdin) == ""
    assert fake.requests == []
    assert harness.spooled() == []
    assert len(harness.log_lines()) == 1


def test_a_bad_cap_setting_is_logged_but_the_hook_still_runs(harness: Harness) -> None:
    harness.daemon(echo)
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "soon"
    assert harness.run(HookArgs("flush-tools")) == "seen s1\n"
    (line,) = harness.log_lines()
    assert "THATCH_HOOK_TIMEOUT_MS" in line


def test_the_backstop_ends_a_hang_and_keeps_the_event(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    exits: list[int] = []
    monkeypatch.setattr(backstop, "_exit", exits.append)

    def hang(*args: object, **kwargs: object) -> dict[str, Any]:
        time.sleep(10)
        return {"ok": True, "output": "too late"}

    monkeypatch.setattr(wire, "request", hang)
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "100"
    started = time.monotonic()
    assert harness.run(HookArgs("flush-tools")) == SAVE_REMINDER
    assert time.monotonic() - started < 5  # the sleep was cut short, not waited out
    assert len(harness.spooled()) == 1
    (line,) = harness.log_lines()
    assert "cap of 100 ms was reached" in line
    assert exits == []


@pytest.mark.parametrize("error", [KeyboardInterrupt(), RuntimeError("a bug"), MemoryError()])
def test_anything_raised_still_exits_0_and_spools(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    def fail(*args: object, **kwargs: object) -> dict[str, Any]:
        raise error

    monkeypatch.setattr(wire, "request", fail)
    assert harness.run(HookArgs("buffer-tool")) == ""
    assert len(harness.spooled()) == 1
    assert len(harness.log_lines()) == 1


def test_an_unwritable_spool_is_logged_as_lost(harness: Harness) -> None:
    state = Path(harness.located.state_dir)
    state.mkdir(parents=True, exist_ok=True)  # the hook table may be there
    (state / "spool").write_text("a file where the folder should be")
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    assert harness.run(HookArgs("buffer-tool")) == ""
    (line,) = harness.log_lines()
    assert "could not spool" in line


def test_a_closed_stdout_is_not_an_error(harness: Harness) -> None:
    harness.daemon(echo)
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    os.write(in_write, b'{"session_id": "s1"}')
    os.close(in_write)
    os.close(out_read)
    try:
        assert (
            run_hook(
                HookArgs("flush-tools"), stdin_fd=in_read, stdout_fd=out_write, environ=harness.env
            )
            == 0
        )
    finally:
        os.close(in_read)
        os.close(out_write)
    assert harness.spooled() == []


def test_the_previous_alarm_handler_is_restored(harness: Harness) -> None:
    def mine(signum: int, frame: object) -> None:
        pass

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        harness.daemon(echo)
        harness.run(HookArgs("flush-tools"))
        assert signal.getsignal(signal.SIGALRM) is mine
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_the_home_option_wins_over_thatch_home(harness: Harness, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    harness.run(HookArgs("buffer-tool", home=str(other)))
    assert harness.spooled() == []
    spooled = list((other / "state" / "spool").iterdir())
    assert len(spooled) == 1
    assert json.loads(spooled[0].read_bytes())["command"] == "buffer-tool"


# -- cold start: session starts and prompts wait for a daemon that is not ready --------
WARMING = {"ok": True, "warming": True}
PROMPTS_AND_STARTS = [
    HookArgs("reminder"),
    HookArgs("flush-tools"),
    HookArgs("flush-predictions"),
    HookArgs("hook", "claude", "SessionStart", json=True),
    HookArgs("hook", "claude", "UserPromptSubmit"),
    HookArgs("hook", "cursor", "beforeSubmitPrompt"),
    HookArgs("hook", "opencode", "chat.message"),
]
NOBODY_READS = [
    HookArgs("buffer-tool"),
    HookArgs("buffer-batch"),
    HookArgs("hook", "claude", "PostToolUse"),
    HookArgs("hook", "claude", "Stop"),
    HookArgs("hook", "claude", "PreCompact"),
]


def spool_locked(harness: Harness) -> list[bool]:
    """For each spooled file, whether some hook still holds its lock."""
    import fcntl

    held = []
    for path in sorted(Path(harness.located.spool_dir).glob("*.json")):
        with path.open("rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(True)
            else:
                held.append(False)
    return held


@pytest.mark.parametrize("args", PROMPTS_AND_STARTS, ids=repr)
def test_only_events_the_agent_reads_ask_for_the_warming_notice(
    harness: Harness, args: HookArgs
) -> None:
    fake = harness.daemon(echo)
    harness.run(args)
    assert fake.requests[0]["warming_notice"] is True


@pytest.mark.parametrize("args", NOBODY_READS, ids=repr)
def test_events_nobody_reads_ask_for_no_notice(harness: Harness, args: HookArgs) -> None:
    fake = harness.daemon(echo)
    harness.run(args)
    assert "warming_notice" not in fake.requests[0]


@pytest.mark.parametrize("args", PROMPTS_AND_STARTS[:2], ids=repr)
def test_no_daemon_a_session_start_or_prompt_waits_for_the_one_it_starts(
    harness: Harness, args: HookArgs
) -> None:
    seen_in_spool: list[list[dict[str, Any]]] = []
    locked: list[list[bool]] = []

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        # The event was spooled before the daemon was started, and is held meanwhile.
        seen_in_spool.append(harness.spooled())
        locked.append(spool_locked(harness))
        return echo(request)

    started = harness.daemon_later(0.3, respond)
    assert harness.run(args) == "seen s1\n"
    (fake,) = started
    (request,) = fake.requests
    ((spooled,),) = seen_in_spool
    assert spooled == request  # the same event, so the daemon takes it once
    assert locked == [[True]]
    # Answered: the spooled copy is gone and nothing waits for a replay.
    assert harness.spooled() == []
    assert len(harness.spawned) == 1
    (line,) = harness.log_lines()
    assert "not running" in line
    assert "event spooled as" in line
    assert "starting the daemon" in line
    assert "the spooled copy was removed" in line
    assert "ms after the hook started" in line


@pytest.mark.parametrize("args", NOBODY_READS[:3], ids=repr)
def test_no_daemon_events_nobody_reads_spool_and_leave_at_once(
    harness: Harness, args: HookArgs
) -> None:
    started = harness.daemon_later(0.3, echo)
    assert harness.run(args) == ""
    assert len(harness.spooled()) == 1
    assert spool_locked(harness) == [False]
    assert len(harness.spawned) == 1
    time.sleep(0.5)  # the daemon comes up after the hook is gone
    (fake,) = started
    assert fake.requests == []


# -- without the hook table ------------------------------------------------------------


@pytest.mark.parametrize("args", PROMPTS_AND_STARTS[:2], ids=repr)
def test_without_a_hook_table_a_cold_daemon_is_not_waited_for_and_nothing_printed(
    harness: Harness, args: HookArgs
) -> None:
    harness.table.unlink()
    started = harness.daemon_later(0.3, echo)
    assert harness.run(args) == ""
    # The event is kept and a daemon started, which writes the table for later hooks.
    (spooled,) = harness.spooled()
    assert spooled["payload"] == {"session_id": "s1"}
    assert "warming_notice" not in spooled
    assert len(harness.spawned) == 1
    (line,) = harness.log_lines()
    assert "no hook table" in line
    assert "thatch setup" in line
    time.sleep(0.5)
    (fake,) = started
    assert fake.requests == []


def test_without_a_hook_table_a_running_daemon_still_gets_the_event(harness: Harness) -> None:
    harness.table.write_text("{not json")
    fake = harness.daemon(echo)
    harness.env["CLAUDE_PROJECT_DIR"] = "/p"
    assert harness.run(HookArgs("flush-tools")) == "seen s1\n"
    (request,) = fake.requests
    # The harnesses' variables are in the table: core's alone are sent.
    assert request["env"] == {}
    assert harness.spooled() == []
    assert harness.log_lines() == []


def test_without_a_hook_table_a_hung_daemon_leaves_the_event_spooled(harness: Harness) -> None:
    harness.table.unlink()
    harness.daemon(lambda request: {"ok": False, "error": "storage is locked"})
    assert harness.run(HookArgs("reminder")) == ""
    assert len(harness.spooled()) == 1


def test_a_daemon_that_never_comes_ends_the_wait_at_the_allowance(harness: Harness) -> None:
    harness.env[cap.COLD_START_ENV_VAR] = "400"
    assert harness.run(HookArgs("flush-tools")) == SAVE_REMINDER
    # Kept for the daemon, and let go of: a replay can take it.
    assert len(harness.spooled()) == 1
    assert spool_locked(harness) == [False]
    (line,) = harness.log_lines()
    assert "event spooled as" in line
    assert "400 ms" in line


def test_a_cold_start_starts_a_daemon_even_right_after_another_start(harness: Harness) -> None:
    # A tool call's hook started one just now, which has stopped since (idle, or killed):
    # waiting on the stamp alone would wait for nothing.
    runtime = Path(harness.located.runtime_dir)
    runtime.mkdir(parents=True)
    (runtime / autostart.STAMP_NAME).touch()
    assert harness.run(HookArgs("buffer-tool")) == ""
    assert harness.spawned == []
    harness.daemon_later(0.2, echo)
    assert harness.run(HookArgs("flush-tools")) == "seen s1\n"
    assert len(harness.spawned) == 1


@pytest.mark.parametrize(
    ("status", "said"),
    [(3, "the daemon exited with status 3 while starting"), (0, "holds the lock")],
)
def test_a_daemon_that_exits_before_listening_ends_the_wait_early(
    harness: Harness, status: int, said: str
) -> None:
    harness.env[cap.COLD_START_ENV_VAR] = "60000"
    failing = [sys.executable, "-c", f"raise SystemExit({status})"]
    harness.on_spawn = lambda: REAL_SPAWN(failing, {})
    started = time.monotonic()
    assert harness.run(HookArgs("reminder")) == SESSION_REMINDER
    # A sanity bound only: far below the 60 s allowance it would otherwise wait.
    assert time.monotonic() - started < 30
    assert len(harness.spooled()) == 1
    (line,) = harness.log_lines()
    assert said in line


def test_no_autostart_means_no_wait(harness: Harness) -> None:
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    harness.env[cap.COLD_START_ENV_VAR] = "60000"
    started = time.monotonic()
    assert harness.run(HookArgs("reminder")) == SESSION_REMINDER
    assert time.monotonic() - started < 30  # sanity bound: it did not wait the minute
    assert harness.spawned == []
    assert len(harness.spooled()) == 1
    assert autostart.NO_AUTOSTART_VAR in harness.log_lines()[0]


@pytest.mark.parametrize("allowance", ["0", "300", "100"])
def test_an_allowance_not_above_the_cap_keeps_the_fast_path(
    harness: Harness, allowance: str
) -> None:
    harness.env[cap.COLD_START_ENV_VAR] = allowance
    started = harness.daemon_later(0.2, echo)
    assert harness.run(HookArgs("flush-tools")) == SAVE_REMINDER
    assert len(harness.spooled()) == 1
    time.sleep(0.4)
    (fake,) = started
    assert fake.requests == []


def test_a_bad_allowance_setting_is_logged_and_the_default_used(harness: Harness) -> None:
    harness.env[cap.COLD_START_ENV_VAR] = "soon"
    harness.daemon_later(0.2, echo)
    assert harness.run(HookArgs("flush-tools")) == "seen s1\n"
    (line,) = harness.log_lines()
    assert cap.COLD_START_ENV_VAR in line


def test_an_error_answer_after_a_cold_start_leaves_the_event_spooled(harness: Harness) -> None:
    harness.daemon_later(0.2, lambda request: {"ok": False, "error": "storage is locked"})
    assert harness.run(HookArgs("flush-tools")) == SAVE_REMINDER
    assert len(harness.spooled()) == 1
    assert spool_locked(harness) == [False]
    assert "storage is locked" in harness.log_lines()[0]


def test_a_warming_daemon_is_waited_for_past_the_cap(harness: Harness) -> None:
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "100"

    def slow(request: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.4)  # the model loads, well past the 100 ms cap
        return echo(request)

    harness.daemon(slow, notice=lambda request: WARMING)
    assert harness.run(HookArgs("hook", "claude", "UserPromptSubmit")) == "seen s1\n"
    assert harness.spooled() == []
    assert harness.spawned == []
    (line,) = harness.log_lines()
    assert "warming up" in line
    assert "ms after the hook started" in line


def test_a_warming_daemon_without_an_allowance_times_out_at_the_cap(harness: Harness) -> None:
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "100"
    harness.env[cap.COLD_START_ENV_VAR] = "0"
    fake = harness.daemon(lambda request: None, notice=lambda request: WARMING)
    assert harness.run(HookArgs("flush-tools")) == SAVE_REMINDER
    fake.release.set()
    (spooled,) = harness.spooled()
    assert spooled["event_id"] == fake.requests[0]["event_id"]
    assert "did not answer within 100 ms" in harness.log_lines()[0]


def test_a_warming_daemon_that_outlasts_the_allowance_gets_the_event_spooled(
    harness: Harness,
) -> None:
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "100"
    harness.env[cap.COLD_START_ENV_VAR] = "300"
    fake = harness.daemon(lambda request: None, notice=lambda request: WARMING)
    assert harness.run(HookArgs("reminder")) == SESSION_REMINDER
    fake.release.set()
    (spooled,) = harness.spooled()
    assert spooled["event_id"] == fake.requests[0]["event_id"]
    assert "within 300 ms" in harness.log_lines()[0]


def test_the_backstop_follows_the_extended_deadline(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    exits: list[int] = []
    monkeypatch.setattr(backstop, "_exit", exits.append)
    waited: list[float] = []
    timer_left: list[float] = []

    def warming_then_hang(
        path: str, message: dict[str, Any], timeout: float, on_warming: Any = None
    ) -> dict[str, Any]:
        assert on_warming is not None
        waited.append(on_warming())
        timer_left.append(signal.getitimer(signal.ITIMER_REAL)[0])
        time.sleep(10)  # ignores the socket timeout: only the backstop can end this
        return {"ok": True, "output": "too late"}

    monkeypatch.setattr(wire, "request", warming_then_hang)
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "100"
    harness.env[cap.COLD_START_ENV_VAR] = "400"
    assert harness.run(HookArgs("flush-tools")) == SAVE_REMINDER
    # The wait was given the allowance, not what was left of the cap.
    (seconds,) = waited
    assert 0.1 < seconds <= 0.4
    # The backstop was moved along: it would have fired within the 100 ms cap.
    (left,) = timer_left
    assert 0.1 < left <= 0.4
    assert len(harness.spooled()) == 1
    (line,) = harness.log_lines()
    assert "cold-start allowance of 400 ms was reached" in line
    assert exits == []


def test_the_warming_notice_needs_no_waiting_from_other_events(harness: Harness) -> None:
    # A daemon sends the notice only when asked; one that sends it anyway is still read right.
    harness.daemon(echo, notice=lambda request: WARMING)
    assert harness.run(HookArgs("buffer-tool")) == "seen s1\n"
    assert harness.log_lines() == []


# -- an event that arrived is spooled before it is sent, and the cap waits for it ------
def slow_writes(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Make every spool file take ``seconds`` to write (a busy disk, a large payload)."""
    real_create = spool._create

    def slow(tmp: str, spool_dir: str) -> int:
        time.sleep(seconds)
        return real_create(tmp, spool_dir)

    monkeypatch.setattr(spool, "_create", slow)


def test_the_event_is_spooled_and_locked_while_it_is_sent_then_removed(harness: Harness) -> None:
    during: list[list[bool]] = []

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        during.append(spool_locked(harness))
        assert [held["event_id"] for held in harness.spooled()] == [request["event_id"]]
        return echo(request)

    harness.daemon(respond)
    assert harness.run(HookArgs("buffer-tool")) == "seen s1\n"
    assert during == [[True]]  # the daemon's replay leaves it to this hook meanwhile
    assert harness.spooled() == []
    assert harness.log_lines() == []


def test_an_unwritable_spool_is_not_logged_when_the_daemon_takes_the_event(
    harness: Harness,
) -> None:
    state = Path(harness.located.state_dir)
    state.mkdir(parents=True, exist_ok=True)  # the hook table may be there
    (state / "spool").write_text("a file where the folder should be")
    harness.daemon(echo)
    assert harness.run(HookArgs("buffer-tool")) == "seen s1\n"
    assert harness.log_lines() == []


def test_the_cap_passing_while_the_event_is_spooled_does_not_lose_it(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    exits: list[int] = []
    monkeypatch.setattr(backstop, "_exit", exits.append)
    # Spooling this MiB may take 2 s: the cap passes mid-write, the hard end stays far off.
    monkeypatch.setattr(command, "SPOOL_SECONDS_PER_MIB", 2.0)
    slow_writes(monkeypatch, 0.2)
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "100"
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    stdin = tmp_path / "stdin"
    stdin.write_text(json.dumps({"session_id": "s1", "output": "x" * (1024 * 1024)}))
    with stdin.open("rb") as handle:
        run_hook(HookArgs("buffer-tool"), stdin_fd=handle.fileno(), environ=harness.env)
    (spooled,) = harness.spooled()
    assert spooled["payload"]["session_id"] == "s1"
    assert spool_locked(harness) == [False]  # let go of: the daemon replays it
    (line,) = harness.log_lines()
    assert "cap of 100 ms was reached" in line
    assert "event spooled as" in line
    assert exits == []


def test_the_backstop_writes_the_log_line_before_it_ends_the_hook(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    logged_at_exit: list[list[str]] = []

    def exit_now(status: int) -> None:
        assert status == 0
        logged_at_exit.append(harness.log_lines())

    monkeypatch.setattr(backstop, "_exit", exit_now)
    # Far past the spooling budget of a tiny payload (the reserve, 20 ms at this cap).
    slow_writes(monkeypatch, 0.5)
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "100"
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    harness.run(HookArgs("buffer-tool"))
    ((line,),) = logged_at_exit
    assert "ms past the hook cap of 100 ms" in line
    assert "still being spooled" in line
    assert len(harness.log_lines()) == 1  # the hook, let go on here, logs nothing more


def test_the_cap_passing_just_before_the_timer_stops_is_not_a_traceback(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The alarm can fire after the answer was handled, before finish() stops it."""
    harness.daemon(echo)
    real_cancel = backstop.Backstop.cancel
    fired: list[bool] = []

    def cancel_late(self: backstop.Backstop) -> None:
        if not fired:
            fired.append(True)
            raise backstop.Deadline  # as the handler raises it at that instant
        real_cancel(self)

    monkeypatch.setattr(backstop.Backstop, "cancel", cancel_late)
    assert harness.run(HookArgs("flush-tools")) == "seen s1\n"
    assert fired == [True]
    assert harness.spooled() == []  # answered: the spooled copy was removed


def test_a_daemon_that_gives_way_to_another_starting_one_is_waited_for(
    harness: Harness,
) -> None:
    """Two hooks (or a hook and thatch mcp) started a daemon at the same instant."""
    from thatch import daemon_lock as lock

    harness.env[cap.COLD_START_ENV_VAR] = "60000"
    Path(harness.located.runtime_dir).mkdir(parents=True, exist_ok=True)
    held: list[int] = []

    def spawn_beside_another() -> int:
        # The other daemon wins the lock and listens a moment later; ours exits 0.
        fd = lock.acquire(harness.located.lock_path)
        assert fd is not None
        held.append(fd)
        threading.Timer(0.3, lambda: harness.daemon(echo)).start()
        return REAL_SPAWN([sys.executable, "-c", "raise SystemExit(0)"], {})

    harness.on_spawn = spawn_beside_another
    try:
        assert harness.run(HookArgs("reminder")) == "seen s1\n"
    finally:
        for fd in held:
            lock.release(fd)
    assert harness.spooled() == []  # answered: the spooled copy was removed


def test_the_cap_passing_after_the_run_while_the_stand_in_is_chosen_is_not_a_traceback(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first firing after a finished run only starts the grace; the hook still logs."""
    exits: list[int] = []
    monkeypatch.setattr(backstop, "_exit", exits.append)
    real_stand_in = command._HookRun.stand_in

    def alarm_then_stand_in(self: command._HookRun, stdout_fd: int) -> None:
        self.backstop._on_alarm(signal.SIGALRM, None)  # as the timer fires at this instant
        real_stand_in(self, stdout_fd)

    monkeypatch.setattr(command._HookRun, "stand_in", alarm_then_stand_in)
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "100"
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    assert harness.run(HookArgs("buffer-tool")) == ""
    assert len(harness.spooled()) == 1
    (line,) = harness.log_lines()
    assert "event spooled as" in line
    assert exits == []


# -- the spooled copy of an event the daemon did not take is redacted ------------------
# Built by concatenation so the repository holds no string that looks like a live key.
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "ZyXwVuTsRqZyXwVuTsRqZyXwVuTsRqpOnMlK"
SECRET_PAYLOAD = json.dumps(
    {
        "session_id": "s1",
        "tool_name": "Bash",
        "tool_response": {"stdout": f"AWS_KEY={AWS_KEY} GITHUB={GITHUB_TOKEN}"},
    }
).encode()


def spool_text(harness: Harness) -> str:
    (path,) = sorted(Path(harness.located.spool_dir).glob("*.json"))
    return path.read_text()


@pytest.mark.parametrize(
    "daemon",
    [
        "none",
        "error answer",
        "hung",
    ],
)
def test_the_spooled_copy_left_for_a_replay_holds_no_secret(harness: Harness, daemon: str) -> None:
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    harness.env["THATCH_HOOK_TIMEOUT_MS"] = "150"
    fake = None
    if daemon == "error answer":
        harness.daemon(lambda request: {"ok": False, "error": "storage is locked"})
    elif daemon == "hung":
        fake = harness.daemon(lambda request: None)
    harness.run(HookArgs("hook", "claude", "PostToolUse"), stdin=SECRET_PAYLOAD)
    if fake is not None:
        fake.release.set()
    text = spool_text(harness)
    assert AWS_KEY not in text
    assert GITHUB_TOKEN not in text
    (request,) = harness.spooled()
    assert request["payload"]["tool_response"]["stdout"] == (
        "AWS_KEY=[REDACTED:aws-access-key-id] GITHUB=[REDACTED:github-token]"
    )
    assert (request["command"], request["harness"], request["event"]) == (
        "hook",
        "claude",
        "PostToolUse",
    )
    (path,) = Path(harness.located.spool_dir).iterdir()
    assert path.name.endswith(f"-{request['event_id']}.json")
    assert spool_locked(harness) == [False]  # left for the replay
    (line,) = harness.log_lines()
    assert "texts of the spooled copy redacted" in line


def test_the_spooled_copy_is_not_rewritten_when_nothing_in_it_is_secret(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    harness.run(HookArgs("buffer-tool"))
    (line,) = harness.log_lines()
    assert "redacted" not in line
    assert [request["payload"] for request in harness.spooled()] == [{"session_id": "s1"}]


def test_an_event_the_daemon_takes_is_never_redacted_by_the_hook(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from thatch.redact import payload as redact_payload

    calls: list[object] = []
    monkeypatch.setattr(redact_payload, "redacted_request", lambda r: calls.append(r))
    harness.daemon(echo)
    assert harness.run(HookArgs("buffer-tool"), stdin=SECRET_PAYLOAD) == "seen s1\n"
    assert calls == []  # the usual path: the daemon redacts, the hook never loads the redactor
    assert harness.spooled() == []


def test_a_redaction_that_fails_leaves_the_event_spooled_and_says_so(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from thatch.redact import payload as redact_payload

    def broken(request: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(redact_payload, "redacted_request", broken)
    harness.env[autostart.NO_AUTOSTART_VAR] = "1"
    harness.run(HookArgs("buffer-tool"), stdin=SECRET_PAYLOAD)
    assert len(harness.spooled()) == 1
    assert spool_locked(harness) == [False]
    (line,) = harness.log_lines()
    assert "could not be redacted (RuntimeError: boom)" in line


def test_spool_only_keeps_the_event_without_asking_the_daemon(harness: Harness) -> None:
    fake = harness.daemon(echo)
    status = run_hook_with_stdin(harness, HookArgs("flush-tools"), spool_only="bad arguments")
    assert status == ""  # no stand-in answer either: what the line asked for is unknown
    assert fake.requests == []
    assert [request["command"] for request in harness.spooled()] == ["flush-tools"]
    (line,) = harness.log_lines()
    assert "bad arguments" in line
    assert harness.spawned == []  # a daemon listens: it replays the file


def run_hook_with_stdin(harness: Harness, args: HookArgs, **options: Any) -> str:
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    try:
        os.write(in_write, b'{"session_id": "s1"}')
        os.close(in_write)
        assert (
            run_hook(args, stdin_fd=in_read, stdout_fd=out_write, environ=harness.env, **options)
            == 0
        )
        os.close(out_write)
        return os.read(out_read, 65536).decode()
    finally:
        os.close(in_read)
        os.close(out_read)
