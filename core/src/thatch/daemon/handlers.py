"""Answers to the daemon's requests (see :mod:`thatch.wire` for the ops)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

import thatch
from thatch import deferred
from thatch.daemon.hook_events import handle_hook
from thatch.runtime import Runtime

if TYPE_CHECKING:
    from thatch.daemon.server import SessionRunner

log = logging.getLogger("thatch")


def version_tuple(version: str) -> tuple[int, ...]:
    """``"0.10.2"`` → (0, 10, 2); non-numeric parts count as 0."""
    return tuple(int(part) if part.isdigit() else 0 for part in version.split(".")[:3])


class Handlers:
    """Dispatches one decoded request to the runtime; never raises for bad requests."""

    def __init__(
        self,
        app: Runtime,
        *,
        stop: Callable[[], None],
        spool_backlog: Callable[[], int],
        spool_failed: Callable[[], int] | None = None,
        catch_up: Callable[[dict[str, Any]], object] | None = None,
    ):
        self.app = app
        #: Replays the events spooled before a live hook event, before it is handled
        #: (see thatch.daemon.spool.Spool.catch_up).
        self._catch_up = catch_up
        self._stop = stop
        self._spool_backlog = spool_backlog
        #: How many spooled requests could not be replayed (see Spool.failed).
        self._spool_failed = spool_failed
        self.started_at = time.time()

    @cached_property
    def tools(self) -> Any:
        """The tools, run here on the daemon's runtime (by MCP sessions and ``op: call``)."""
        from thatch.tools.backend import InProcessBackend

        return InProcessBackend(app=self.app)

    @property
    def warm(self) -> bool:
        """Whether the warm-up is over (the model and caches loaded, or loading failed)."""
        return self.app.warming.done

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = self._answer(request)
        answer.setdefault("daemon", thatch.__version__)
        return answer

    def notice(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The line sent before the answer to a hook that asked to hear it is coming late.

        Only while the model loads: the hook then waits past its cap, up to
        its cold-start allowance, instead of spooling the event and printing
        nothing. A warm daemon sends nothing, so the usual answer costs no
        extra line.
        """
        if request.get("op") != "hook" or request.get("warming_notice") is not True:
            return None
        if self.warm:
            return None
        return {"ok": True, "warming": True, "daemon": thatch.__version__}

    def open_session(self, request: dict[str, Any]) -> tuple[dict[str, Any], SessionRunner | None]:
        """The answer to ``op: mcp``, and what serves the session once it is sent (None: refused).

        The setup check runs now, with the plugins loaded already, so the
        answer carries the notice ``thatch mcp`` shows on stderr.
        """
        outdated = self._outdated(request)
        if outdated is not None:
            return {**outdated, "daemon": thatch.__version__}, None
        from thatch.daemon.mcp_session import McpSession

        session = McpSession(self.tools, request, self.app.plugins.harnesses().values())
        return {"ok": True, "notice": session.notice, "daemon": thatch.__version__}, session.serve

    def _outdated(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The answer to a client newer than this daemon, which then exits; None for others."""
        client = request.get("client")
        ours = version_tuple(thatch.__version__)
        if not isinstance(client, str) or version_tuple(client) <= ours:
            return None
        log.info("client %s is newer than this daemon; exiting so it starts anew", client)
        self._stop()
        return {"ok": False, "restart": True, "error": f"daemon {thatch.__version__} is outdated"}

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        outdated = self._outdated(request)
        if outdated is not None:
            return outdated
        op = request.get("op")
        if op == "hook":
            self._replay_older(request)
            return {"ok": True, "output": handle_hook(self.app, request)}
        if op == "call":
            return self._call(request)
        if op == "tools":
            return {"ok": True, "tools": self.tools.list_tools()}
        if op == "ping":
            return {"ok": True, "warm": self.warm}
        if op == "status":
            return {"ok": True, **self.status()}
        if op == "stop":
            self._stop()
            return {"ok": True}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def _replay_older(self, request: dict[str, Any]) -> None:
        """The events spooled before this live one, replayed first; a failure only logged."""
        if self._catch_up is None:
            return
        try:
            self._catch_up(request)
        except Exception:
            log.exception("replaying the spooled events older than a live hook event failed")

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        env = request.get("env") if isinstance(request.get("env"), dict) else {}
        cwd = request.get("cwd") if isinstance(request.get("cwd"), str) else ""
        arguments = request.get("arguments")
        if not isinstance(arguments, dict):
            arguments = {}
        return {"ok": True, **self.tools.call(str(request.get("tool")), arguments, cwd, env)}

    def status(self) -> dict[str, Any]:
        """What ``thatch daemon status`` shows."""
        sessions = self.app.sessions.sessions()
        spool = {"spool_backlog": self._spool_backlog()}
        if self._spool_failed is not None:
            spool["spool_failed"] = self._spool_failed()
        return {
            "pid": os.getpid(),
            "version": thatch.__version__,
            "started_at": self.started_at,
            "uptime_seconds": round(time.time() - self.started_at, 1),
            "warm": self.warm,
            "db_path": str(self.app.config.db_path),
            **spool,
            # Writes that failed after a hook's answer and wait for the storage.
            "deferred_writes": deferred.status(self.app),
            "settings": self.app.describe(),
            "sessions": [
                {
                    "session_id": s.session_id,
                    "harness": s.harness,
                    "cwd": s.cwd,
                    "pending": s.pending,
                    "nudge_level": s.nudge_level,
                    "prompts": s.prompts,
                    "last_seen": s.last_seen,
                }
                for s in sessions
            ],
        }
