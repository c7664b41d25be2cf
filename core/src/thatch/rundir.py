"""Where the daemon's socket, lock, spool and log live — on the standard library only.

The hook commands run on every prompt and tool call, so they cannot afford
platformdirs or attrs. :func:`user_dirs` finds the user's folders for
:mod:`thatch.paths` too, so the two never disagree; they are the ones
platformdirs picks (a unit test checks): each XDG base directory variable
moves its own folder — ``XDG_CONFIG_HOME`` the config file,
``XDG_DATA_HOME`` the database, ``XDG_STATE_HOME`` the spool, log and
session state, ``XDG_CACHE_HOME`` the models, ``XDG_RUNTIME_DIR`` the
socket, lock and pid file — and macOS has its ``~/Library`` folders.

One daemon serves one user and one database: the socket is ``daemon.sock``
in the runtime folder, or ``daemon-<hash>.sock`` when ``THATCH_DB_PATH``
points at another database. Unix socket paths are limited to ~104 bytes:
when that one is longer, the daemon binds its socket in a private folder of
its own with an unpredictable name, under the system's temporary directory,
and leaves a symbolic link to it at the long path (clients follow it, see
:mod:`thatch.socketguard`). A predictable folder there could be made first
by another user, who would then receive every hook's payload.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

APP_NAME = "thatch"
#: Longest socket path bound directly (macOS allows 104 bytes, Linux 108).
MAX_SOCKET_PATH = 100


class RunDir:
    """The daemon's files for one home (or the user's folders) and database."""

    def __init__(
        self, runtime_dir: str, state_dir: str, db_key: str | None = None, config_dir: str = ""
    ) -> None:
        self.runtime_dir = runtime_dir
        self.state_dir = state_dir
        self.db_key = db_key
        self.config_dir = config_dir

    @property
    def config_file(self) -> str:
        """The config file (the hook commands read their cap from it)."""
        return os.path.join(self.config_dir, "config.toml")

    @property
    def _stem(self) -> str:
        return f"daemon-{self.db_key}" if self.db_key else "daemon"

    @property
    def socket_path(self) -> str:
        """Where clients connect: the socket, or the daemon's link to it (see the module doc)."""
        return os.path.join(self.runtime_dir, f"{self._stem}.sock")

    @property
    def socket_linked(self) -> bool:
        """Whether :attr:`socket_path` is too long to bind, so the daemon links it instead."""
        return not bindable(self.socket_path)

    @property
    def lock_path(self) -> str:
        return os.path.join(self.runtime_dir, f"{self._stem}.lock")

    @property
    def pid_path(self) -> str:
        return os.path.join(self.runtime_dir, f"{self._stem}.pid")

    @property
    def spool_dir(self) -> str:
        """Events the daemon could not take yet, one file each, replayed when it is back."""
        return os.path.join(self.state_dir, "spool")

    @property
    def log_dir(self) -> str:
        return os.path.join(self.state_dir, "log")

    @property
    def log_path(self) -> str:
        return os.path.join(self.log_dir, "thatch.log")

    @property
    def sessions_db(self) -> str:
        """The local SQLite file of session queues and nudge state (never shared)."""
        return os.path.join(self.state_dir, "sessions.db")


class UserDirs:
    """The user's folders for thatch when no THATCH_HOME is in use."""

    __slots__ = ("cache_dir", "config_dir", "data_dir", "runtime_dir", "state_dir")

    def __init__(
        self, config_dir: str, data_dir: str, state_dir: str, cache_dir: str, runtime_dir: str
    ) -> None:
        self.config_dir = config_dir
        self.data_dir = data_dir
        self.state_dir = state_dir
        self.cache_dir = cache_dir
        self.runtime_dir = runtime_dir


def user_dirs(environ: Mapping[str, str] | None = None) -> UserDirs:
    """The user's folders, from the XDG base directory variables in ``environ`` (see above)."""
    env = os.environ if environ is None else environ
    if sys.platform == "darwin":
        library = os.path.expanduser("~/Library")
        support = os.path.join(library, "Application Support", APP_NAME)
        caches = os.path.join(library, "Caches", APP_NAME)
        return UserDirs(support, support, support, caches, os.path.join(support, "run"))
    state = _xdg_dir(env, "XDG_STATE_HOME", "~/.local/state")
    runtime_root = _absolute_or_none(env.get("XDG_RUNTIME_DIR"))
    # Without XDG_RUNTIME_DIR, inside the user's own state folder, never a shared /tmp one.
    runtime = os.path.join(runtime_root, APP_NAME) if runtime_root else os.path.join(state, "run")
    return UserDirs(
        _xdg_dir(env, "XDG_CONFIG_HOME", "~/.config"),
        _xdg_dir(env, "XDG_DATA_HOME", "~/.local/share"),
        state,
        _xdg_dir(env, "XDG_CACHE_HOME", "~/.cache"),
        runtime,
    )


def locate(environ: Mapping[str, str] | None = None, home: str | None = None) -> RunDir:
    """The daemon's files for ``home`` (else ``$THATCH_HOME``, else the user's folders)."""
    env = os.environ if environ is None else environ
    chosen = home or env.get("THATCH_HOME") or None
    db_path = env.get("THATCH_DB_PATH") or None
    db_key = _short_hash(absolute(db_path), 10) if db_path else None
    if chosen:
        root = absolute(chosen)
        return RunDir(
            os.path.join(root, "run"),
            os.path.join(root, "state"),
            db_key,
            os.path.join(root, "config"),
        )
    user = user_dirs(env)
    return RunDir(user.runtime_dir, user.state_dir, db_key, user.config_dir)


def bindable(path: str) -> bool:
    """Whether a Unix socket can be bound at ``path`` (it is short enough)."""
    return len(path.encode()) <= MAX_SOCKET_PATH


def _short_hash(text: str, length: int) -> str:
    # Imported here: hashlib costs the hook commands ~3 ms and is rarely needed.
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:length]


def absolute(path: str) -> str:
    """``path`` with ``~`` expanded and symlinks resolved (how homes and databases are keyed)."""
    return os.path.realpath(os.path.expanduser(path))


def _absolute_or_none(value: str | None) -> str | None:
    # The XDG spec (and platformdirs) ignore relative paths: taken as they are,
    # they would put the socket and spool under each hook's working directory.
    return value if value and os.path.isabs(value) else None


def _xdg_dir(env: Mapping[str, str], variable: str, default: str) -> str:
    base = _absolute_or_none(env.get(variable)) or os.path.expanduser(default)
    return os.path.join(base, APP_NAME)
