"""Replaying events that hook commands spooled while the daemon was away.

A hook command that cannot reach the daemon writes its request to one file
(atomically, named ``<time_ns>-<event_id>.json``). The daemon takes them in
name order; the session store's event ids make a replay of an event the
daemon had already taken a no-op, so nothing is lost and nothing doubles.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from thatch import wire

log = logging.getLogger("thatch")


class Spool:
    """The spool folder of one daemon."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def backlog(self) -> int:
        """How many spooled events wait."""
        return len(self._names())

    def replay(self, handle: Callable[[dict[str, Any]], Any]) -> int:
        """Hand every spooled event to ``handle`` in arrival order; returns how many."""
        done = 0
        for name in self._names():
            path = os.path.join(self.folder, name)
            try:
                with open(path, "rb") as handle_file:
                    request = wire.decode(handle_file.read().strip())
                handle(request)
            except FileNotFoundError:
                continue  # another replay took it
            except Exception:
                log.exception("spooled event %s could not be replayed; kept as .failed", name)
                os.replace(path, path + ".failed")
                continue
            os.unlink(path)
            done += 1
        return done

    def _names(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.folder) if n.endswith(".json"))
        except FileNotFoundError:
            return []
