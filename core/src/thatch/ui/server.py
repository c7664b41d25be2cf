"""Serve the page on the loopback interface, and nowhere else."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import uvicorn

from thatch.ui.app import build_app
from thatch.ui.guard import TOKEN_PARAM, Secrets

if TYPE_CHECKING:
    from thatch.api import Thatch

LOOPBACK = "127.0.0.1"


class UiServer:
    """uvicorn serving the page on a socket bound to 127.0.0.1 before it starts.

    The socket is bound here, not by uvicorn, so that port 0 (any free port)
    is known before the URL is printed, and so that nothing but the loopback
    address is ever bound.
    """

    def __init__(self, th: Thatch, port: int = 0) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind((LOOPBACK, port))
        # Listening now: a browser opened before uvicorn starts waits in the backlog.
        self.socket.listen(64)
        self.port: int = self.socket.getsockname()[1]
        self.keys = Secrets()
        hosts = (f"{LOOPBACK}:{self.port}", f"localhost:{self.port}")
        config = uvicorn.Config(
            build_app(th, self.keys, hosts),
            log_level="warning",
            # The token rides in the first URL: an access log would keep it.
            access_log=False,
            server_header=False,
            # A session page's open event stream must not hold Ctrl-C up.
            timeout_graceful_shutdown=1,
        )
        self.uvicorn = uvicorn.Server(config)

    @property
    def url(self) -> str:
        """The address to open, token included."""
        return f"http://{LOOPBACK}:{self.port}/?{TOKEN_PARAM}={self.keys.access}"

    def run(self) -> None:
        """Serve until :meth:`stop` or Ctrl-C; closes the socket after."""
        try:
            self.uvicorn.run(sockets=[self.socket])
        finally:
            self.socket.close()

    def stop(self) -> None:
        """Ask a running server to finish (from another thread)."""
        self.uvicorn.should_exit = True
