"""The hygiene page: the API's report, and its one-click fixes."""

from __future__ import annotations

import html
import re
import sqlite3
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
import thatch_sqlite.plugin
from starlette.testclient import TestClient
from thatch.api import Thatch
from thatch.plugin.config import Config
from thatch.testing import plugins_with
from thatch.ui.guard import CSRF_FIELD, Secrets

DAY = 86_400.0
REMOTE = "git@github.com:acme/web.git"


def _age(th: Thatch, label: str, days: int) -> None:
    """Move the memory's last update ``days`` back, as if nobody touched it since."""
    with sqlite3.connect(th.config.db_path) as db:
        db.execute(
            "UPDATE memories SET updated_at = updated_at - ? WHERE label = ?", (days * DAY, label)
        )


def _stale_labels(th: Thatch) -> set[str]:
    return {memory.label for memory in th.hygiene().stale}


def test_the_page_shows_what_the_api_reports(th: Thatch, client: TestClient) -> None:
    th.remember("old", "A fact nobody looked at for a long time", store="global")
    th.remember("fresh", "A fact saved today", store="global")
    th.remember("one", "deploy with make release", store="global")
    th.remember("two", "deploy with make release please", store="global")
    _age(th, "old", 200)
    assert _stale_labels(th) == {"old"}
    page = client.get("/hygiene").text
    assert "Not updated or recalled for 90+ days: 1" in page
    assert ">old<" in page
    assert ">fresh<" not in page
    assert "Duplicate pairs to review or merge: 1" in page
    # A shorter span is the API's too.
    assert "for 300+ days: 0" in client.get("/hygiene", params={"days": "300"}).text


def test_archive_takes_a_stale_memory_off_the_report(
    th: Thatch, client: TestClient, keys: Secrets
) -> None:
    th.remember("old", "A fact nobody looked at for a long time", store="global")
    _age(th, "old", 200)
    back = "/hygiene?store=all&days=90"
    answer = client.post(
        "/memory/archive",
        data={
            CSRF_FIELD: keys.csrf,
            "store": "global",
            "label": "old",
            "archived": "1",
            "back": back,
        },
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == back
    assert th.show("old", "global").archived
    assert _stale_labels(th) == set()
    assert ": 0" in client.get(back).text


def _form(page: str, action: str) -> dict[str, str]:
    """The hidden fields of the page's first form posting to ``action``, as a browser sends them."""
    form = re.search(rf'<form method="post" action="{action}".*?</form>', page, flags=re.S)
    assert form is not None, action
    fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(0))
    return {name: html.unescape(value) for name, value in fields}


def test_the_rendered_archive_button_does_what_it_says(th: Thatch, client: TestClient) -> None:
    th.remember("old", "A fact nobody looked at for a long time", store="global")
    _age(th, "old", 200)
    fields = _form(client.get("/hygiene").text, "/memory/archive")
    answer = client.post("/memory/archive", data=fields)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/hygiene?store=all&days=90"
    assert th.show("old", "global").archived


def test_forget_from_the_report(th: Thatch, client: TestClient, keys: Secrets) -> None:
    th.remember("old", "A fact nobody looked at for a long time", store="global")
    _age(th, "old", 200)
    page = client.get("/hygiene").text
    assert 'action="/memory/forget"' in page
    answer = client.post(
        "/memory/forget",
        data={CSRF_FIELD: keys.csrf, "store": "global", "label": "old", "back": "/hygiene"},
    )
    assert answer.headers["location"] == "/hygiene"
    assert th.list("all", include_archived=True) == []


def test_duplicate_pairs_are_reviewed_from_the_report(
    th: Thatch, client: TestClient, keys: Secrets
) -> None:
    th.remember("one", "deploy with make release", store="global")
    th.remember("two", "deploy with make release please", store="global")
    page = client.get("/hygiene").text
    assert '<input type="hidden" name="back" value="/hygiene?store=all&amp;days=90">' in page
    fields = {"store": "global", "first": "one", "second": "two", "verdict": "different"}
    answer = client.post(
        "/duplicates/review", data={CSRF_FIELD: keys.csrf, "back": "/hygiene", **fields}
    )
    assert answer.headers["location"] == "/hygiene"
    assert th.hygiene().duplicates == ()


@pytest.mark.parametrize("days", ["0", "-5", "abc", "1.5", "9" * 40])
def test_a_stale_span_that_is_no_usable_number_is_named(client: TestClient, days: str) -> None:
    answer = client.get("/hygiene", params={"days": days})
    assert answer.status_code == 400
    assert "from 1 to" in answer.text


def test_no_stale_span_given_is_the_default(client: TestClient) -> None:
    answer = client.get("/hygiene", params={"days": ""})
    assert answer.status_code == 200
    assert 'value="90"' in answer.text


def test_a_memory_of_a_deleted_branch_is_reported_orphaned(
    home: Path, project: Path, client_of: Callable[[Thatch], AbstractContextManager[TestClient]]
) -> None:
    for args in (("init", "-q", "-b", "main"), ("remote", "add", "origin", REMOTE)):
        subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)
    plugins = plugins_with(thatch_sqlite.plugin)
    with Thatch(Config.load(home, environ={}), plugins, project) as th:
        th.remember("wip", "The feature flag is on while the branch lives", branch="gone-branch")
        assert [m.label for m in th.hygiene().orphaned] == ["wip"]
        with client_of(th) as client:
            page = client.get("/hygiene").text
            assert "Tied to a branch that no longer exists: 1" in page
            assert "branch gone-branch" in page
