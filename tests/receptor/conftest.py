"""The receptor's tests: background work does not wait for a pause in the hooks.

The daemon's worker waits for the hooks to pause before heavy work
(:data:`thatch_receptor.service.QUIET_SECONDS`); tests that drive the service
step by step would only wait longer. The test of the pause itself sets them back.
"""

from __future__ import annotations

import pytest
from thatch_receptor import service


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    for kind in service.QUIET_SECONDS:
        monkeypatch.setitem(service.QUIET_SECONDS, kind, 0.0)
