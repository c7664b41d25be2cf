"""One MCP session on a daemon connection: the SDK's server, over the socket.

``thatch mcp`` opens it with ``op: mcp`` (see :mod:`thatch.wire`) and then
relays the harness's stdio to it. The session runs the server ``thatch mcp
--in-process`` runs (:func:`thatch.mcp.server.build_server`), with the
tools called directly on the daemon's runtime, its instructions led by the
setup notice of the harness that started the relay, and the SDK's stdio
transport framing the messages over the socket. Each session has an event
loop of its own, on its connection's thread: one that fails ends alone.

The SDK is imported by the first session, not during the warm-up: it adds
about 35 MB of resident memory (43 MB once the session has run 20 recalls;
measured at 100k memories, see docs/benchmarks.md), which a daemon serving
only hooks does not need. That first session waits for the import (~0.7 s).
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from thatch import wire

if TYPE_CHECKING:
    from thatch.plugin.harness import Harness
    from thatch.tools.backend import ToolBackend

log = logging.getLogger("thatch")


class McpSession:
    """A session the daemon accepted: where its caller works, and what it is told."""

    def __init__(
        self, tools: ToolBackend, request: Mapping[str, Any], targets: Iterable[Harness]
    ) -> None:
        from thatch.mcp.server import setup_check

        self.tools = tools
        cwd = request.get("cwd")
        self.cwd = cwd if isinstance(cwd, str) and cwd else None
        harnesses = list(targets)
        # Core's own variables, and those each harness sets (its project folder).
        forwarded = {*wire.MCP_ENV, *(name for h in harnesses for name in h.environment)}
        env = request.get("env")
        self.env = {
            name: value
            for name, value in (env.items() if isinstance(env, Mapping) else ())
            if name in forwarded and isinstance(value, str)
        }
        # The relay's environment, never the daemon's: the daemon may have been
        # started from another project or harness.
        self.check = setup_check(None, self.env, cwd=self.cwd, targets=harnesses)

    @property
    def notice(self) -> str:
        """The setup notice, sent with the answer so ``thatch mcp`` shows it on stderr."""
        return self.check.notice

    def serve(self, sock: socket.socket, received: bytes) -> None:
        """Serve the session until either side closes the connection; never raises."""
        started = time.monotonic()
        log.info("MCP session opened (harness %s, folder %s)", self.check.harness, self.cwd)
        files: list[io.TextIOWrapper] = []
        try:
            import anyio

            from thatch.mcp.server import build_server, serve, server_instructions

            server = build_server(
                self.tools,
                cwd=self.cwd,
                environ=self.env,
                instructions=server_instructions(self.check),
            )
            reader = io.TextIOWrapper(
                io.BufferedReader(_Received(sock, received)), encoding="utf-8", errors="replace"
            )
            writer = io.TextIOWrapper(sock.makefile("wb"), encoding="utf-8")
            files += [reader, writer]
            anyio.run(serve, server, anyio.wrap_file(reader), anyio.wrap_file(writer))
        except Exception as exc:
            if _gone(exc):
                log.info("MCP session: thatch mcp went away (%s)", exc)
            else:
                log.exception("MCP session failed")
        finally:
            for handle in files:
                # The last flush fails when the client has gone.
                with contextlib.suppress(OSError):
                    handle.close()
            log.info("MCP session closed after %.0f s", time.monotonic() - started)


class _Received(io.RawIOBase):
    """The connection's bytes for reading: first those received with the opening line."""

    def __init__(self, sock: socket.socket, received: bytes) -> None:
        super().__init__()
        self._sock = sock
        self._received = received

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._received:
            size = min(len(buffer), len(self._received))
            buffer[:size] = self._received[:size]
            self._received = self._received[size:]
            return size
        try:
            return self._sock.recv_into(buffer)
        except OSError:
            return 0  # reset, or shut down by the daemon's stop: the end of the session


def _gone(exc: BaseException) -> bool:
    """Whether ``exc`` only says the relay closed the connection (a write to it failed)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_gone(inner) for inner in exc.exceptions)
    return isinstance(exc, OSError)
