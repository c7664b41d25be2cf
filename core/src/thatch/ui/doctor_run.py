"""``thatch doctor`` for the page: the real command, run as a process.

The page does not import the checks: they import most of thatch, the plugin
manager included, which loads the built-in that starts this page. A process
also checks what a user's own ``thatch doctor`` would: the installed command,
the same home, the same folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from thatch.plugin.errors import ThatchError

if TYPE_CHECKING:
    from thatch.api import Thatch

#: Doctor starts each command a harness is set up to run; a stuck one must not hold the page.
DOCTOR_SECONDS = 120


@attrs.frozen
class Finding:
    """One of doctor's checks, as ``thatch doctor --json`` prints it."""

    name: str
    status: str
    detail: str
    fix: str = ""


def doctor_of(th: Thatch) -> Callable[[], list[Finding]]:
    """Runs ``thatch doctor --json`` for the home and folder ``th`` was opened with."""

    def run() -> list[Finding]:
        environ = dict(os.environ)
        home = th.config.paths.home
        if home is not None:
            environ["THATCH_HOME"] = str(home)
        command = [sys.executable, "-m", "thatch", "doctor", "--json"]
        try:
            done = subprocess.run(
                command,
                cwd=th.cwd,
                env=environ,
                capture_output=True,
                text=True,
                timeout=DOCTOR_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ThatchError(
                f"thatch doctor took over {DOCTOR_SECONDS} s; run it in a terminal"
            ) from None
        try:
            rows = json.loads(done.stdout)
        except ValueError:
            tail = done.stderr.strip()[-400:] or "nothing"
            raise ThatchError(f"thatch doctor printed no report (it said: {tail})") from None
        return [_finding(row) for row in rows if isinstance(row, dict)]

    return run


def _finding(row: dict[str, Any]) -> Finding:
    return Finding(
        name=str(row.get("name", "")),
        status=str(row.get("status", "")),
        detail=str(row.get("detail", "")),
        fix=str(row.get("fix", "") or ""),
    )
