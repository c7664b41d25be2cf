"""The shared rotating log: the daemon's handler and the hooks' one-line writer agree."""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from thatch import logfile

LINE = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<pid>\d+) (?P<name>\S+) (?P<level>[A-Z]+) "
    r"(?P<message>.*)$"
)


@pytest.fixture
def log_path(tmp_path: Path) -> Iterator[Path]:
    logger = logging.getLogger(logfile.LOGGER_NAME)
    level = logger.level
    yield tmp_path / "state" / "log" / "thatch.log"
    logfile.close()
    logger.setLevel(level)


def test_append_writes_one_line_in_the_log_format(log_path: Path) -> None:
    logfile.append(str(log_path), "hook", "flush-tools: the daemon is not running")
    lines = log_path.read_text().splitlines()
    assert len(lines) == 1
    match = LINE.match(lines[0])
    assert match is not None
    assert match["pid"] == str(os.getpid())
    assert match["name"] == "thatch.hook"
    assert match["level"] == "WARNING"
    assert match["message"] == "flush-tools: the daemon is not running"


def test_format_line_matches_the_logging_formatter() -> None:
    record = logging.LogRecord("thatch.hook", logging.WARNING, __file__, 1, "a message", None, None)
    expected = logging.Formatter(logfile.FORMAT).format(record) + "\n"
    assert logfile.format_line("hook", "a message", now=record.created) == expected


def test_messages_stay_on_one_line_and_are_cut(log_path: Path) -> None:
    logfile.append(str(log_path), "hook", "first\nsecond\rthird " + "x" * 2000)
    lines = log_path.read_text().splitlines()
    assert len(lines) == 1
    match = LINE.match(lines[0])
    assert match is not None
    message = match["message"]
    assert message.startswith("first\\nsecond\\rthird ")
    assert len(message) == logfile.MAX_MESSAGE_CHARS
    assert message.endswith("...")


def test_log_file_and_folder_are_private(log_path: Path) -> None:
    old = os.umask(0o022)
    try:
        logfile.append(str(log_path), "hook", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(log_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(log_path.parent).st_mode) == 0o700


def test_append_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    logfile.append(str(blocker / "log" / "thatch.log"), "hook", "x")
    logfile.append(str(tmp_path), "hook", "a folder, not a file")
    assert blocker.read_text() == "not a folder"


def test_append_rolls_a_full_log_over(log_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logfile, "MAX_BYTES", 300)
    for number in range(40):
        logfile.append(str(log_path), "hook", f"line {number}")
    names = sorted(path.name for path in log_path.parent.iterdir())
    assert names == ["thatch.log", "thatch.log.1", "thatch.log.2", "thatch.log.3"]
    assert os.path.getsize(log_path) < 300 + 200
    assert log_path.read_text().splitlines()[-1].endswith("line 39")
    assert stat.S_IMODE(os.stat(log_path).st_mode) == 0o600


def test_configure_logs_through_a_rotating_private_file(log_path: Path) -> None:
    old = os.umask(0o022)
    try:
        logger = logfile.configure(str(log_path))
    finally:
        os.umask(old)
    logger.info("daemon started")
    for handler in logger.handlers:
        handler.flush()
    line = log_path.read_text().splitlines()[-1]
    match = LINE.match(line)
    assert match is not None
    assert match["name"] == "thatch"
    assert match["level"] == "INFO"
    assert match["message"] == "daemon started"
    assert stat.S_IMODE(os.stat(log_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(log_path.parent).st_mode) == 0o700


def test_configure_twice_keeps_one_handler(log_path: Path) -> None:
    logfile.configure(str(log_path))
    logger = logfile.configure(str(log_path), level=logging.DEBUG)
    ours = [handler for handler in logger.handlers if hasattr(handler, "baseFilename")]
    assert len(ours) == 1
    assert logger.level == logging.DEBUG


def test_configure_with_another_path_moves_the_log(log_path: Path, tmp_path: Path) -> None:
    logfile.configure(str(log_path))
    other = tmp_path / "other" / "thatch.log"
    logger = logfile.configure(str(other))
    logger.warning("moved")
    for handler in logger.handlers:
        handler.flush()
    assert "moved" in other.read_text()
    assert "moved" not in log_path.read_text()


def test_rollover_recreates_the_file_private(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logfile, "MAX_BYTES", 300)
    old = os.umask(0o022)
    try:
        logger = logfile.configure(str(log_path))
        for number in range(30):
            logger.info("daemon line %d", number)
    finally:
        os.umask(old)
    assert (log_path.parent / "thatch.log.1").exists()
    assert stat.S_IMODE(os.stat(log_path).st_mode) == 0o600


def test_close_removes_the_handler(log_path: Path) -> None:
    logger = logfile.configure(str(log_path))
    logfile.close()
    assert not any(hasattr(handler, "baseFilename") for handler in logger.handlers)
