"""bench/hook_kill.py, small: hook events while the daemon is killed with kill -9 lose nothing.

The real script (real ``thatch buffer-tool`` processes, two busy loops, a
real daemon killed twice and started again by the hooks), with 60 events.
Its figures are read from what it prints, which it counts from the session
store once the spool is replayed.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from integration.conftest import ROOT

pytestmark = pytest.mark.slow

EVENTS = 60
SUMMARY = re.compile(r"events: (\d+) sent, (\d+) kept, (\d+) lost, (\d+) doubled")


def test_sixty_events_and_two_kills_keep_every_event_once() -> None:
    completed = subprocess.run(
        [sys.executable, "bench/hook_kill.py", "--events", str(EVENTS), "--kills", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "daemon killed 2 of 2 times" in completed.stdout
    match = SUMMARY.search(completed.stdout)
    assert match is not None, completed.stdout
    sent, kept, lost, doubled = (int(group) for group in match.groups())
    assert (sent, kept, lost, doubled) == (EVENTS, EVENTS, 0, 0), completed.stdout
    assert "exit != 0: 0; printed anything: 0" in completed.stdout
