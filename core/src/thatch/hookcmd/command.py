"""Run one hook command: read stdin, ask the daemon, print its answer or spool the event.

The time budget, from the moment the command starts: stdin gets up to half
of the cap, the daemon the rest but a small reserve, and the reserve pays
for spooling, starting the daemon and logging. The backstop timer fires at
the cap itself.

A session start or a prompt (:mod:`thatch.hookcmd.answers`) may wait longer,
up to the cold-start allowance (:func:`thatch.hookcmd.cap.cold_start_ms`),
counted from the same start, when the daemon is not ready:

- no daemon runs: the event is spooled first (locked, so the daemon leaves
  it to this hook), the daemon is started, and the event is sent as soon as
  it listens; once answered, the spooled copy is removed;
- the daemon answers that it is still loading its model: the hook waits for
  the answer that follows.

Either way the backstop moves to the new deadline. Every other event keeps
the cap: spool, start the daemon, exit.
"""

from __future__ import annotations

import os
import time

import thatch
from thatch import rundir, wire
from thatch.hookcmd import answers, cap
from thatch.hookcmd.backstop import Backstop, Deadline
from thatch.hookcmd.stdin import read_payload

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from thatch.hookcmd.args import HookArgs
    from thatch.hookcmd.autostart import Start
    from thatch.hookcmd.spool import Held

#: Longest piece of a daemon's error message repeated in the log.
_MAX_ERROR_CHARS = 200


def run_hook(
    args: HookArgs,
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run ``args`` against the daemon; always returns 0, whatever happens."""
    started = time.monotonic()
    hook = _HookRun(args, os.environ if environ is None else environ)
    try:
        hook.run(started, stdin_fd, stdout_fd)
    except BaseException as exc:
        # Deadline, KeyboardInterrupt, a bug: the event is kept all the same.
        hook.abort(exc)
    finally:
        hook.finish()
    return 0


class _HookRun:
    """One invocation's state, so every way out spools at most once and logs one line."""

    def __init__(self, args: HookArgs, environ: Mapping[str, str]) -> None:
        self.args = args
        self.environ = environ
        self.backstop = Backstop()
        self.located: rundir.RunDir | None = None
        self.message: dict[str, Any] | None = None
        self.spool_tried = False
        self.held: Held | None = None
        self.finished = False
        self.notes: list[str] = []
        self.cap_ms = cap.DEFAULT_TIMEOUT_MS
        #: The time limit in force: the cap, or the cold-start allowance once extended.
        self.limit_ms = self.cap_ms
        self.extended = False
        self.warming_seen = False
        self.answer_read = answers.answer_read(args)
        self.started = 0.0
        self.deadline = 0.0
        self.reserve = 0.0

    def run(self, started: float, stdin_fd: int, stdout_fd: int) -> None:
        """Read, send, print; failures go to :meth:`fail`."""
        self._run(started, stdin_fd, stdout_fd)
        # The alarm may still fire before finish() stops it; abort() then ignores it.
        self.finished = True

    def _run(self, started: float, stdin_fd: int, stdout_fd: int) -> None:
        self.located = rundir.locate(self.environ, home=self.args.home)
        self.cap_ms, problem = cap.timeout_ms(self.environ, config_path=self.located.config_file)
        if problem:
            self.notes.append(problem)
        self.limit_ms = self.cap_ms
        limit = self.cap_ms / 1000
        self.reserve = min(0.05, limit * 0.2)
        self.started = started
        self.deadline = started + limit
        self.backstop.arm(self.deadline - time.monotonic(), grace=self.reserve)

        payload = read_payload(stdin_fd, started + (limit - self.reserve) / 2)
        if payload.data is None:
            self.notes.append(f"{payload.problem}; nothing sent or spooled")
            return
        self.message = self._message(payload.data)
        answer = self._ask()
        if answer is not None:
            self._answered(answer, stdout_fd)

    def _ask(self) -> dict[str, Any] | None:
        """The daemon's answer, or None once the failure is handled."""
        assert self.located is not None
        assert self.message is not None
        socket_path = self.located.socket_path
        timeout = self.deadline - self.reserve - time.monotonic()
        if timeout <= 0:
            no_socket = not os.path.exists(socket_path)
            self.fail("no time left to reach the daemon after reading stdin", start=no_socket)
            return None
        on_warming = self._on_warming if self.answer_read else None
        try:
            return wire.request(socket_path, self.message, timeout, on_warming)
        except FileNotFoundError:
            return self._not_running(f"the daemon is not running (no socket {socket_path})")
        except ConnectionRefusedError:
            return self._not_running(
                f"the daemon is not running (nothing listens on {socket_path})"
            )
        except TimeoutError:
            self.fail(f"the daemon did not answer within {self.limit_ms} ms", start=False)
        except (OSError, wire.WireError) as exc:
            self.fail(f"the daemon could not be reached ({_describe(exc)})", start=False)
        return None

    def _not_running(self, reason: str) -> dict[str, Any] | None:
        """No daemon: spool and start one; a session start or prompt then waits for it."""
        from thatch.hookcmd import autostart

        if not self.answer_read or autostart.disabled(self.environ) or not self._extend():
            self.fail(reason, start=True)
            return None
        self.notes.append(reason)
        # Spooled before anything else: if the harness kills this hook, nothing is lost.
        self._spool(hold=True)
        start = self._start_daemon("the daemon is needed", spaced=False)
        if not start.coming:
            return None
        return self._ask_when_listening(start)

    def _ask_when_listening(self, start: Start) -> dict[str, Any] | None:
        from thatch.hookcmd import coldstart

        assert self.located is not None
        assert self.message is not None
        try:
            return coldstart.ask_when_listening(
                self.located.socket_path,
                self.message,
                self.deadline - self.reserve,
                start.pid,
                self._on_warming,
            )
        except coldstart.DaemonFailed as exc:
            self.notes.append(f"{exc}; run 'thatch daemon run' to see why")
        except TimeoutError:
            self.notes.append(f"no answer within the cold-start allowance of {self.limit_ms} ms")
        except (OSError, wire.WireError) as exc:
            self.notes.append(f"the daemon could not be reached ({_describe(exc)})")
        return None

    def _on_warming(self) -> float:
        """The daemon is loading its model: wait up to the allowance; seconds left for it."""
        if not self.warming_seen:
            self.warming_seen = True
            self.notes.append("the daemon was warming up")
            self._extend()
        return self.deadline - self.reserve - time.monotonic()

    def _extend(self) -> bool:
        """Move the deadline to the cold-start allowance; False when it is not above the cap."""
        if self.extended:
            return True
        allowance_ms, problem = cap.cold_start_ms(
            self.environ, config_path=self.located.config_file if self.located else None
        )
        if problem:
            self.notes.append(problem)
        if allowance_ms <= self.cap_ms:
            return False
        self.extended = True
        self.limit_ms = allowance_ms
        self.deadline = self.started + allowance_ms / 1000
        self.backstop.extend(self.deadline - time.monotonic())
        return True

    def _answered(self, answer: dict[str, Any], stdout_fd: int) -> None:
        restart = answer.get("restart") is True
        if answer.get("ok") is not True:
            error = str(answer.get("error", "no error given"))[:_MAX_ERROR_CHARS]
            self.fail(f"the daemon answered with an error ({error})", start=restart)
            return
        if self.held is not None:
            # The daemon has the event: the spooled copy would only be skipped later.
            self.held.release(taken=True)
            self.notes.append("the spooled copy was removed")
        if self.extended:
            elapsed_ms = (time.monotonic() - self.started) * 1000
            self.notes.append(f"answered {elapsed_ms:.0f} ms after the hook started")
        if restart:
            self._start_daemon("the daemon is outdated")
        output = answer.get("output")
        if isinstance(output, str) and output:
            self.backstop.writing = True
            _write_all(stdout_fd, output if output.endswith("\n") else output + "\n")

    def fail(self, reason: str, *, start: bool) -> None:
        """Spool the event, maybe start the daemon, and note why for the log."""
        self.notes.append(reason)
        self._spool()
        if start:
            self._start_daemon("the daemon is needed")

    def abort(self, exc: BaseException) -> None:
        """The run was cut short by ``exc``: keep the event if it was read."""
        if self.finished:
            return
        if isinstance(exc, Deadline):
            what = "cold-start allowance" if self.extended else "hook cap"
            reason = f"the {what} of {self.limit_ms} ms was reached"
        elif isinstance(exc, KeyboardInterrupt):
            reason = "interrupted"
        else:
            reason = f"unexpected error {_describe(exc)}"
        self.notes.append(reason)
        try:
            if self.message is None:
                self.notes.append("no event was read, nothing spooled")
            else:
                self._spool()
        except BaseException:  # a second deadline while spooling: nothing more to do
            pass

    def finish(self) -> None:
        """Stop the timer, let go of a held spool file and write the one log line."""
        try:
            self.backstop.cancel()
            if self.held is not None:
                # Not answered: the daemon replays the file once it is unlocked.
                self.held.release(taken=False)
            if self.notes:
                from thatch import logfile

                located = self.located or rundir.locate(self.environ, home=self.args.home)
                logfile.append(located.log_path, "hook", f"{self._name()}: {'; '.join(self.notes)}")
        except BaseException:
            pass

    def _message(self, payload: dict[str, Any]) -> dict[str, Any]:
        args, env = self.args, self.environ
        message = {
            "protocol": wire.PROTOCOL,
            "client": thatch.__version__,
            "op": "hook",
            "command": args.command,
            "harness": args.harness,
            "event": args.event,
            "payload": payload,
            "event_id": os.urandom(16).hex(),
            "received_at": time.time(),
            "cwd": _cwd(env),
            "env": {name: env[name] for name in wire.FORWARDED_ENV if name in env},
            "json": args.json,
        }
        if self.answer_read:
            message["warming_notice"] = True
        return message

    def _spool(self, *, hold: bool = False) -> None:
        from thatch.hookcmd import spool

        if self.message is None or self.located is None or self.spool_tried:
            return  # nothing to keep, or kept already (a cold start spools first)
        self.spool_tried = True
        try:
            if hold:
                self.held = spool.write_held(self.located.spool_dir, self.message)
                path = self.held.path
            else:
                path = spool.write(self.located.spool_dir, self.message)
        except OSError as exc:
            self.notes.append(f"could not spool the event ({_describe(exc)}); it is lost")
            return
        self.notes.append(f"event spooled as {os.path.basename(path)}")

    def _start_daemon(self, why: str, *, spaced: bool = True) -> Start:
        """Start the daemon (see :mod:`thatch.hookcmd.autostart`) and note what happened."""
        from thatch.hookcmd import autostart

        assert self.located is not None
        home = self.args.home
        absolute = rundir.absolute(home) if home else None
        try:
            start = autostart.start_daemon(
                self.located.runtime_dir,
                self.environ,
                absolute,
                spaced=spaced,
                lock_path=None if spaced else self.located.lock_path,
            )
        except OSError as exc:
            start = autostart.Start(
                f"{why} but could not be started ({_describe(exc)}); run 'thatch daemon start'",
                coming=False,
            )
        self.notes.append(start.note)
        return start

    def _name(self) -> str:
        args = self.args
        return f"hook {args.harness} {args.event}" if args.command == "hook" else args.command


def _cwd(environ: Mapping[str, str]) -> str | None:
    try:
        return os.getcwd()
    except OSError:
        # The folder was deleted under the harness; its last known name still helps.
        return environ.get("PWD") or None


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _write_all(fd: int, text: str) -> None:
    view = memoryview(text.encode("utf-8", "replace"))
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        # BrokenPipeError and the like: the harness stopped listening; not our failure.
        pass
