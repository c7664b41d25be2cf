"""The server answers on loopback only; ``thatch ui`` prints its URL and opens it."""

from __future__ import annotations

import argparse
import contextlib
import socket
import threading
import time

import httpx
import pytest
from thatch.api import Thatch
from thatch.builtin import BUILTIN_PLUGINS, ui
from thatch.plugin.errors import InvalidInputError
from thatch.ui.server import LOOPBACK, UiServer


def _other_addresses() -> list[str]:
    """This machine's addresses that are not loopback (may be none in a sandbox)."""
    found: set[str] = set()
    with contextlib.suppress(OSError):
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
        found.update(str(info[4][0]) for info in infos)
    # The address a datagram to a private network would leave from: connecting
    # a UDP socket sends nothing, it only picks the interface.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe, contextlib.suppress(OSError):
        probe.connect(("10.255.255.255", 1))
        found.add(probe.getsockname()[0])
    return sorted(address for address in found if not address.startswith("127."))


def test_the_server_binds_loopback_only(th: Thatch) -> None:
    th.remember("seen", "A fact the page lists", store="global")
    server = UiServer(th, 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.uvicorn.started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.uvicorn.started
        assert server.socket.getsockname() == (LOOPBACK, server.port)
        with httpx.Client(follow_redirects=True) as browser:
            answer = browser.get(server.url)
        assert answer.status_code == 200
        assert "seen" in answer.text
        for address in _other_addresses():
            with (
                pytest.raises((ConnectionRefusedError, TimeoutError)),
                socket.create_connection((address, server.port), 2),
            ):
                pass
    finally:
        server.stop()
        thread.join(10)
    assert not thread.is_alive()


def test_thatch_ui_is_a_builtin_command() -> None:
    assert BUILTIN_PLUGINS["ui"] == "thatch.builtin.ui"
    (command,) = ui.thatch_commands()
    assert command.name == "ui"


class _Context:
    """What ``thatch ui`` runs with, keeping what it prints."""

    json = False

    def __init__(self, th: Thatch) -> None:
        self.th = th
        self.printed: list[str] = []

    def open(self) -> Thatch:
        return self.th

    def emit(self, data: object, text: str) -> None:
        self.printed.append(text)

    def note(self, message: str) -> None:
        self.printed.append(message)


@pytest.mark.parametrize("no_open", [True, False])
def test_thatch_ui_prints_the_url_and_opens_it_unless_told_not_to(
    th: Thatch, monkeypatch: pytest.MonkeyPatch, no_open: bool
) -> None:
    served: list[str] = []
    opened: list[str] = []

    def serve(server: UiServer) -> None:
        served.append(server.url)
        server.socket.close()

    monkeypatch.setattr(UiServer, "run", serve)
    monkeypatch.setattr("webbrowser.open", opened.append)
    context = _Context(th)
    assert ui.run(argparse.Namespace(port=0, no_open=no_open), context) == 0  # type: ignore[arg-type]
    (url,) = served
    assert url.startswith(f"http://{LOOPBACK}:")
    assert "?token=" in url
    assert url in context.printed[0]
    assert opened == ([] if no_open else [url])


def test_thatch_ui_refuses_a_port_out_of_range(th: Thatch) -> None:
    with pytest.raises(InvalidInputError, match="not a port"):
        ui.run(argparse.Namespace(port=70000, no_open=True), _Context(th))  # type: ignore[arg-type]
