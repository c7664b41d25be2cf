"""thatch's rotating log, shared by the daemon and the hook commands.

The daemon logs through the standard ``logging`` module (:func:`configure`).
A hook command only writes when something went wrong, and must not pay for
``logging`` even then, so :func:`append` writes one line in the same format
by hand and never raises: a log that cannot be written must not break a
hook. Lines never hold a hook's payload, which may contain secrets.
"""

from __future__ import annotations

import os
import time

# Not typing.TYPE_CHECKING: the hook commands import this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging

LOGGER_NAME = "thatch"
MAX_BYTES = 1024 * 1024
BACKUP_COUNT = 3
FORMAT = "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"
#: Longest message :func:`append` writes; longer ones are cut.
MAX_MESSAGE_CHARS = 500
#: Marks the handler :func:`configure` installed, so a second call reuses it.
_HANDLER_MARK = "_thatch_log_path"


def configure(log_path: str, level: int = 20) -> logging.Logger:
    """Send the ``thatch`` logger to ``log_path``, rotated at 1 MiB with 3 backups.

    ``level`` defaults to ``logging.INFO``. Calling it again with the same
    path changes nothing but the level; with another path it moves the log.
    """
    import logging
    import logging.handlers

    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(level)
    for handler in list(logger.handlers):
        if getattr(handler, _HANDLER_MARK, None) == log_path:
            return logger
        if hasattr(handler, _HANDLER_MARK):
            logger.removeHandler(handler)
            handler.close()
    _make_folder(log_path)
    _create(log_path)
    handler = logging.handlers.RotatingFileHandler(
        log_path, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8"
    )
    # The new file after a rollover is created 0600 too, not by the umask.
    handler.rotator = _rotate
    handler.setFormatter(logging.Formatter(FORMAT))
    setattr(handler, _HANDLER_MARK, log_path)
    logger.addHandler(handler)
    return logger


def close() -> None:
    """Remove and close the handler :func:`configure` installed (daemon exit, tests)."""
    import logging

    logger = logging.getLogger(LOGGER_NAME)
    for handler in list(logger.handlers):
        if hasattr(handler, _HANDLER_MARK):
            logger.removeHandler(handler)
            handler.close()


def append(log_path: str, component: str, message: str) -> None:
    """Append one WARNING line from ``component`` (e.g. ``hook``) to the log; never raises."""
    try:
        line = format_line(component, message)
        try:
            if os.stat(log_path).st_size >= MAX_BYTES:
                _roll(log_path)
        except FileNotFoundError:
            _make_folder(log_path)
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            # One write with O_APPEND: lines from concurrent hooks never interleave.
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


def format_line(component: str, message: str, now: float | None = None) -> str:
    """One log line as :data:`FORMAT` renders it, newlines escaped and cut to length."""
    moment = time.time() if now is None else now
    # The same arithmetic as logging.LogRecord, so both writers agree.
    millis = int((moment - int(moment)) * 1000)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment))
    text = message.replace("\r", "\\r").replace("\n", "\\n")
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 3] + "..."
    name = f"{LOGGER_NAME}.{component}" if component else LOGGER_NAME
    return f"{stamp},{millis:03d} {os.getpid()} {name} WARNING {text}\n"


def _make_folder(log_path: str) -> None:
    from thatch.private import make_private_dirs

    folder = os.path.dirname(log_path)
    if folder and not os.path.isdir(folder):
        make_private_dirs(folder)


def _create(log_path: str) -> None:
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.close(fd)


def _rotate(source: str, dest: str) -> None:
    if os.path.exists(source):
        os.replace(source, dest)
    _create(source)


def _roll(log_path: str) -> None:
    # The daemon's handler rolls over the same way; whichever process sees the
    # file full first shifts the backups.
    for index in range(BACKUP_COUNT - 1, 0, -1):
        older = f"{log_path}.{index}"
        if os.path.exists(older):
            os.replace(older, f"{log_path}.{index + 1}")
    _rotate(log_path, f"{log_path}.1")
