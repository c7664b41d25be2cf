"""Run one hook command: read stdin, ask the daemon, print its answer or spool the event.

The time budget, from the moment the command starts: stdin gets up to half
of the cap, the daemon the rest but a small reserve, and the reserve pays
for spooling, starting the daemon and logging. The backstop timer fires at
the cap itself.
"""

from __future__ import annotations

import os
import time

import thatch
from thatch import rundir, wire
from thatch.hookcmd import cap
from thatch.hookcmd.backstop import Backstop, Deadline
from thatch.hookcmd.stdin import read_payload

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from thatch.hookcmd.args import HookArgs

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
        self.finished = False
        self.notes: list[str] = []
        self.cap_ms = cap.DEFAULT_TIMEOUT_MS

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
        limit = self.cap_ms / 1000
        reserve = min(0.05, limit * 0.2)
        deadline = started + limit
        self.backstop.arm(deadline - time.monotonic(), grace=reserve)

        payload = read_payload(stdin_fd, started + (limit - reserve) / 2)
        if payload.data is None:
            self.notes.append(f"{payload.problem}; nothing sent or spooled")
            return
        self.message = self._message(payload.data)

        timeout = deadline - reserve - time.monotonic()
        if timeout <= 0:
            no_socket = not os.path.exists(self.located.socket_path)
            self.fail("no time left to reach the daemon after reading stdin", start=no_socket)
            return
        socket_path = self.located.socket_path
        try:
            answer = wire.request(socket_path, self.message, timeout)
        except FileNotFoundError:
            self.fail(f"the daemon is not running (no socket {socket_path})", start=True)
            return
        except ConnectionRefusedError:
            self.fail(f"the daemon is not running (nothing listens on {socket_path})", start=True)
            return
        except TimeoutError:
            self.fail(f"the daemon did not answer within {self.cap_ms} ms", start=False)
            return
        except (OSError, wire.WireError) as exc:
            self.fail(f"the daemon could not be reached ({_describe(exc)})", start=False)
            return
        restart = answer.get("restart") is True
        if answer.get("ok") is not True:
            error = str(answer.get("error", "no error given"))[:_MAX_ERROR_CHARS]
            self.fail(f"the daemon answered with an error ({error})", start=restart)
            return
        if restart:
            self.notes.append(self._start_daemon("the daemon is outdated"))
        output = answer.get("output")
        if isinstance(output, str) and output:
            self.backstop.writing = True
            _write_all(stdout_fd, output if output.endswith("\n") else output + "\n")

    def fail(self, reason: str, *, start: bool) -> None:
        """Spool the event, maybe start the daemon, and note why for the log."""
        self.notes.append(reason)
        self._spool()
        if start:
            self.notes.append(self._start_daemon("the daemon is needed"))

    def abort(self, exc: BaseException) -> None:
        """The run was cut short by ``exc``: keep the event if it was read."""
        if self.finished:
            return
        if isinstance(exc, Deadline):
            reason = f"the hook cap of {self.cap_ms} ms was reached"
        elif isinstance(exc, KeyboardInterrupt):
            reason = "interrupted"
        else:
            reason = f"unexpected error {_describe(exc)}"
        self.notes.append(reason)
        try:
            if self.message is None:
                self.notes.append("no event was read, nothing spooled")
            elif not self.spool_tried:
                self._spool()
        except BaseException:  # a second deadline while spooling: nothing more to do
            pass

    def finish(self) -> None:
        """Stop the timer and write the one log line, if anything went wrong."""
        try:
            self.backstop.cancel()
            if self.notes:
                from thatch import logfile

                located = self.located or rundir.locate(self.environ, home=self.args.home)
                logfile.append(located.log_path, "hook", f"{self._name()}: {'; '.join(self.notes)}")
        except BaseException:
            pass

    def _message(self, payload: dict[str, Any]) -> dict[str, Any]:
        args, env = self.args, self.environ
        return {
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

    def _spool(self) -> None:
        from thatch.hookcmd import spool

        if self.message is None or self.located is None:
            return
        self.spool_tried = True
        try:
            path = spool.write(self.located.spool_dir, self.message)
        except OSError as exc:
            self.notes.append(f"could not spool the event ({_describe(exc)}); it is lost")
            return
        self.notes.append(f"event spooled as {os.path.basename(path)}")

    def _start_daemon(self, why: str) -> str:
        from thatch.hookcmd import autostart

        assert self.located is not None
        home = self.args.home
        absolute = rundir.absolute(home) if home else None
        try:
            return autostart.start_daemon(self.located.runtime_dir, self.environ, absolute)
        except OSError as exc:
            return f"{why} but could not be started ({_describe(exc)}); run 'thatch daemon start'"

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
