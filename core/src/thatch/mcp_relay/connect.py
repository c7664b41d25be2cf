"""Opening an MCP session with the daemon: connect, or start it and wait until it listens.

One JSON line opens the session (``op: mcp``, see :mod:`thatch.wire`); the
daemon answers with one line, and from then on the connection carries the
session's messages. No daemon listening: it is started the way the hook
commands start it (:mod:`thatch.hookcmd.autostart`) and polled until it
answers (:func:`thatch.hookcmd.coldstart.ask_when_listening`). A daemon
older than this client answers ``restart`` and exits; the next one is
started once the old one has let go of its lock. Nothing is sent to a
socket :mod:`thatch.socketguard` does not find to be the user's own.
"""

from __future__ import annotations

import os
import socket
import time

import thatch
from thatch import rundir, socketguard, wire
from thatch.hookcmd import answers

# Not typing.TYPE_CHECKING: this start-up path does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: How long the daemon may take to answer the opening line (it checks the setup).
OPEN_TIMEOUT = 10.0
#: How long a daemon started here may take to listen (it loads its plugins first).
LISTEN_TIMEOUT = 30.0
#: Tries before giving up: a daemon may be stopping or restarting meanwhile.
ATTEMPTS = 4
#: Pause after a connection a stopping daemon dropped unanswered.
RETRY_PAUSE = 0.1


def forwarded_env(located: rundir.RunDir) -> tuple[str, ...]:
    """The variables a session's opening line forwards: core's and the harnesses'.

    The harnesses' (``Harness.environment``) come from the hook table
    (:mod:`thatch.hookcmd.answers`); without one, core's own alone.
    """
    table = answers.load(located.state_dir)
    return (*wire.MCP_ENV, *(table.environment if table is not None else ()))


class Unavailable(Exception):
    """No session could be opened; the message says why."""


class Session:
    """An open session: the connection, what the daemon sent after its answer, its notice."""

    __slots__ = ("notice", "rest", "sock")

    def __init__(self, sock: socket.socket, rest: bytes, notice: str) -> None:
        self.sock = sock
        #: Bytes already received after the daemon's answer (the session's first).
        self.rest = rest
        #: The setup notice: what is missing in the harness's setup (empty: nothing).
        self.notice = notice


class _Outdated(Exception):
    """The daemon is older than this client and is exiting."""


class Opener:
    """Opens sessions with the daemon of ``located`` for one ``thatch mcp`` process."""

    def __init__(
        self, located: rundir.RunDir, environ: Mapping[str, str], home: str | None, cwd: str
    ) -> None:
        self.located = located
        self.environ = environ
        self.home = rundir.absolute(home) if home else None
        self.cwd = cwd

    def message(self) -> dict[str, object]:
        """The session's opening line.

        Built at each attempt: the hook table that names the harnesses'
        variables may appear only once the daemon this relay started is up.
        """
        names = forwarded_env(self.located)
        return {
            "protocol": wire.PROTOCOL,
            "client": thatch.__version__,
            "op": wire.MCP_OP,
            "cwd": self.cwd,
            "env": {name: self.environ[name] for name in names if self.environ.get(name)},
        }

    def open(self) -> Session:
        """A new session; raises :class:`Unavailable` when no daemon answers or can start."""
        self._reap()
        why = "the daemon went away while the session was opened"
        for _ in range(ATTEMPTS):
            try:
                return self._open()
            except (FileNotFoundError, ConnectionRefusedError):
                self._start()
            except _Outdated:
                self._wait_stopped()
            except TimeoutError as exc:
                raise Unavailable(f"the daemon did not answer within {OPEN_TIMEOUT:.0f} s") from exc
            except socketguard.UnsafeSocketError as exc:
                raise Unavailable(str(exc)) from exc
            except (OSError, wire.WireError) as exc:
                # Reset or closed unanswered: a daemon stopping right now.
                why = f"the daemon could not be reached ({exc})"
                time.sleep(RETRY_PAUSE)
        raise Unavailable(why)

    def _open(self) -> Session:
        if getattr(socket, "AF_UNIX", None) is None:
            raise Unavailable("this platform has no Unix sockets")
        sock = socketguard.connect(self.located.socket_path, OPEN_TIMEOUT)
        try:
            sock.sendall(wire.encode(self.message()))
            lines = wire.LineReader(sock)
            answer = wire.decode(lines.line())
            if answer.get("restart") is True:
                raise _Outdated
            if answer.get("ok") is not True:
                raise Unavailable(f"the daemon refused the session: {answer.get('error')}")
            # The session lasts as long as the harness's: no timeout from here on.
            sock.settimeout(None)
            return Session(sock, lines.rest(), str(answer.get("notice") or ""))
        except BaseException:
            sock.close()
            raise

    def _start(self) -> None:
        """Start the daemon and wait until it answers a ping."""
        from thatch.hookcmd import autostart, coldstart

        try:
            start = autostart.start_daemon(
                self.located.runtime_dir,
                self.environ,
                self.home,
                spaced=False,
                lock_path=self.located.lock_path,
            )
        except OSError as exc:
            raise Unavailable(f"the daemon could not be started ({exc})") from exc
        if not start.coming:
            raise Unavailable(start.note)
        ping = {"protocol": wire.PROTOCOL, "client": thatch.__version__, "op": "ping"}
        until = time.monotonic() + LISTEN_TIMEOUT
        try:
            coldstart.ask_when_listening(
                self.located.socket_path,
                ping,
                until,
                start.pid,
                lambda: until - time.monotonic(),
                lock_path=self.located.lock_path,
            )
        except coldstart.DaemonFailed as exc:
            raise Unavailable(f"{exc}; run 'thatch daemon run' to see why") from exc
        except TimeoutError as exc:
            raise Unavailable(
                f"the daemon did not listen within {LISTEN_TIMEOUT:.0f} s; see "
                f"{self.located.log_path}"
            ) from exc
        except (OSError, wire.WireError):
            pass  # it listens, and is perhaps stopping already: the next try says

    def _reap(self) -> None:
        """Collect the daemons started here that have exited since: no zombies under a relay.

        A relay lives as long as its harness's session, and its only children
        are the daemons it started.
        """
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return  # no child at all
            if pid == 0:
                return  # children, all running

    def _wait_stopped(self) -> None:
        """Wait until the outdated daemon has exited (rare: the heavier client is fine here)."""
        from thatch.daemon.client import DaemonClient
        from thatch.plugin.errors import ThatchError

        try:
            DaemonClient(self.home, self.environ).wait_stopped()
        except ThatchError as exc:
            raise Unavailable(str(exc)) from exc
