"""The prediction log in a JSONL file: ``thatch predlog append --log FILE``.

:class:`JsonlPredictionLog` is a :class:`thatch.plugin.PredictionStorage`
on one file holding one row a line (:meth:`LoggedPrediction.to_json`, UTF-8),
the same form ``thatch predlog export`` writes, so a file and the stored log
are interchangeable. The file's rules:

- **Locking.** Every write (read the ids, keep the new rows, append them)
  happens under an exclusive ``flock`` on the file; reads take a shared one.
  Two writers at once (two Stop hooks of one session) therefore leave each
  row once. Scoring replaces the file (a temporary file renamed over it), so
  whoever locked the old file checks that the path still names the file it
  holds, and locks the new one if not.
- **Appends.** The new rows of a batch go out in one ``os.write`` of whole
  lines, then ``fsync``. A write that fails is cut back off.
- **Interrupted appends.** A writer killed mid-write can leave a last line
  without its newline. That line is not a row: readers ignore it, and the
  next append truncates the file back to its last newline before writing.
  (Every row this module writes ends with a newline, so only an interrupted
  append leaves one without.)
- **Bad lines.** A line that is not a row raises :class:`InvalidInputError`
  naming ``FILE:LINE``; nothing is written. Blank lines are skipped.
- **Privacy.** A new file is created ``0600``; scoring keeps the file's mode.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import attrs

from thatch.jsonlines import parse_object
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.prediction_log import LoggedPrediction, check_score
from thatch.unicode_fix import scrub

#: Shown in the error for a line that is not JSON.
_EXAMPLE = '{"id": "<session>:1", "session_id": "<session>", "action": "accept", ...}'


def row_line(entry: LoggedPrediction) -> bytes:
    """``entry`` as one line of the file, newline included."""
    text = json.dumps(scrub(entry.to_json()), ensure_ascii=False)
    return (text + "\n").encode("utf-8")


class JsonlPredictionLog:
    """The prediction log kept in the JSONL file at ``path`` (created on the first append)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"JsonlPredictionLog({str(self.path)!r})"

    def close(self) -> None:
        """Nothing to release: every call opens and closes the file."""

    def integrity_problems(self) -> list[str]:
        data = self._contents()
        problems: list[str] = []
        first_line: dict[tuple[str, str], int] = {}
        for number, line in _lines(data):
            try:
                row = self._row(line, number)
            except InvalidInputError as exc:
                problems.append(str(exc))
                continue
            key = (row.id, row.session_id)
            if key in first_line:
                problems.append(
                    f"{self.path}:{number}: {row.id!r} of session {row.session_id!r} "
                    f"is already on line {first_line[key]}"
                )
            first_line.setdefault(key, number)
        return problems

    def record_predictions(self, entries: Sequence[LoggedPrediction]) -> list[bool]:
        if not entries:
            return []
        with self._locked(exclusive=True) as fd:
            data = _read_all(fd)
            logged = {(row.id, row.session_id) for row in self._rows(data)}
            new = _first_of_each_key(entries, logged)
            lines = b"".join(
                row_line(entry) for entry, fresh in zip(entries, new, strict=True) if fresh
            )
            if lines:
                _append(fd, lines, keep=_complete_length(data), size=len(data))
        if not data and any(new):
            _sync_folder(Path(os.path.realpath(self.path)).parent)  # the file is new
        return new

    def get_prediction_entry(
        self, entry_id: str, session_id: str | None = None
    ) -> LoggedPrediction | None:
        rows = self._read()
        index = _find(rows, entry_id, session_id)
        return None if index is None else rows[index]

    def list_prediction_entries(self, session_id: str | None = None) -> list[LoggedPrediction]:
        rows = [row for row in self._read() if session_id in (None, row.session_id)]
        # sorted() is stable: ties keep the file's order, the order recorded.
        return sorted(rows, key=lambda row: row.recorded_at)

    def score_prediction(
        self, entry_id: str, actual: str, when: datetime, session_id: str | None = None
    ) -> bool:
        check_score(actual, when)
        try:
            with self._locked(exclusive=True, create=False) as fd:
                rows = self._rows(_read_all(fd))
                index = _find(rows, entry_id, session_id)
                if index is None:
                    return False
                rows[index] = attrs.evolve(rows[index], actual=actual, scored_at=when)
                self._replace(rows, mode=stat.S_IMODE(os.fstat(fd).st_mode))
        except FileNotFoundError:
            return False  # no file, no entry: and none is created
        return True

    # -- the file --------------------------------------------------------
    def _read(self) -> list[LoggedPrediction]:
        return self._rows(self._contents())

    def _contents(self) -> bytes:
        """The file's bytes, read under a shared lock (none if there is no file yet)."""
        try:
            with self._locked(exclusive=False) as fd:
                return _read_all(fd)
        except FileNotFoundError:
            return b""

    def _rows(self, data: bytes) -> list[LoggedPrediction]:
        return [self._row(line, number) for number, line in _lines(data)]

    def _row(self, line: bytes, number: int) -> LoggedPrediction:
        where = f"{self.path}:{number}"
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInputError(
                f"{where} is not UTF-8 text; a row is one JSON object"
            ) from None
        return LoggedPrediction.from_json(parse_object(text, where, _EXAMPLE), where)

    @contextmanager
    def _locked(self, *, exclusive: bool, create: bool = True) -> Iterator[int]:
        """A descriptor on the file, locked.

        An exclusive lock creates the file (``0600``) unless ``create`` is
        False; otherwise a missing file raises FileNotFoundError.
        """
        while True:
            fd = self._open(exclusive, create=exclusive and create)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
                # Scoring may have renamed a new file over the one locked.
                if _names(self.path, fd):
                    yield fd
                    return
            finally:
                os.close(fd)  # releases the lock

    def _open(self, exclusive: bool, *, create: bool) -> int:
        flags = os.O_CLOEXEC | (os.O_RDWR | os.O_APPEND if exclusive else os.O_RDONLY)
        try:
            return os.open(self.path, flags | (os.O_CREAT if create else 0), 0o600)
        except FileNotFoundError:
            if not create:
                raise
            raise InvalidInputError(
                f"no folder {self.path.parent} for the prediction log {self.path}; "
                "create it or name a file in an existing folder"
            ) from None
        except OSError as exc:
            raise InvalidInputError(
                f"cannot open the prediction log {self.path}: {exc.strerror}; "
                "name a file you can read and write"
            ) from None

    def _replace(self, rows: Sequence[LoggedPrediction], mode: int) -> None:
        """Write ``rows`` as the whole file, atomically (temporary file, then a rename)."""
        real = Path(os.path.realpath(self.path))  # a symlinked log stays a link
        handle, temporary = tempfile.mkstemp(
            prefix=f".{real.name}.", suffix=".tmp", dir=real.parent
        )
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(b"".join(row_line(row) for row in rows))
                out.flush()
                os.fchmod(out.fileno(), mode)
                os.fsync(out.fileno())
            os.replace(temporary, real)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _sync_folder(real.parent)


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """Each complete, non-blank line with its number (1 = the first)."""
    complete = data[: _complete_length(data)]
    for number, line in enumerate(complete.split(b"\n")[:-1], 1):
        if line.strip():
            yield number, line


def _complete_length(data: bytes) -> int:
    """The length of ``data`` up to its last newline: what an interrupted append left off."""
    return data.rfind(b"\n") + 1


def _first_of_each_key(
    entries: Sequence[LoggedPrediction], logged: set[tuple[str, str]]
) -> list[bool]:
    """For each entry, whether its key is neither ``logged`` nor earlier in ``entries``."""
    seen = set(logged)
    new: list[bool] = []
    for entry in entries:
        key = (entry.id, entry.session_id)
        new.append(key not in seen)
        seen.add(key)
    return new


def _find(rows: Sequence[LoggedPrediction], entry_id: str, session_id: str | None) -> int | None:
    """The index of the first row with ``entry_id`` (of ``session_id`` when given)."""
    for index, row in enumerate(rows):
        if row.id == entry_id and session_id in (None, row.session_id):
            return index
    return None


def _append(fd: int, lines: bytes, *, keep: int, size: int) -> None:
    """Write ``lines`` after the first ``keep`` bytes of a ``size``-byte file, then sync."""
    if keep < size:
        os.ftruncate(fd, keep)  # an interrupted append's half line
    try:
        written = os.write(fd, lines)
        while written < len(lines):  # a short write, rare on a regular file
            written += os.write(fd, lines[written:])
        os.fsync(fd)
    except BaseException:
        os.ftruncate(fd, keep)
        raise


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks: list[bytes] = []
    offset = 0
    while chunk := os.pread(fd, max(size - offset, 65536), offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open on ``fd``."""
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino)


def _sync_folder(folder: Path) -> None:
    """Make a new or renamed file's name durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
