"""Log a problem that persists from tick to tick once per interval, not every tick."""

from __future__ import annotations

import time
from collections.abc import Hashable


class Throttle:
    """Says, per problem key, whether it is due to be logged again."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        #: When each problem, by key, may be logged again (monotonic).
        self._quiet_until: dict[Hashable, float] = {}

    def due(self, key: Hashable) -> bool:
        """True the first time ``key`` comes, then again once ``interval`` has passed."""
        now = time.monotonic()
        # Forget the problems past their quiet time: the dict stays small.
        self._quiet_until = {k: t for k, t in self._quiet_until.items() if t > now}
        if key in self._quiet_until:
            return False
        self._quiet_until[key] = now + self.interval
        return True
