"""What thatch creates stays its owner's, whatever the umask.

A umask of 000 (or 002) would otherwise give other users write access to
folders thatch creates on the way (the state folder above the spool, the
cache) and read access to files the libraries write there. So every thatch
process tightens its umask first (:func:`tighten_umask`), the folders thatch
keeps are made 0700 at each level it creates (:func:`make_private_dirs`),
and files setup writes into a harness's folders get the user's own umask
with group and other write taken away (:func:`shared_mode`).

Standard library only: the hook commands use it.
"""

from __future__ import annotations

import errno
import os
import stat

#: What the user's umask was before :func:`tighten_umask` (None: not tightened).
_user_umask: int | None = None


def tighten_umask() -> None:
    """Make everything this process creates owner-only from now on (idempotent)."""
    global _user_umask
    if _user_umask is None:
        _user_umask = os.umask(0o077)
        os.umask(_user_umask | 0o077)


def user_umask() -> int:
    """The umask the user started thatch with (the current one if never tightened)."""
    if _user_umask is not None:
        return _user_umask
    current = os.umask(0o077)
    os.umask(current)
    return current


def shared_mode(executable: bool = False) -> int:
    """The mode of a new file setup writes for a harness: the user's umask, never g/o-writable."""
    base = 0o777 if executable else 0o666
    return base & ~(user_umask() | 0o022)


def make_private_dirs(path: str | os.PathLike[str]) -> None:
    """Create ``path`` and each missing folder above it, every one 0700; keep existing ones."""
    _make_dirs(path, 0o700)


def make_shared_dirs(path: str | os.PathLike[str]) -> None:
    """Create ``path`` and missing parents for harness files: readable, never g/o-writable."""
    _make_dirs(path, 0o777 & ~(user_umask() | 0o022))


def _make_dirs(path: str | os.PathLike[str], mode: int) -> None:
    missing = []
    folder = os.path.abspath(path)
    while not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, mode)
        except FileExistsError:
            continue
        # mkdir applies the umask, which may also take the owner's own bits.
        os.chmod(folder, mode)


class UnsafeFileError(PermissionError):
    """A file thatch is about to trust belongs to someone else or is open to others."""

    def __init__(self, message: str) -> None:
        # As an OSError's strerror, so callers that report OSErrors show the reason.
        super().__init__(errno.EACCES, message)


def check_owned(path: str | os.PathLike[str]) -> None:
    """Refuse an existing ``path`` another user owns or that others may read or write.

    SQLite reads an existing ``-wal`` file as part of the database: one
    planted by another user (or left world-readable) would feed it writes or
    leak queued tool output. A missing file is fine.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if info.st_uid != os.getuid():
        raise UnsafeFileError(
            f"{path} belongs to uid {info.st_uid}, not you ({os.getuid()}); thatch will not "
            "open it. Move it away (it is not yours), then run the command again"
        )
    if stat.S_ISLNK(info.st_mode) or stat.S_IMODE(info.st_mode) & 0o077:
        raise UnsafeFileError(
            f"{path} is a link or can be read by other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}); thatch will not open it. Check who wrote it, "
            f"then remove it or run: chmod 600 {path}"
        )
