"""Running the daemon: lock, socket (bound again if lost), warm-up, spool replay, idle exit.

Plugins hear the daemon start (``thatch_daemon_started``, once the socket
listens and before any event is handled) and stop (``thatch_daemon_stopping``,
once the last event is handled and before storage closes), however it stops:
idle, ``thatch daemon stop``, a newer client, or a signal. Each call is waited
for at most :data:`PLUGIN_HOOK_SECONDS`: a plugin that hangs there is logged
and left behind, and the daemon starts or stops all the same.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

import attrs

from thatch import daemon_lock as lock
from thatch import logfile, rundir, socketguard
from thatch.config.plugin_tables import with_plugin_tables
from thatch.daemon import security
from thatch.daemon.handlers import Handlers
from thatch.daemon.hook_events import handle_hook
from thatch.daemon.server import DaemonServer
from thatch.daemon.spool import Spool
from thatch.daemon.throttle import Throttle
from thatch.plugin.config import Config
from thatch.plugins import Plugins
from thatch.runtime import Runtime

log = logging.getLogger("thatch")

#: How often the spool folder is checked and the idle time compared.
TICK_SECONDS = 0.5
#: A daemon that was just told to stop (it is outdated) may still hold the lock this long.
LOCK_WAIT_SECONDS = 5.0
#: Sessions not seen for this long lose their queues and nudge state.
SESSION_RETENTION_SECONDS = 7 * 24 * 3600
PURGE_EVERY_SECONDS = 3600
#: A step of the loop that keeps failing the same way is logged this often at most.
FAILURE_LOG_SECONDS = 60.0
#: How long the daemon waits for all plugins' thatch_daemon_started, then again
#: for their thatch_daemon_stopping, before it goes on without them.
PLUGIN_HOOK_SECONDS = 5.0

T = TypeVar("T")


def run(
    home: str | None = None, environ: Mapping[str, str] | None = None, *, replacing: bool = False
) -> int:
    """Serve until stopped, idle for too long, or signalled; returns the exit status.

    A daemon finding the lock held exits at once: another one runs or is
    starting (two hooks found none at the same moment). Only one that
    ``replacing`` an outdated daemon, which is exiting, waits for its lock;
    a spare that waited would take over the moment ``thatch daemon stop``
    ended the first.
    """
    env = os.environ if environ is None else environ
    located = rundir.locate(env, home=home)
    security.private_dir(located.runtime_dir)
    os.makedirs(located.state_dir, mode=0o700, exist_ok=True)
    logfile.configure(located.log_path)
    held = lock.acquire(located.lock_path, wait_seconds=LOCK_WAIT_SECONDS if replacing else 0.0)
    if held is None:
        log.info("another daemon holds %s; not starting", located.lock_path)
        return 0
    # At once: a daemon that holds the lock but does not answer is found by
    # its pid (see DaemonClient.stop), even while it loads its plugins.
    _write_pid(located.pid_path)
    try:
        return _serve(home, env, located)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(located.pid_path)
        lock.release(held)


def _serve(home: str | None, env: Mapping[str, str], located: rundir.RunDir) -> int:
    config = _long_lived(Config.load(home, env))
    plugins = Plugins.load(config, env)
    # A bad value in a plugin's table fails the start, as one in core's tables does.
    app = Runtime(with_plugin_tables(config, plugins), plugins)
    spool = Spool(located.spool_dir)
    stopping = threading.Event()
    handlers = Handlers(
        app,
        stop=stopping.set,
        spool_backlog=spool.backlog,
        spool_failed=spool.failed,
        catch_up=lambda request: _catch_up(app, spool, request),
    )
    bound = security.socket_to_bind(located)
    # Holding the lock makes any socket file left there a dead daemon's.
    _remove_quietly(bound)
    server = DaemonServer(
        bound,
        handlers,
        after=app.run_deferred,
        notice=handlers.notice,
        open_session=handlers.open_session,
    )
    listener = Listener(server, located, bound)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stopping.set())
    log.info("daemon %d listening on %s (database %s)", os.getpid(), bound, config.db_path)
    # The socket listens; connections wait in its queue until the plugins are told.
    tell_plugins("thatch_daemon_started", app.plugins.daemon_started, app)
    # Before the first request can arrive: one that needs the model waits for the warm-up.
    app.warming.expect()
    try:
        listener.start()
        _warm_up(app)
        _loop(app, spool, listener, stopping)
    finally:
        # Accepting stops and the requests being served end: no event comes after.
        listener.close()
        tell_plugins("thatch_daemon_stopping", app.plugins.daemon_stopping, app)
        app.close()
        log.info("daemon %d stopped", os.getpid())
    return 0


def tell_plugins(
    hook: str,
    call: Callable[[Runtime], None],
    app: Runtime,
    seconds: float = PLUGIN_HOOK_SECONDS,
) -> bool:
    """Run a daemon lifecycle hook, waiting for it ``seconds`` at most; False if it took longer.

    It runs on a thread of its own so that a plugin that hangs cannot hold
    the daemon's start or stop: the thread is a daemon thread, left behind.
    A plugin that raises is logged and skipped by the plugin manager (the
    hook is isolated); anything that escapes it is logged here.
    """

    def run() -> None:
        try:
            call(app)
        except Exception:
            log.exception("%s failed", hook)

    thread = threading.Thread(target=run, name=hook, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        log.warning(
            "%s still runs after %g s; the daemon goes on without waiting for it", hook, seconds
        )
        return False
    return True


def _loop(app: Runtime, spool: Spool, listener: Listener, stopping: threading.Event) -> None:
    """Each tick: the socket, the purge (hourly), the spool, deferred writes (and those
    kept after the storage failed, when due), the idle exit.

    A step that fails is logged and tried again on the next tick: one bad
    spool file or a full disk must not end the daemon (the hooks would only
    start it again, and again).
    """
    steps = Steps()
    idle_limit = app.settings.idle_minutes * 60
    next_purge = 0.0
    while not stopping.wait(TICK_SECONDS):
        steps.run("socket check", listener.keep)
        if time.monotonic() >= next_purge:
            next_purge = time.monotonic() + PURGE_EVERY_SECONDS
            steps.run("session purge", lambda: _purge(app))
        steps.run("spool replay", lambda: spool.replay(lambda r: handle_hook(app, r, replay=True)))
        steps.run("deferred writes", app.run_deferred)
        steps.run("kept writes", app.retry_writes)
        if idle_limit and steps.run("idle check", lambda: listener.idle_for() > idle_limit):
            log.info("idle for %.0f minutes; exiting", app.settings.idle_minutes)
            return


def _catch_up(app: Runtime, spool: Spool, request: Mapping[str, object]) -> int:
    """Replay the events spooled before ``request`` (a live hook event) arrived."""
    received = request.get("received_at")
    before = float(received) if isinstance(received, int | float) and received > 0 else time.time()
    return spool.catch_up(before, lambda r: handle_hook(app, r, replay=True))


def _purge(app: Runtime) -> None:
    purged = app.sessions.purge(SESSION_RETENTION_SECONDS)
    if purged:
        log.info("forgot %d sessions idle for over a week", purged)


class Steps:
    """Runs the loop's steps so that one failing is logged, not fatal.

    A failure that persists would be logged every tick; the same error of
    the same step is logged at most once per :data:`FAILURE_LOG_SECONDS`.
    """

    def __init__(self, quiet_seconds: float = FAILURE_LOG_SECONDS) -> None:
        self.quiet_seconds = quiet_seconds
        #: Keyed by (step, error type and line).
        self._throttle = Throttle(quiet_seconds)

    def run(self, name: str, step: Callable[[], T]) -> T | None:
        """``step()``'s result, or None when it raised (and was logged)."""
        try:
            return step()
        except Exception as exc:
            if self._due(name, exc):
                log.exception(
                    "daemon loop: %s failed (tried again every %.1f s; the same error is "
                    "logged at most once every %.0f s)",
                    name,
                    TICK_SECONDS,
                    self.quiet_seconds,
                )
            return None

    def _due(self, name: str, exc: Exception) -> bool:
        return self._throttle.due((name, _raised_where(exc)))


def _raised_where(exc: BaseException) -> str:
    """The error's type and the line that raised it: what makes two failures the same.

    Not its message, which often names a path or a count that changes every time.
    """
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    where = f"{frame.tb_frame.f_code.co_filename}:{frame.tb_lineno}" if frame else "?"
    return f"{type(exc).__name__} at {where}"


class Listener:
    """The server's accept loop, and the socket file it listens on, bound again if it goes.

    A socket file deleted (a cleanup of the temporary folder, a user) or
    replaced leaves the daemon running with no way to reach it: hooks would
    start doomed daemons and the agent would get no nudges until the idle
    exit. Each tick compares the file at the path with the one bound, and
    binds a new socket when they differ. The accept loop never stops for it,
    and connections already accepted, MCP sessions among them, go on.
    """

    def __init__(self, server: DaemonServer, located: rundir.RunDir, bound: str) -> None:
        self.server = server
        self.located = located
        self.bound = bound
        self._identity = _identity(bound)
        self._serving: threading.Thread | None = None

    def start(self) -> None:
        """Accept connections (in a thread), and link the socket path to the socket."""
        security.link_socket(self.located.socket_path, self.bound)
        self._serving = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.2}
        )
        self._serving.start()

    def idle_for(self) -> float:
        return self.server.idle_for()

    def keep(self) -> None:
        """Bind again if the socket file is gone or another; link again if only the link is."""
        if _identity(self.bound) != self._identity:
            log.warning("the socket %s was removed or replaced; listening on a new one", self.bound)
            self._rebind()
            return
        address = self.located.socket_path
        if self.located.socket_linked and socketguard.linked_socket(address) != self.bound:
            log.warning("the link %s to the socket was removed or changed; linking again", address)
            security.link_socket(address, self.bound)

    def close(self) -> None:
        """Stop accepting, end the connections and remove the socket files."""
        self._stop_accepting()
        self.server.server_close()
        security.remove_socket(self.located.socket_path, self.bound)

    def _rebind(self) -> None:
        # The new socket first: if it cannot be made, nothing changed and the
        # next tick tries again.
        bound = security.socket_to_bind(self.located, previous=self.bound)
        fresh = _listening_socket(bound, self.server)
        try:
            # Swapped in place: the accept loop polls this descriptor number,
            # which now refers to the new socket, so it never stops and no
            # connection is turned away. Non-blocking: an accept that raced
            # the swap finds nothing and returns instead of waiting.
            fresh.setblocking(False)
            os.dup2(fresh.fileno(), self.server.socket.fileno(), inheritable=False)
        finally:
            fresh.close()
        self.server.server_address = bound
        self.bound, self._identity = bound, _identity(bound)
        security.link_socket(self.located.socket_path, bound)
        log.info("listening on %s again", bound)

    def _stop_accepting(self) -> None:
        if self._serving is None:
            return
        self.server.shutdown()
        self._serving.join()
        self._serving = None


def _listening_socket(path: str, server: DaemonServer) -> socket.socket:
    """A socket listening at ``path`` as the server's own does (0600 from the start)."""
    _remove_quietly(path)
    fresh = socket.socket(server.address_family, server.socket_type)
    try:
        previous = os.umask(0o177)
        try:
            fresh.bind(path)
        finally:
            os.umask(previous)
        os.chmod(path, 0o600)
        fresh.listen(server.request_queue_size)
    except BaseException:
        fresh.close()
        raise
    return fresh


def _identity(path: str) -> tuple[int, int] | None:
    """Which file ``path`` is (device and inode), or None when there is none."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _long_lived(config: Config) -> Config:
    """The daemon's config: no memory-mapped database unless the user set ``mmap_mb``.

    Pages read through a map stay resident in the process that mapped them;
    in a daemon that lives for hours that is most of the database (measured:
    +128 MB after 20 searches of 100k memories).
    """
    storage = config.sections.get("storage", {})
    if not isinstance(storage, Mapping) or "mmap_mb" in storage:
        return config
    sections = {**config.sections, "storage": {**storage, "mmap_mb": 0}}
    return attrs.evolve(config, sections=sections)


def _warm_up(app: Runtime) -> None:
    """Load the model and the vector caches now, not on the first prompt."""
    started = time.monotonic()
    try:
        app.warm_up()
    except Exception:
        # A broken model or database is reported per request (and by doctor);
        # the daemon still answers what it can.
        log.exception("warm-up failed")
        return
    log.info("warm in %.2f s", time.monotonic() - started)


def _write_pid(path: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(f"{os.getpid()}\n")
