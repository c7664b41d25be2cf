"""File operations for setup: exact reads, atomic writes, backups.

Text is decoded as UTF-8 with ``surrogateescape`` so that any byte the user
had survives a read and a write unchanged, even in a file that is not
valid UTF-8.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import attrs

from thatch.plugin.errors import ThatchError

ENCODING = "utf-8"
ERRORS = "surrogateescape"

#: Backups live here under the state folder, one timestamped folder per run.
BACKUPS = "setup-backups"


@attrs.frozen
class Current:
    """A file as it is now: its text and permission bits (None when missing)."""

    text: str | None
    mode: int | None


def read(path: Path) -> Current:
    """The file's text and mode; a missing file gives ``Current(None, None)``."""
    try:
        data = Path(path).read_bytes()
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return Current(None, None)
    except OSError as exc:
        raise ThatchError(
            f"cannot read {path} ({exc.strerror}); make it a file you can read and write, "
            "then run thatch setup again"
        ) from None
    return Current(data.decode(ENCODING, ERRORS), mode)


def encode(text: str) -> bytes:
    """Bytes for ``text`` as read by :func:`read`."""
    return text.encode(ENCODING, ERRORS)


def sha256(text: str) -> str:
    """The hex SHA-256 of ``text``'s bytes."""
    return hashlib.sha256(encode(text)).hexdigest()


def default_mode(executable: bool) -> int:
    """The mode of a new harness file: the user's umask, never group- or world-writable."""
    from thatch.private import shared_mode

    return shared_mode(executable)


def with_execute(mode: int) -> int:
    """``mode`` plus the execute bit wherever it has the read bit."""
    return mode | ((mode & 0o444) >> 2)


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Replace ``path`` with ``text`` via a temporary file and a rename.

    A symlinked path is written through to its target, so dotfile managers'
    links survive. ``mode`` None keeps the existing file's mode (or the
    umask default for a new file).
    """
    real = Path(os.path.realpath(path))
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(real).st_mode)
        except FileNotFoundError:
            mode = default_mode(executable=False)
    handle, temporary = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(encode(text))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, real)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def new_backup_folder(state_dir: Path) -> Path:
    """A fresh timestamped folder under ``state_dir/setup-backups`` (never an existing one)."""
    from thatch.private import make_private_dirs

    root = Path(state_dir) / BACKUPS
    make_private_dirs(root)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(1000):
        folder = root / (stamp if attempt == 0 else f"{stamp}-{attempt}")
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"{root} has too many backups named {stamp}*; remove some")


def backup(folder: Path, path: Path, text: str, mode: int | None) -> Path:
    """Copy ``text`` (the content of ``path``) into ``folder``, keeping the path's structure."""
    absolute = Path(os.path.abspath(path))
    from thatch.private import make_private_dirs

    target = folder / absolute.relative_to(absolute.anchor)
    make_private_dirs(target.parent)
    # "x": an older backup is never overwritten; 0600 until the file's own mode is known.
    with os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
        out.write(encode(text))
    if mode is not None:
        os.chmod(target, mode)
    return target
