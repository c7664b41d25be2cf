"""Spool files: one per event, named in arrival order, never half-written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from thatch import wire
from thatch.hookcmd import spool


def message(event_id: str) -> dict[str, object]:
    return {"op": "hook", "event_id": event_id, "payload": {"prompt": "café ✓"}}


def test_a_spooled_event_holds_the_request_line(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "spool"
    path = Path(spool.write(str(folder), message("abc123")))
    assert path.parent == folder
    assert path.read_bytes() == wire.encode(message("abc123"))
    assert wire.decode(path.read_bytes()) == message("abc123")


def test_names_sort_in_arrival_order_and_carry_the_event_id(tmp_path: Path) -> None:
    names = [os.path.basename(spool.write(str(tmp_path), message(f"e{n}"))) for n in range(20)]
    assert names == sorted(names)
    for number, name in enumerate(names):
        stamp, _, rest = name.partition("-")
        assert len(stamp) == 20
        assert stamp.isdigit()
        assert rest == f"e{number}.json"


def test_name_is_zero_padded_time_then_id() -> None:
    assert spool.spool_name("ff", now_ns=42) == "00000000000000000042-ff.json"


def test_files_and_folder_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "spool"
    old = os.umask(0o022)
    try:
        path = spool.write(str(folder), message("x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_only_finished_files_are_left(tmp_path: Path) -> None:
    for number in range(5):
        spool.write(str(tmp_path), message(f"e{number}"))
    assert all(name.endswith(".json") for name in os.listdir(tmp_path))
    assert len(os.listdir(tmp_path)) == 5


def test_a_failed_rename_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(source: str, target: str) -> None:
        raise PermissionError(13, "denied", target)

    monkeypatch.setattr(spool.os, "replace", refuse)
    with pytest.raises(PermissionError):
        spool.write(str(tmp_path), message("x"))
    assert os.listdir(tmp_path) == []


def test_an_interrupted_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(fd: int, data: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(spool.os, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        spool.write(str(tmp_path), message("x"))
    assert os.listdir(tmp_path) == []


def test_an_unwritable_folder_raises_oserror(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(NotADirectoryError):
        spool.write(str(blocker / "spool"), message("x"))


def locked(path: Path) -> bool:
    import fcntl

    with path.open("rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False


def test_a_held_event_is_spooled_whole_and_locked_until_released(tmp_path: Path) -> None:
    held = spool.write_held(str(tmp_path), message("abc"))
    path = Path(held.path)
    assert path.read_bytes() == wire.encode(message("abc"))
    assert path.name.endswith("-abc.json")
    assert locked(path)
    held.release(taken=False)
    assert not locked(path)
    assert path.exists()  # the daemon replays it
    held.release(taken=True)  # released already: nothing more happens
    assert path.exists()


def test_a_held_event_the_daemon_took_is_removed(tmp_path: Path) -> None:
    held = spool.write_held(str(tmp_path), message("abc"))
    held.release(taken=True)
    assert os.listdir(tmp_path) == []


def test_a_failed_held_write_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(fd: int, data: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(spool.os, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        spool.write_held(str(tmp_path), message("x"))
    assert os.listdir(tmp_path) == []


def test_a_held_event_rewritten_stays_held_under_its_name_and_holds_the_new_request(
    tmp_path: Path,
) -> None:
    held = spool.write_held(str(tmp_path), message("abc"))
    path = Path(held.path)
    before = os.stat(path).st_ino
    opened_before = os.open(path, os.O_RDONLY)  # as a replay that opened it meanwhile
    try:
        changed = {**message("abc"), "payload": {"prompt": "[REDACTED:github-token]"}}
        held.rewrite(changed)
        assert held.holding
        assert os.listdir(tmp_path) == [path.name]  # no .tmp left, the same name
        assert os.stat(path).st_ino != before  # replaced by a rename, not written over
        assert path.read_bytes() == wire.encode(changed) == held.data
        assert locked(path)  # never unlocked between the two files
        # The replay that opened the old file finds it unlinked.
        assert os.fstat(opened_before).st_nlink == 0
    finally:
        os.close(opened_before)
    held.release(taken=False)
    assert not held.holding
    assert not locked(path)
    assert wire.decode(path.read_bytes()) == changed
    held.rewrite(message("abc"))  # released already: nothing more happens
    assert wire.decode(path.read_bytes()) == changed
