"""Start the daemon on demand, detached, at most once every few seconds.

A burst of tool calls with no daemon would otherwise start one process per
call; a stamp file in the runtime folder spaces the attempts out, and the
daemon's own lock keeps a second instance from running when two slip through.
"""

from __future__ import annotations

import os
import sys
import time

from thatch.hookcmd.spool import make_private_dir

#: Set to 1 to never start the daemon from a hook command (tests, managed setups).
NO_AUTOSTART_VAR = "THATCH_NO_AUTOSTART"
#: Hooks do not start the daemon again within this many seconds of the last try.
SPAWN_INTERVAL_SECONDS = 2.0
STAMP_NAME = "spawn.stamp"

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def daemon_command(*, replacing: bool = False) -> list[str]:
    """The daemon's command line (``-P``: a ``thatch`` folder in the cwd must not shadow us).

    ``replacing``: the daemon answered that it is outdated and is exiting; the
    new one waits for its lock instead of exiting at once.
    """
    command = [sys.executable, "-P", "-m", "thatch", "daemon", "run"]
    return [*command, "--replacing"] if replacing else command


class Start:
    """What :func:`start_daemon` did: a note for the log, and whether a daemon is coming."""

    __slots__ = ("coming", "note", "pid")

    def __init__(self, note: str, *, coming: bool, pid: int | None = None) -> None:
        self.note = note
        #: A daemon was started now or moments ago, so waiting for it makes sense.
        self.coming = coming
        #: The process started now (None when none was).
        self.pid = pid


def disabled(environ: Mapping[str, str]) -> bool:
    """Whether ``THATCH_NO_AUTOSTART`` keeps hook commands from starting the daemon."""
    return environ.get(NO_AUTOSTART_VAR, "").strip() not in ("", "0")


def start_daemon(
    runtime_dir: str,
    environ: Mapping[str, str],
    home: str | None,
    *,
    spaced: bool = True,
    lock_path: str | None = None,
    replacing: bool = False,
) -> Start:
    """Start the daemon unless disabled or, when ``spaced``, tried just now.

    A hook that will wait for the daemon passes ``spaced=False``: the daemon
    started moments ago may have stopped since, and only a process of its
    own tells it whether to go on waiting (see :func:`exit_status`). A spare
    daemon exits when another one keeps the lock (see thatch.daemon.lifecycle).

    ``lock_path``, the daemon's lock: while a daemon holds it (one is starting
    or running), none is started beside it. A spare would wait for that lock
    and take over the moment the first one stops, so `thatch daemon stop`
    right after a cold start would leave a daemon running.

    ``replacing``: the running daemon said it is outdated; the new one waits
    for it to let go of the lock (see :func:`daemon_command`).

    Raises ``OSError`` when the process cannot be started.
    """
    if disabled(environ):
        return Start(f"not starting the daemon ({NO_AUTOSTART_VAR} is set)", coming=False)
    if lock_path is not None:
        from thatch.daemon_lock import is_held

        if is_held(lock_path):
            return Start("a daemon is starting (it holds the lock)", coming=True)
    stamp = os.path.join(runtime_dir, STAMP_NAME)
    if spaced and _touched_recently(stamp):
        return Start("the daemon was started moments ago", coming=True)
    _touch(runtime_dir, stamp)
    env = dict(environ)
    if home:
        env["THATCH_HOME"] = home
    pid = _spawn(daemon_command(replacing=replacing), env)
    return Start("starting the daemon", coming=True, pid=pid)


def exit_status(pid: int) -> int | None:
    """The exit status of the daemon process ``pid`` started, or None while it runs.

    A daemon that finds another one holding the lock exits 0; anything else
    means it failed to start.
    """
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None  # not ours to wait for (reaped already): assume it runs
    return os.waitstatus_to_exitcode(status) if done else None


def _touched_recently(stamp: str) -> bool:
    try:
        age = time.time() - os.stat(stamp).st_mtime
    except OSError:
        return False
    # A stamp from the future (clock moved back) counts as old.
    return 0 <= age < SPAWN_INTERVAL_SECONDS


def _touch(runtime_dir: str, stamp: str) -> None:
    make_private_dir(runtime_dir)
    fd = os.open(stamp, os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(fd)
    os.utime(stamp)


def _spawn(argv: list[str], env: dict[str, str]) -> int:
    devnull = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
    ]
    try:
        # A session of its own: the harness killing the hook's group spares the daemon.
        return os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True)
    except NotImplementedError:
        return os.posix_spawn(argv[0], argv, env, file_actions=actions, setpgroup=0)
