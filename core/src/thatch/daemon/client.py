"""Reaching the daemon from the CLI: start it on demand, call it, stop it.

The hook commands and ``thatch mcp`` have their own standard-library
clients (:mod:`thatch.hookcmd`, :mod:`thatch.mcp_relay`); this one may block
while the daemon starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any

import thatch
from thatch import rundir, wire
from thatch.daemon import lock
from thatch.errors import ThatchError

#: Loading the model and opening a large database can take this long.
START_TIMEOUT = 60.0
CALL_TIMEOUT = 120.0


_children: list[subprocess.Popen[bytes]] = []


class DaemonUnavailableError(ThatchError):
    """The daemon did not start or stopped answering."""


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
            return self.request("ping", timeout=2.0)
        except (OSError, wire.WireError):
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
        the next hook is answered within its cap.
        """
        answer = self.ping()
        if answer and answer.get("restart"):
            self.wait_stopped()
            answer = None
        if not (answer and answer.get("ok")):
            self.spawn()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = self.ping()
            if answer and answer.get("ok") and (answer.get("warm") or not warm):
                return
            time.sleep(0.05)
        raise DaemonUnavailableError(
            f"the daemon did not start within {timeout:.0f} s; "
            f"see {self.located.log_path} or run 'thatch daemon run' to see why"
        )

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

    def stop(self, timeout: float = 30.0) -> bool:
        """Ask the daemon to exit and wait until it has; False if none was running."""
        try:
            self.request("stop", timeout=5.0)
        except (OSError, wire.WireError):
            return False
        self.wait_stopped(timeout)
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


def _reap(wait: float = 0.0) -> None:
    """Collect the exit status of daemons this process started and that have exited."""
    for child in list(_children):
        try:
            child.wait(timeout=wait) if wait else child.poll()
        except subprocess.TimeoutExpired:
            continue  # another daemon of ours, still serving
        if child.returncode is not None:
            _children.remove(child)
