"""A cold start: send the event to a daemon that is only starting, as soon as it listens.

Used by hooks whose answer the agent reads (:mod:`thatch.hookcmd.answers`)
when no daemon was running. The event is already spooled and the daemon
started; this polls the socket until the daemon listens, then sends the
event once. When the daemon this hook started exits before anyone
listens, the wait ends at once instead of at the end of the allowance if
it failed to start (an error status), or if it exited 0 (another daemon
held the lock) and no daemon holds the lock any more. While another holds
it — two hooks, or a hook and ``thatch mcp``, each started one at the same
instant — that one is coming, and the wait goes on.
"""

from __future__ import annotations

import time

from thatch import wire
from thatch.hookcmd import autostart

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: How often the socket is tried while the daemon starts (it takes ~0.7 s).
POLL_SECONDS = 0.02


class DaemonFailed(Exception):
    """The daemon this hook started exited before any daemon listened."""

    def __init__(self, status: int) -> None:
        if status:
            text = f"the daemon exited with status {status} while starting"
        else:
            text = "another daemon holds the lock but does not listen"
        super().__init__(text)
        self.status = status


def ask_when_listening(
    socket_path: str,
    message: dict[str, Any] | bytes,
    until: float,
    pid: int | None,
    on_warming: Callable[[], float],
    lock_path: str | None = None,
) -> dict[str, Any]:
    """Send ``message`` once the daemon listens and return its answer.

    ``until`` is a :func:`time.monotonic` time; ``pid`` the daemon process
    this hook started, if it did; ``lock_path`` the daemon's lock. Raises
    ``TimeoutError`` when the daemon neither listens nor answers by
    ``until``, :class:`DaemonFailed`, and whatever
    :func:`thatch.wire.request` raises once connected.
    """
    while True:
        remaining = until - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the daemon did not start listening in time")
        try:
            return wire.request(socket_path, message, remaining, on_warming)
        except (FileNotFoundError, ConnectionRefusedError):
            pass  # not listening yet: nothing was sent
        if pid is not None:
            status = autostart.exit_status(pid)
            if status is not None:
                if status != 0 or not _another_holds(lock_path):
                    raise DaemonFailed(status)
                pid = None  # ours gave way to the daemon holding the lock: wait for that one
        time.sleep(max(min(POLL_SECONDS, until - time.monotonic()), 0))


def _another_holds(lock_path: str | None) -> bool:
    if lock_path is None:
        return False
    from thatch.daemon_lock import is_held

    return is_held(lock_path)
