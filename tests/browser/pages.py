"""Driving the page in Chromium: open, read, click and wait, as a person would."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

#: How long a click may take to bring the next page (the first search loads the model).
PAGE_WAIT_S = 60
WIDTH, HEIGHT = 1280, 800


def start_chromium(chromium: Path, chromedriver: Path, profile: Path) -> webdriver.Chrome:
    """Headless Chromium through the driver at ``chromedriver``, with a profile of its own.

    Both paths are given, so Selenium never looks for (or downloads) a driver
    or a browser build. The switches keep a test run off the network: no
    component updates, no sync, no first-run pages.
    """
    options = webdriver.ChromeOptions()
    options.binary_location = str(chromium)
    for switch in (
        "--headless=new",
        f"--window-size={WIDTH},{HEIGHT}",
        f"--user-data-dir={profile}",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-default-browser-check",
    ):
        options.add_argument(switch)
    # A dialog the page opens stays open until a test looks at it: a
    # ``<script>`` memory that ran would leave its alert() there to be found.
    options.unhandled_prompt_behavior = "ignore"
    # The console, to see what the Content-Security-Policy refused.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if os.geteuid() == 0:
        # Chromium's sandbox refuses to run as root (CI containers are).
        options.add_argument("--no-sandbox")
    driver = webdriver.Chrome(service=Service(executable_path=str(chromedriver)), options=options)
    # The viewport itself, not the window, is WIDTHxHEIGHT: screenshots are that size.
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
    )
    return driver


class Browser:
    """One Chromium on one ``thatch ui`` server."""

    def __init__(self, driver: webdriver.Chrome, url: str) -> None:
        self.driver = driver
        #: The printed URL, token included.
        self.url = url
        parts = urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"

    def sign_in(self) -> None:
        """Open the printed URL, as ``thatch ui`` asks; the page trades the token for a cookie."""
        self.driver.get(self.url)
        WebDriverWait(self.driver, PAGE_WAIT_S).until(expected_conditions.url_contains("/memories"))

    def open(self, path: str) -> None:
        self.driver.get(self.origin + path)

    @property
    def status(self) -> int:
        """The HTTP status of the page shown (Navigation Timing's responseStatus)."""
        return int(
            self.driver.execute_script(
                "return performance.getEntriesByType('navigation')[0].responseStatus"
            )
        )

    @property
    def text(self) -> str:
        """What a person sees of the page."""
        return self.driver.find_element(By.TAG_NAME, "body").text

    def find(self, css: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def by_xpath(self, xpath: str, within: WebElement | None = None) -> list[WebElement]:
        return (within or self.driver).find_elements(By.XPATH, xpath)

    def cells(self, css: str) -> list[str]:
        return [cell.text for cell in self.all(css)]

    def click_and_wait(self, button: WebElement, accept: bool = False) -> None:
        """Click ``button`` and wait until the page it leads to replaced this one.

        :param accept: answer OK to the confirmation the click asks for.
        """
        button.click()
        if accept:
            WebDriverWait(self.driver, PAGE_WAIT_S).until(expected_conditions.alert_is_present())
            self.driver.switch_to.alert.accept()
        WebDriverWait(self.driver, PAGE_WAIT_S).until(expected_conditions.staleness_of(button))
        WebDriverWait(self.driver, PAGE_WAIT_S).until(
            lambda driver: driver.execute_script("return document.readyState") == "complete"
        )

    def search(self, words: str) -> None:
        box = self.find("input[name=q]")
        box.clear()
        box.send_keys(words)
        self.click_and_wait(self.find("form.filters button[type=submit]"))

    def alert_text(self) -> str | None:
        """The text of an open alert or confirm dialog, or None when none is open."""
        try:
            return self.driver.switch_to.alert.text
        except NoAlertPresentException:
            return None

    def fetch(self, path: str, method: str = "GET", body: str = "") -> tuple[int, str]:
        """A request from the page's own script context (so with the page's cookie)."""
        answer: list[object] = self.driver.execute_async_script(
            """
            const [path, method, body, done] = arguments;
            const init = {method, credentials: "same-origin"};
            if (method !== "GET") {
              init.body = body;
              init.headers = {"content-type": "application/x-www-form-urlencoded"};
            }
            fetch(path, init).then(async (r) => done([r.status, await r.text()]),
                                   (e) => done([0, String(e)]));
            """,
            path,
            method,
            body,
        )
        status, text = answer
        return int(str(status)), str(text)

    def console_errors(self) -> list[str]:
        """The browser console's errors since the last call (e.g. CSP refusals)."""
        entries = self.driver.get_log("browser")
        return [str(entry.get("message")) for entry in entries if entry.get("level") == "SEVERE"]
