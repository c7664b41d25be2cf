"""``thatch receptor ...`` through the real console script, in a throw-away home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

THATCH = Path(sys.executable).with_name("thatch")


def receptor(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``thatch receptor ARGS`` with its home (``THATCH_HOME``) in ``tmp_path / "home"``."""
    env = {**os.environ, "THATCH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    return subprocess.run(
        [str(THATCH), "receptor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
