"""A stand-in for the daemon: a Unix socket server that records requests and answers them."""

from __future__ import annotations

import os
import socketserver
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thatch import wire

Responder = Callable[[dict[str, Any]], dict[str, Any] | None]


def write_hook_table(home: Path) -> Path:
    """The hook table of ``home``'s installed harnesses, as ``thatch setup`` or a daemon writes it.

    Hook commands read it (see thatch.hookcmd.answers): without it they send
    their event but wait for no cold daemon and print no stand-in answer.
    """
    from thatch import hooktable
    from thatch.plugin.config import Config
    from thatch.plugins import Plugins

    config = Config.load(home, environ={})
    path = hooktable.hook_table_path(config)
    hooktable.write_hook_table(Plugins.load(config).harnesses().values(), path)
    return path


class FakeDaemon:
    """A Unix socket server that records each request and answers with ``respond``.

    ``notice`` (optional) gives a line sent, and flushed, before ``respond``
    is asked: the warming notice a real daemon sends while it loads its model.
    """

    def __init__(
        self, socket_path: str, respond: Responder, notice: Responder | None = None
    ) -> None:
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        daemon = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                request = wire.decode(self.rfile.readline())
                daemon.requests.append(request)
                early = notice(request) if notice is not None else None
                if early is not None:
                    self.wfile.write(wire.encode(early))
                    self.wfile.flush()
                answer = respond(request)
                if answer is None:
                    daemon.release.wait(10)
                    return
                self.wfile.write(wire.encode(answer))

        os.makedirs(os.path.dirname(socket_path), mode=0o700, exist_ok=True)
        self.server = socketserver.ThreadingUnixStreamServer(socket_path, Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
        os.unlink(self.server.server_address)  # type: ignore[arg-type]
