"""Memories, search, edit, forget and duplicates, clicked through in Chromium.

Every change is made on the page and checked with the CLI a user would run
next; every memory the page shows was saved by the CLI.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from urllib.parse import urlencode

import pytest

if TYPE_CHECKING:
    # Types only: without Selenium installed, the module must still load to be skipped.
    from browser.conftest import Machine
    from browser.pages import Browser

pytestmark = pytest.mark.slow

SCRIPT = "<script>alert(1)</script>"
#: Saved with one ``thatch import``: a process per memory would cost the model's load each.
IMPORTED = (
    ("lunch", "The team orders pizza on Fridays."),
    ("release-notes", "Release notes are written in the pull request description."),
    ("old-ci", "CI runs on the Jenkins server in the basement."),
    ("deploy-day", "Deploys happen on Tuesdays after the release review."),
    ("deploy-when", "We deploy on Tuesday, after the release review."),
    ("script-note", f"Pasted from a bug report: {SCRIPT} then the page froze."),
    ("checklist", "\nRelease checklist:\n  - tag\n  - changelog\n"),
)


@pytest.fixture(scope="module")
def seeded(machine: Machine) -> Machine:
    lines = [json.dumps({"label": k, "content": v, "store": "global"}) for k, v in IMPORTED]
    machine.thatch("import", "-", input="\n".join(lines) + "\n")
    return machine


@pytest.fixture
def page(seeded: Machine, browser: Browser) -> Browser:
    return browser


def memory_path(label: str) -> str:
    return "/memory?" + urlencode({"store": "global", "label": label})


def test_search_finds_a_memory_saved_by_thatch_remember(page: Browser, seeded: Machine) -> None:
    # Saved while the page is being served, as an agent saves one mid-session.
    seeded.thatch(
        "remember",
        "pkg-manager",
        "The project installs Python packages with uv",
        "--store",
        "global",
    )
    query = "which dependency tool is used"
    page.open("/memories")
    page.search(query)
    labels = page.cells("table.memories tbody tr td:first-child")
    # No word in common with the memory: the real model's meaning puts it first.
    assert labels[0] == "pkg-manager"
    assert page.cells("table.memories tbody tr td:last-child")[0] == "meaning"


def test_editing_a_memory_on_its_page_changes_what_thatch_show_prints(
    page: Browser, seeded: Machine
) -> None:
    edited = "Release notes live in CHANGELOG.md.\nOne line per change, newest first."
    page.open(memory_path("release-notes"))
    box = page.find("textarea[name=content]")
    box.clear()
    box.send_keys(edited)
    page.click_and_wait(page.find("form.edit button[type=submit]"))
    assert page.find("pre.content").text == edited
    shown = seeded.thatch("show", "release-notes", "global")
    assert edited in shown
    assert "pull request description" not in shown
    # A browser sends a textarea's line breaks as CRLF; the memory keeps the user's text.
    saved = json.loads(seeded.thatch("show", "release-notes", "global", "--json"))
    assert saved["content"] == edited


def test_saving_a_memory_unchanged_keeps_its_text_exactly(page: Browser, seeded: Machine) -> None:
    def content() -> str:
        return str(json.loads(seeded.thatch("show", "checklist", "global", "--json"))["content"])

    before = content()
    page.open(memory_path("checklist"))
    page.click_and_wait(page.find("form.edit button[type=submit]"))
    # Neither the leading blank line (a textarea's parser drops one) nor the
    # newlines (sent back as CRLF) change.
    assert content() == before == "\nRelease checklist:\n  - tag\n  - changelog\n"


def test_forgetting_a_memory_asks_first_then_removes_it(page: Browser, seeded: Machine) -> None:
    page.open(memory_path("old-ci"))
    forget = page.find("form[action='/memory/forget'] button")
    # Cancelling the confirmation changes nothing.
    forget.click()
    assert page.alert_text() == "Forget this memory for good?"
    page.driver.switch_to.alert.dismiss()
    assert "Jenkins" in seeded.thatch("show", "old-ci", "global")

    page.click_and_wait(forget, accept=True)
    assert page.driver.current_url.endswith("/memories")
    assert "old-ci" not in page.cells("table.memories tbody tr td:first-child")
    gone = seeded.run("show", "old-ci", "global")
    assert gone.returncode != 0
    assert "old-ci" in gone.stderr


def test_marking_a_pair_different_removes_it_from_thatch_duplicates(
    page: Browser, seeded: Machine
) -> None:
    def listed() -> set[frozenset[str]]:
        pairs = json.loads(seeded.thatch("duplicates", "--json"))
        return {frozenset((p["first"]["label"], p["second"]["label"])) for p in pairs}

    pair = frozenset(("deploy-day", "deploy-when"))
    assert pair in listed()
    page.open("/duplicates")
    (section,) = [s for s in page.all("section.pair") if "deploy-day" in s.text]
    assert "deploy-when" in section.text
    (different,) = page.by_xpath(".//button[text()='Different']", within=section)
    page.click_and_wait(different)
    assert "deploy-day" not in page.text
    assert pair not in listed()


def test_a_script_in_a_memory_is_shown_as_text_and_never_runs(page: Browser) -> None:
    for path in ("/memories", memory_path("script-note"), "/memories?q=page+froze"):
        page.open(path)
        assert page.alert_text() is None, path
        # Escaped, not parsed: no script element holds it, and it reads as written.
        assert not page.by_xpath("//script[contains(., 'alert(1)')]")
        assert SCRIPT in page.text, path


def test_a_request_without_the_token_gets_403(page: Browser, seeded: Machine) -> None:
    page.open("/memories")
    page.driver.delete_all_cookies()
    try:
        for path in ("/memories", memory_path("lunch"), "/static/ui.css"):
            page.open(path)
            assert page.status == 403, path
            assert page.text == "forbidden: open the URL 'thatch ui' printed", path
    finally:
        page.sign_in()
    assert page.status == 200


def test_a_change_without_the_csrf_token_gets_403_and_changes_nothing(
    page: Browser, seeded: Machine
) -> None:
    page.open("/memories")
    # The page's own cookie goes along; only the form's token is missing.
    status, text = page.fetch("/memory/forget", "POST", "store=global&label=lunch")
    assert status == 403
    assert "CSRF" in text
    assert "pizza" in seeded.thatch("show", "lunch", "global")


def test_no_page_logs_an_error_in_the_console(page: Browser) -> None:
    """Nothing the Content-Security-Policy refuses, no missing asset (favicon included)."""
    page.console_errors()
    for path in ("/memories", "/memories?q=deploys", "/duplicates", "/hygiene", "/decisions"):
        page.open(path)
        assert page.status == 200, path
        assert page.console_errors() == [], path
    # A browser asks for the icon once per session: ask again, as it would.
    icon = page.find("link[rel=icon]").get_attribute("href")
    assert icon is not None
    assert page.fetch(icon)[0] == 200
