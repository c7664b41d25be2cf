"""Running the daemon: lock, socket, warm-up, spool replay, idle exit, clean stop."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Mapping

import attrs

from thatch import logfile, rundir
from thatch.config import Config
from thatch.daemon import lock
from thatch.daemon.handlers import Handlers
from thatch.daemon.hook_events import handle_hook
from thatch.daemon.security import private_dir
from thatch.daemon.server import DaemonServer
from thatch.daemon.spool import Spool
from thatch.plugins import Plugins
from thatch.runtime import Runtime

log = logging.getLogger("thatch")

#: How often the spool folder is checked and the idle time compared.
TICK_SECONDS = 0.5
#: A daemon that was just told to stop may still hold the lock this long.
LOCK_WAIT_SECONDS = 5.0
#: Sessions not seen for this long lose their queues and nudge state.
SESSION_RETENTION_SECONDS = 7 * 24 * 3600
PURGE_EVERY_SECONDS = 3600


def run(home: str | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Serve until stopped, idle for too long, or signalled; returns the exit status."""
    env = os.environ if environ is None else environ
    located = rundir.locate(env, home=home)
    private_dir(located.runtime_dir)
    os.makedirs(located.state_dir, mode=0o700, exist_ok=True)
    logfile.configure(located.log_path)
    socket_path = located.socket_path
    private_dir(os.path.dirname(socket_path))
    held = lock.acquire(located.lock_path, wait_seconds=LOCK_WAIT_SECONDS)
    if held is None:
        log.info("another daemon holds %s; not starting", located.lock_path)
        return 0
    try:
        return _serve(home, env, located, socket_path)
    finally:
        lock.release(held)


def _serve(
    home: str | None, env: Mapping[str, str], located: rundir.RunDir, socket_path: str
) -> int:
    # Holding the lock makes any socket file left here a dead daemon's.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(socket_path)
    config = _long_lived(Config.load(home, env))
    app = Runtime(config, Plugins.load(config, env))
    spool = Spool(located.spool_dir)
    stopping = threading.Event()
    handlers = Handlers(app, stop=stopping.set, spool_backlog=spool.backlog)
    server = DaemonServer(
        socket_path,
        handlers,
        after=app.run_deferred,
        notice=handlers.notice,
        open_session=handlers.open_session,
    )
    _write_pid(located.pid_path)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stopping.set())
    log.info("daemon %d listening on %s (database %s)", os.getpid(), socket_path, config.db_path)
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2})
    # Before the first request can arrive: one that needs the model waits for the warm-up.
    app.warming.expect()
    serving.start()
    try:
        _warm_up(app)
        idle_limit = app.settings.idle_minutes * 60
        next_purge = 0.0
        while not stopping.wait(TICK_SECONDS):
            if time.monotonic() >= next_purge:
                purged = app.sessions.purge(SESSION_RETENTION_SECONDS)
                if purged:
                    log.info("forgot %d sessions idle for over a week", purged)
                next_purge = time.monotonic() + PURGE_EVERY_SECONDS
            spool.replay(lambda request: handle_hook(app, request, replay=True))
            app.run_deferred()
            if idle_limit and server.idle_for() > idle_limit:
                log.info("idle for %.0f minutes; exiting", app.settings.idle_minutes)
                break
    finally:
        server.shutdown()
        serving.join()
        server.server_close()
        for path in (socket_path, located.pid_path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        app.close()
        log.info("daemon %d stopped", os.getpid())
    return 0


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
