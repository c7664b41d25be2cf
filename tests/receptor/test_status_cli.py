"""``thatch receptor status`` through the real console script, on status files left in a home."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from receptor_cli import receptor
from thatch_receptor.status import StatusFiles, status_dir


def status(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return receptor(tmp_path, "status", *args)


def test_a_status_file_of_another_shape_is_one_clear_line(tmp_path: Path) -> None:
    # What another release may have left: a session's status without the fields shown.
    files = StatusFiles(status_dir(tmp_path / "home" / "state"))
    files.write("old-session", {"session": "old-session", "updated_at": 1.0})

    for args in ((), ("old-session",)):
        done = status(tmp_path, *args)
        assert done.returncode == 2, done.stderr
        assert "the receptor status of session 'old-session'" in done.stderr
        assert "no field 'in_flow'" in done.stderr
        assert "next tool call" in done.stderr
        assert "Traceback" not in done.stderr

    shown = status(tmp_path, "old-session", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == {"session": "old-session", "updated_at": 1.0}
