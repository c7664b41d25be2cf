"""A step of the daemon's loop that keeps failing is logged once, and the daemon carries on."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from thatch import socketguard

from .conftest import Runner

pytestmark = pytest.mark.slow


def test_a_socket_that_cannot_be_bound_again_is_logged_once_and_retried(
    thatch: Runner, tmp_path: Path
) -> None:
    from thatch.daemon.client import DaemonClient

    # A deep home: the socket lives in a private folder under TMPDIR.
    home = tmp_path / ("deep-" * 18)
    home.mkdir()
    tmp = tmp_path / "t"
    tmp.mkdir()
    env = {"THATCH_HOME": str(home), "TMPDIR": str(tmp)}
    client = DaemonClient(str(home), environ={**os.environ, **env})
    thatch("daemon", "start", env=env)
    try:
        assert os.path.dirname(socketguard.socket_file(client.located.socket_path)).startswith(
            str(tmp)
        )
        # The socket goes, and no folder for a new one can be made: every tick fails.
        shutil.rmtree(tmp)
        tmp.write_text("a file where the temporary folder should be\n")
        time.sleep(2.5)  # five ticks
        lines = Path(client.located.log_path).read_text().splitlines()
        failures = [line for line in lines if "daemon loop: socket check failed" in line]
        assert len(failures) == 1, lines
        assert any("NotADirectoryError" in line for line in lines)
        # Once a folder can be made again, the next tick listens again.
        tmp.unlink()
        tmp.mkdir()
        deadline = time.monotonic() + 10
        while not client.running() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.running()
    finally:
        thatch("daemon", "stop", env=env, check=False)
