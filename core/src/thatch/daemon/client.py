"""Reaching the daemon from the CLI: start it on demand, call it, stop it.

The hook commands and ``thatch mcp`` have their own standard-library
clients (:mod:`thatch.hookcmd`, :mod:`thatch.mcp_relay`); this one may block
while the daemon starts.

A daemon that holds its lock but does not answer (stopped with SIGSTOP,
stuck, or still starting) is told apart from no daemon at all: ``status``
says so, ``stop`` ends it by its pid, and ``start`` fails at once instead
of waiting for it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any

import attrs

import thatch
from thatch import daemon_lock as lock
from thatch import rundir, socketguard, wire
from thatch.plugin.errors import ThatchError

#: Loading the model and opening a large database can take this long.
START_TIMEOUT = 60.0
CALL_TIMEOUT = 120.0
#: How long a daemon may take to answer a ping, status or stop before it counts as
#: not answering (``thatch doctor`` waits as long).
ANSWER_SECONDS = 1.5
#: How long a daemon may hold its lock before it listens (it loads its plugins first).
LISTEN_SECONDS = 30.0
#: How long a daemon that did not answer has to exit after SIGTERM, then after SIGKILL.
TERM_GRACE_SECONDS = 10.0
KILL_GRACE_SECONDS = 5.0


_children: list[subprocess.Popen[bytes]] = []


class DaemonUnavailableError(ThatchError):
    """The daemon did not start or stopped answering."""


class DaemonNotAnsweringError(DaemonUnavailableError):
    """A daemon holds the lock but does not answer."""


@attrs.frozen
class Probe:
    """What one status request found: the daemon's answer, or why none came."""

    #: The daemon's answer (None: none came).
    answer: dict[str, Any] | None
    #: Whether a daemon process holds the lock: one runs, answering or not.
    held: bool
    #: The pid of the daemon holding the lock, from its pid file (None: unknown).
    pid: int | None = None
    #: Why no answer came ("" when one did).
    problem: str = ""
    #: Nothing was sent: the socket may not be the user's (see :mod:`thatch.socketguard`).
    refused: bool = False


@attrs.frozen
class Stopped:
    """How :meth:`DaemonClient.stop` ended a daemon."""

    pid: int | None
    #: The signal that ended it (None: it stopped when asked).
    signal: str | None = None
    #: Why it had to be signalled.
    problem: str = ""


class DaemonClient:
    """Requests to the daemon of one home (or the user's) and database."""

    def __init__(self, home: str | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        if home:
            self.environ["THATCH_HOME"] = str(home)
        self.located = rundir.locate(self.environ)

    # -- requests ------------------------------------------------------------
    def request(self, op: str, timeout: float = CALL_TIMEOUT, **fields: Any) -> dict[str, Any]:
        """One request; raises OSError/TimeoutError/WireError when the daemon is not there."""
        message = {"protocol": wire.PROTOCOL, "client": thatch.__version__, "op": op, **fields}
        return wire.request(self.located.socket_path, message, timeout)

    def ping(self) -> dict[str, Any] | None:
        """The daemon's answer to a ping, or None when no daemon answers."""
        try:
            return self.request("ping", timeout=ANSWER_SECONDS)
        except (OSError, wire.WireError):
            return None

    def probe(self) -> Probe:
        """Ask for the daemon's status; when no answer comes, whether one runs all the same."""
        try:
            answer = self.request("status", timeout=ANSWER_SECONDS)
        except (OSError, wire.WireError) as exc:
            held = lock.is_held(self.located.lock_path)
            refused = isinstance(exc, socketguard.UnsafeSocketError)
            pid = self.holder_pid() if held else None
            return Probe(None, held, pid, self._why(exc), refused=refused)
        pid = answer.get("pid")
        return Probe(answer, True, pid if isinstance(pid, int) else self.holder_pid())

    def holder_pid(self) -> int | None:
        """The pid in the pid file (the daemon writes it as soon as it holds the lock)."""
        try:
            with open(self.located.pid_path, encoding="ascii") as handle:
                return int(handle.read().strip())
        except (OSError, ValueError):
            return None

    def running(self) -> bool:
        answer = self.ping()
        return bool(answer and answer.get("ok"))

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        """A request to a daemon started if needed; one retry if it went away meanwhile."""
        for attempt in (1, 2):
            if attempt == 2:
                # Only after a failure: a ping first would double every call.
                self.ensure_running()
            try:
                answer = self.request(op, **fields)
            except (OSError, wire.WireError) as exc:
                if attempt == 2:
                    raise DaemonUnavailableError(
                        f"the daemon stopped answering ({exc}); see {self.located.log_path}"
                    ) from exc
                continue
            if answer.get("restart") and attempt == 1:
                self.wait_stopped()
                continue
            return answer
        raise AssertionError("unreachable")

    # -- lifecycle -----------------------------------------------------------
    def ensure_running(self, timeout: float = START_TIMEOUT, *, warm: bool = False) -> None:
        """Start the daemon unless one answers; wait until it does.

        With ``warm``, also wait until it has loaded the model and caches, so
        the next hook is answered within its cap. A daemon that holds the
        lock but does not answer raises :class:`DaemonNotAnsweringError` at
        once: a new one would only wait for its lock.
        """
        answer = self.ping()
        if answer and answer.get("restart"):
            self.wait_stopped()
            answer = None
        if not (answer and answer.get("ok")) and not lock.is_held(self.located.lock_path):
            self.spawn()
        deadline = time.monotonic() + timeout
        unanswered = 0
        while time.monotonic() < deadline:
            try:
                answer = self.request("ping", timeout=ANSWER_SECONDS)
            except (OSError, wire.WireError) as exc:
                unanswered = unanswered + 1 if isinstance(exc, TimeoutError) else 0
                self._fail_if_not_answering(exc, timeouts=unanswered)
                answer = None
            if answer and answer.get("ok") and (answer.get("warm") or not warm):
                return
            time.sleep(0.05)
        raise DaemonUnavailableError(
            f"the daemon did not start within {timeout:.0f} s; "
            f"see {self.located.log_path} or run 'thatch daemon run' to see why"
        )

    def _fail_if_not_answering(self, exc: BaseException, *, timeouts: int) -> None:
        """Raise when the daemon holding the lock will not answer however long one waits.

        Two pings in a row unanswered, or no socket long after it took the
        lock; a daemon loading its plugins or its model gets that long.
        """
        if isinstance(exc, socketguard.UnsafeSocketError):
            raise DaemonUnavailableError(str(exc)) from exc
        if not lock.is_held(self.located.lock_path):
            return  # none yet: the one spawned is on its way
        hung = timeouts >= 2
        never_listened = timeouts == 0 and self._holding_for() > LISTEN_SECONDS
        if not (hung or never_listened):
            return
        pid = self.holder_pid()
        raise DaemonNotAnsweringError(
            f"a daemon (pid {pid or '?'}) is running but not answering: {self._why(exc)}; "
            "'thatch daemon stop' ends it"
        )

    def _holding_for(self) -> float:
        """Seconds since the daemon holding the lock took it (its pid file's age)."""
        try:
            return time.time() - os.stat(self.located.pid_path).st_mtime
        except OSError:
            return 0.0  # just taken: the pid file follows at once

    def _why(self, exc: BaseException) -> str:
        """What a failed request says about the daemon, in the user's words."""
        address = self.located.socket_path
        if isinstance(exc, TimeoutError):
            return f"no answer within {ANSWER_SECONDS} s (stopped, or stuck)"
        if isinstance(exc, FileNotFoundError):
            return f"its socket {address} is missing (it may still be starting)"
        if isinstance(exc, ConnectionRefusedError):
            return f"nothing listens on its socket {address} (it may still be starting)"
        if isinstance(exc, socketguard.UnsafeSocketError):
            return str(exc)
        return f"{type(exc).__name__}: {exc}"

    def spawn(self) -> None:
        """Start a detached daemon (it exits at once if another holds the lock)."""
        _reap()
        child = subprocess.Popen(
            # -P: a thatch/ folder in the user's project must not shadow the package.
            [sys.executable, "-P", "-m", "thatch", "daemon", "run"],
            env=self.environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
        # Kept so it can be reaped (no zombie under a long-lived `thatch mcp`).
        _children.append(child)

    def stop(self, timeout: float = 30.0) -> Stopped | None:
        """Stop the daemon and wait until it has; None if none was running.

        One that does not answer is ended by its pid: SIGCONT (a stopped
        process acts on nothing else), SIGTERM, and SIGKILL if it has not
        exited within :data:`TERM_GRACE_SECONDS`.
        """
        pid = self.holder_pid()
        try:
            self.request("stop", timeout=ANSWER_SECONDS)
        except (OSError, wire.WireError) as exc:
            if not lock.is_held(self.located.lock_path):
                return None
            return self._end(self._why(exc))
        self.wait_stopped(timeout)
        return Stopped(pid)

    def _end(self, problem: str) -> Stopped:
        """Signal the daemon holding the lock until it lets go of it."""
        pid = self.holder_pid()
        if pid is None or not _is_daemon(pid):
            raise DaemonNotAnsweringError(
                f"a daemon holds {self.located.lock_path} but does not answer ({problem}), and "
                f"{self.located.pid_path} does not name it; find it with "
                "'ps ax | grep \"thatch daemon\"' and kill it"
            )
        for signum in (signal.SIGCONT, signal.SIGTERM):
            _signal(pid, signum)
        if self._released(TERM_GRACE_SECONDS):
            return Stopped(pid, "SIGTERM", problem)
        _signal(pid, signal.SIGKILL)
        if self._released(KILL_GRACE_SECONDS):
            return Stopped(pid, "SIGKILL", problem)
        raise DaemonUnavailableError(f"the daemon (pid {pid}) did not exit, even on SIGKILL")

    def _released(self, seconds: float) -> bool:
        """Whether the lock is free within ``seconds``."""
        try:
            self.wait_stopped(seconds)
        except DaemonUnavailableError:
            return False
        return True

    def wait_stopped(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while lock.is_held(self.located.lock_path):
            if time.monotonic() > deadline:
                raise DaemonUnavailableError(
                    f"the daemon did not stop within {timeout:.0f} s; "
                    f"its pid is in {self.located.pid_path}"
                )
            time.sleep(0.05)
        # The lock is freed just before the process ends: give it a moment.
        _reap(wait=1.0)


def _signal(pid: int, signum: int) -> None:
    # Gone already: what the signal was for.
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


def _is_daemon(pid: int) -> bool:
    """Whether ``pid`` runs ``thatch daemon run`` (where /proc tells; elsewhere trusted).

    A pid file outlives a daemon killed by SIGKILL, and its pid may be
    another program's by now.
    """
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().split(b"\0")
    except FileNotFoundError:
        # No such process, unless there is no /proc to ask at all.
        return not os.path.isdir("/proc/self")
    except OSError:
        return True
    return b"daemon" in words and b"run" in words


def _reap(wait: float = 0.0) -> None:
    """Collect the exit status of daemons this process started and that have exited."""
    for child in list(_children):
        try:
            child.wait(timeout=wait) if wait else child.poll()
        except subprocess.TimeoutExpired:
            continue  # another daemon of ours, still serving
        if child.returncode is not None:
            _children.remove(child)
