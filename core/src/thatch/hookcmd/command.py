"""Run one hook command: read stdin, spool the event, ask the daemon, print its answer.

The time budget, from the moment the command starts: stdin may take the
whole cap but a small reserve; the daemon gets what stdin left, but the
reserve, which pays for starting the daemon and logging. The backstop timer
fires at the cap itself.

An event whose payload has arrived is never lost to the clock: it is
spooled before it is sent, locked so the daemon does not replay it while
this hook may still deliver it, and removed once the daemon has answered.
From the moment stdin is read until the file is written the cap waits (see
:mod:`thatch.hookcmd.backstop`); a payload of several MB may take longer
to spool than the cap leaves, so the process may then end a little past it
(at most :data:`SPOOL_SECONDS_PER_MIB` a MiB). A hook that misses the
daemon's answer leaves its file for the daemon to replay, and the event id
makes a replay of an event the daemon took a no-op.

A session start or a prompt, as the hook table says (:mod:`thatch.hookcmd.answers`),
may wait longer, up to the cold-start allowance
(:func:`thatch.hookcmd.cap.cold_start_ms`), counted from the same start,
when the daemon is not ready:

- no daemon runs: the daemon is started, and the event (spooled already)
  is sent as soon as it listens; once answered, the spooled copy is removed;
- the daemon answers that it is still loading its model: the hook waits for
  the answer that follows.

Either way the backstop moves to the new deadline. Every other event keeps
the cap: start the daemon and exit, leaving the spooled copy for it. So does
every event while there is no hook table (never set up, or removed): the
daemon that hook starts writes the table, and later hooks wait as they should.
"""

from __future__ import annotations

import os
import time

import thatch
from thatch import rundir, wire
from thatch.hookcmd import answers, cap, spool
from thatch.hookcmd.backstop import Backstop, Deadline
from thatch.hookcmd.stdin import payload_of, read_stdin

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from thatch.hookcmd.args import HookArgs
    from thatch.hookcmd.autostart import Start
    from thatch.hookcmd.spool import Held
    from thatch.hookcmd.stdin import Received

#: Longest piece of a daemon's error message repeated in the log.
_MAX_ERROR_CHARS = 200
#: How long spooling a payload may take, a MiB, before the backstop ends the hook:
#: parsing, encoding and writing 7 MiB took ~90 ms on two idle cores, thrice that busy.
SPOOL_SECONDS_PER_MIB = 0.04
_MIB = 1024 * 1024


def run_hook(
    args: HookArgs,
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    environ: Mapping[str, str] | None = None,
    spool_only: str | None = None,
) -> int:
    """Run ``args`` against the daemon; always returns 0, whatever happens.

    ``spool_only``: why the event is only spooled, not sent nor answered
    (its command line had arguments thatch does not know; see
    :mod:`thatch.cli.unattended`). The daemon replays it later; a
    missing daemon is started as for any event it did not take.
    """
    started = time.monotonic()
    hook = _HookRun(args, os.environ if environ is None else environ)
    if spool_only is not None:
        hook.spool_only = spool_only
        hook.notes.append(spool_only)
    try:
        try:
            hook.run(started, stdin_fd, stdout_fd)
        except BaseException as exc:
            # Deadline, KeyboardInterrupt, a bug: the event is kept all the same.
            hook.abort(exc)
        hook.stand_in(stdout_fd)
    except BaseException:
        # The cap's one Deadline landed on the way into abort() (after another
        # exception), or a second interruption came: finish() still logs.
        pass
    finally:
        # The cap may pass between run() and the timer being stopped. Deadline
        # is raised once only, so a second try finds the timer quiet.
        for _attempt in (1, 2):
            try:
                hook.finish()
                break
            except Deadline:
                continue
    return 0


class _HookRun:
    """One invocation's state, so every way out spools at most once and logs one line."""

    def __init__(self, args: HookArgs, environ: Mapping[str, str]) -> None:
        self.args = args
        self.environ = environ
        self.backstop = Backstop()
        self.located: rundir.RunDir | None = None
        self.message: dict[str, Any] | None = None
        #: The spooled copy, locked until the daemon has the event or the hook ends.
        self.held: Held | None = None
        #: Why the event could not be spooled; logged only if the daemon does not take it.
        self.spool_error: str | None = None
        #: The log says where the event is kept (once).
        self.spool_noted = False
        self.finished = False
        self.closed = False
        self.notes: list[str] = []
        #: Why the event is spooled but not sent (see run_hook); None: sent as usual.
        self.spool_only: str | None = None
        self.cap_ms = cap.DEFAULT_TIMEOUT_MS
        #: The time limit in force: the cap, or the cold-start allowance once extended.
        self.limit_ms = self.cap_ms
        self.extended = False
        self.warming_seen = False
        #: What the hook knows of the harnesses (None: no usable table).
        self.table: answers.HookTable | None = None
        #: The agent reads this hook's answer (known from the table only).
        self.answer_read = False
        #: The daemon answered (it may have had nothing to say).
        self.answered = False
        self.started = 0.0
        self.deadline = 0.0
        self.reserve = 0.0

    def run(self, started: float, stdin_fd: int, stdout_fd: int) -> None:
        """Read, spool, send, print; failures go to :meth:`fail`."""
        self._run(started, stdin_fd, stdout_fd)
        # From here the cap has nothing to cut short (see Backstop.stop_raising);
        # a Deadline raised before this line lands in run_hook's handler.
        self.backstop.stop_raising()
        self.finished = True

    def _run(self, started: float, stdin_fd: int, stdout_fd: int) -> None:
        self.located = rundir.locate(self.environ, home=self.args.home)
        self.table = answers.load(self.located.state_dir)
        self.answer_read = self.table is not None and self.table.kind(self.args) is not None
        self.cap_ms, problem = cap.timeout_ms(self.environ, config_path=self.located.config_file)
        if problem:
            self.notes.append(problem)
        self.limit_ms = self.cap_ms
        limit = self.cap_ms / 1000
        self.reserve = min(0.05, limit * 0.2)
        self.started = started
        self.deadline = started + limit
        self.backstop.last_words = self._last_words
        self.backstop.arm(self.deadline - time.monotonic(), grace=self.reserve)

        received = read_stdin(stdin_fd, self.deadline - self.reserve)
        if not self._keep(received):
            return
        if self.spool_only is not None:
            # Kept for the daemon's replay, as any event it did not take (the note says why).
            self._spool()
            if not os.path.exists(self.located.socket_path):
                self._start_daemon("the daemon is needed")
            return
        answer = self._ask()
        if answer is not None:
            self._answered(answer, stdout_fd)

    def _keep(self, received: Received) -> bool:
        """Parse the payload and spool the event, cap or no cap; False when there is none.

        The backstop raises a cap that passes meanwhile once the file is
        written, and ends the process only past the time spooling a payload
        of this size may take.
        """
        size_mib = len(received.data) / _MIB
        self.backstop.allow(self.reserve + size_mib * SPOOL_SECONDS_PER_MIB)
        self.backstop.begin_keeping()
        try:
            payload = payload_of(received)
            if payload.data is None:
                self.notes.append(f"{payload.problem}; nothing sent or spooled")
                return False
            self.message = self._message(payload.data)
            return self._write_held()
        finally:
            self.backstop.end_keeping()

    def _write_held(self) -> bool:
        """Spool the event, locked; False when it cannot be encoded (so not sent either)."""
        assert self.located is not None
        assert self.message is not None
        try:
            self.held = spool.write_held(self.located.spool_dir, self.message)
        except OSError as exc:
            self.spool_error = _describe(exc)
        except (ValueError, RecursionError) as exc:
            # Parsed, but nested right at the interpreter's limit: encoding it fails too.
            self.notes.append(f"the event cannot be encoded ({_describe(exc)}); nothing sent")
            self.message = None
            return False
        return True

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
            return wire.request(socket_path, self._line(), timeout, on_warming)
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
        self._spool()
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
                self._line(),
                self.deadline - self.reserve,
                start.pid,
                self._on_warming,
                lock_path=self.located.lock_path,
            )
        except coldstart.DaemonFailed as exc:
            self.notes.append(f"{exc}; run 'thatch daemon run' to see why")
        except TimeoutError:
            self.notes.append(f"no answer within the cold-start allowance of {self.limit_ms} ms")
        except (OSError, wire.WireError) as exc:
            self.notes.append(f"the daemon could not be reached ({_describe(exc)})")
        return None

    def _line(self) -> dict[str, Any] | bytes:
        """The request to send: the bytes spooled for it, so it is encoded once."""
        assert self.message is not None
        return self.held.data if self.held is not None else self.message

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
            self.fail(
                f"the daemon answered with an error ({error})", start=restart, replacing=restart
            )
            return
        self.answered = True
        if self.held is not None:
            # The daemon has the event: the spooled copy would only be skipped later.
            self.held.release(taken=True)
            if self.spool_noted:
                self.notes.append("the spooled copy was removed")
        if self.extended:
            elapsed_ms = (time.monotonic() - self.started) * 1000
            self.notes.append(f"answered {elapsed_ms:.0f} ms after the hook started")
        if restart:
            self._start_daemon("the daemon is outdated", replacing=True)
        output = answer.get("output")
        if isinstance(output, str) and output:
            self.backstop.writing = True
            _write_all(stdout_fd, output if output.endswith("\n") else output + "\n")

    def fail(self, reason: str, *, start: bool, replacing: bool = False) -> None:
        """Note why the daemon did not take the event and where it is kept; maybe start one.

        ``replacing``: the daemon is outdated and exiting (see autostart.daemon_command).
        """
        self.notes.append(reason)
        self._spool()
        if start:
            self._start_daemon("the daemon is needed", replacing=replacing)

    def abort(self, exc: BaseException) -> None:
        """The run was cut short by ``exc``: keep the event if it was read."""
        self.backstop.stop_raising()
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
        except BaseException:  # interrupted again while spooling: nothing more to do
            pass

    def stand_in(self, stdout_fd: int) -> None:
        """No daemon answered a session start or a prompt: print what needs none.

        See :mod:`thatch.hookcmd.fallback`; a bad payload (no event) still
        gets nothing, nor does any hook without a hook table.
        """
        if self.answered or self.message is None or self.spool_only is not None:
            return
        if self.table is None:
            self.notes.append("no hook table, so nothing printed; run 'thatch setup'")
            return
        if not self.answer_read:
            return
        try:
            from thatch.hookcmd import fallback

            output = fallback.output(self.args, self.message["payload"], self.environ, self.table)
            if output:
                self.backstop.writing = True
                _write_all(stdout_fd, output + "\n")
                self.notes.append("printed the reminder that needs no daemon")
        except BaseException:  # the hook must still exit 0, its event kept
            pass

    def _last_words(self) -> None:
        """The backstop ends the process now: write the log line first."""
        what = "cold-start allowance" if self.extended else "hook cap"
        late_ms = (time.monotonic() - self.deadline) * 1000
        self.notes.append(f"ended {late_ms:.0f} ms past the {what} of {self.limit_ms} ms")
        if self.held is not None:
            self._spool()  # written already: this only says so
        elif self.message is not None:
            self.notes.append("the event was still being spooled and is lost")
        else:
            self.notes.append("no event was read, nothing spooled")
        self.finish()

    def finish(self) -> None:
        """Stop the timer, let go of a held spool file and write the one log line."""
        if self.closed:
            return
        # First and outside the try: a Deadline before the timer is off reaches
        # run_hook, which calls this again; none can come after.
        self.backstop.cancel()
        self.closed = True
        try:
            if self.held is not None:
                if self.held.holding:
                    self._redact_spooled(self.held)
                # Not answered: the daemon replays the file once it is unlocked.
                self.held.release(taken=False)
            if self.notes:
                from thatch import logfile

                located = self.located or rundir.locate(self.environ, home=self.args.home)
                logfile.append(located.log_path, "hook", f"{self._name()}: {'; '.join(self.notes)}")
        except BaseException:
            pass

    def _redact_spooled(self, held: Held) -> None:
        """The event stays on disk for a replay: write it again with its payload redacted.

        Only here, once the daemon did not take the event: on the usual path
        the file lives for the milliseconds of the send and the redactor is
        never loaded. The daemon redacts again when it replays the file.
        """
        if self.message is None:
            return
        try:
            from thatch.redact.payload import redacted_request

            clean, changed = redacted_request(self.message)
            if changed:
                held.rewrite(clean)
                self.notes.append(f"{changed} texts of the spooled copy redacted")
        except Exception as exc:
            self.notes.append(
                f"the spooled copy could not be redacted ({_describe(exc)}); "
                "the daemon redacts it when it replays it"
            )

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
            "env": {name: env[name] for name in self._forwarded() if name in env},
            "json": args.json,
        }
        if self.answer_read:
            message["warming_notice"] = True
        return message

    def _forwarded(self) -> tuple[str, ...]:
        """The harnesses' variables the daemon reads (``Harness.environment``, from the table)."""
        return self.table.environment if self.table is not None else ()

    def _spool(self) -> None:
        """Note where the event is kept; spool it first if that was cut short before."""
        if self.message is None or self.spool_noted:
            return  # nothing to keep, or said so already
        self.spool_noted = True
        if self.held is None and self.spool_error is None and not self._write_held():
            return
        if self.held is not None:
            self.notes.append(f"event spooled as {os.path.basename(self.held.path)}")
        else:
            self.notes.append(f"could not spool the event ({self.spool_error}); it is lost")

    def _start_daemon(self, why: str, *, spaced: bool = True, replacing: bool = False) -> Start:
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
                replacing=replacing,
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
