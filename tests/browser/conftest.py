"""A real browser on the real ``thatch ui``, over a real home a user's shell fills.

Each test module gets one machine: a temporary HOME and THATCH_HOME, this
checkout's ``thatch`` run by absolute path with a PATH of the system folders
only (never the virtualenv, as a user's shell has it), the real embedding
model, the real ``thatch ui --no-open --port N`` server process, and one
headless Chromium driven by Selenium. Starting these once per module, not per
test, keeps the suite within its time budget; tests give their memories
labels of their own so their order does not matter.

The browser is Debian's ``chromium`` with its ``chromium-driver``, both named
by path: Selenium would otherwise try to download a driver, which CI and a
user's network must not need.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from harness_clis import user_env, user_path

if TYPE_CHECKING:
    from browser.pages import Browser

THATCH = Path(sys.executable).with_name("thatch")
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
#: The line ``thatch ui`` prints first, with the URL that holds the token.
URL_LINE = re.compile(r"thatch ui at (http://127\.0\.0\.1:\d+/\?token=\S+)")


def require_browser() -> None:
    """Skip (fail under CI) when Chromium, its driver or Selenium is missing."""
    missing = []
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        missing.append(f"{CHROMIUM} and {CHROMEDRIVER} (apt-get install chromium chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (in the dev dependency group: uv sync)")
    if not missing:
        return
    message = f"browser tests need {' and '.join(missing)}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


class Machine:
    """A user's HOME and thatch home; runs this checkout's ``thatch`` as their shell would."""

    def __init__(self, root: Path) -> None:
        #: Where ``thatch ui`` writes its errors (a file: an unread pipe could fill and block it).
        self.server_log = root / "thatch-ui.log"
        user_home = root / "user"
        user_home.mkdir()
        self.outside = root / "outside-git"
        self.outside.mkdir()
        self.env = {**user_env(user_home, user_path()), "THATCH_HOME": str(root / "thatch-home")}

    def thatch(self, *args: str, input: str | None = None) -> str:
        """``thatch ARGS``'s standard output; fails the test if it exits non-zero."""
        done = self.run(*args, input=input)
        assert done.returncode == 0, f"thatch {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(THATCH), *args],
            cwd=self.outside,
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Machine:
    require_browser()
    return Machine(tmp_path_factory.mktemp("browser"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server_url(machine: Machine) -> Iterator[str]:
    """The URL (token included) of ``thatch ui --no-open --port N`` serving ``machine``."""
    port = free_port()
    with machine.server_log.open("w") as errors:
        process = subprocess.Popen(
            [str(THATCH), "ui", "--no-open", "--port", str(port)],
            cwd=machine.outside,
            env=machine.env,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
    assert process.stdout is not None
    try:
        first = process.stdout.readline()
        found = URL_LINE.match(first)
        if found is None:
            process.kill()
            process.wait(timeout=30)
            pytest.fail(f"thatch ui printed {first!r}; stderr: {machine.server_log.read_text()}")
        assert f":{port}/" in found.group(1)
        yield found.group(1)
    finally:
        # Ctrl-C, as a user stops it; then make sure nothing is left behind.
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
    # An error the page turned into a 500 (or hid) still shows up here.
    logged = machine.server_log.read_text()
    assert "Traceback" not in logged, logged


@pytest.fixture(scope="module")
def browser(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One headless Chromium, signed in to the page (it opened the printed URL)."""
    from browser.pages import Browser, start_chromium

    driver = start_chromium(CHROMIUM, CHROMEDRIVER, tmp_path_factory.mktemp("chromium"))
    try:
        opened = Browser(driver, server_url)
        opened.sign_in()
        yield opened
    finally:
        with contextlib.suppress(Exception):
            driver.quit()
