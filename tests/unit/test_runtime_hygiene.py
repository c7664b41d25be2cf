"""The daemon reuses a project's hygiene report and refreshes it in the background."""

from __future__ import annotations

import time
from pathlib import Path

import thatch_sqlite.plugin
from thatch.nudges.reminder import session_reminder
from thatch.plugin.config import Config
from thatch.runtime import Runtime
from thatch.testing import plugins_with


def test_the_first_reminder_has_no_heartbeat_and_later_ones_do(tmp_path: Path) -> None:
    app = Runtime(Config.load(tmp_path / "home", environ={}), plugins_with(thatch_sqlite.plugin))
    try:
        th = app.project(str(tmp_path))
        th.remember("tabs", "The user indents with tabs, never spaces.", store="global")
        th.remember("tabs-again", "The user indents with tabs, never spaces!", store="global")
        assert app.hygiene(th) is None  # nothing made yet: the scan starts in the background
        deadline = time.monotonic() + 30
        while (report := app.hygiene(th)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert report is not None
        assert len(report.duplicates) == 1
        assert "near-duplicate pair" in session_reminder(th, hygiene=report)
        assert "Hygiene" not in session_reminder(th, hygiene=None)
    finally:
        app.close()
