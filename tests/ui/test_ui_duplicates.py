"""The duplicates page: the pairs ``thatch duplicates`` lists, and their review."""

from __future__ import annotations

import html
import re

from starlette.testclient import TestClient
from thatch.api import Thatch
from thatch.ui.guard import CSRF_FIELD, Secrets

HIDDEN = r'<input type="hidden" name="([^"]+)" value="([^"]*)">'


def _pair(th: Thatch) -> None:
    th.remember("one", "deploy with make release", store="global")
    th.remember("two", "deploy with make release please", store="global")
    assert [(p.first.label, p.second.label) for p in th.duplicates()] == [("one", "two")]


def _review(client: TestClient, keys: Secrets, verdict: str, **extra: str) -> int:
    fields = {"store": "global", "first": "one", "second": "two", "verdict": verdict}
    answer = client.post("/duplicates/review", data={CSRF_FIELD: keys.csrf, **fields, **extra})
    return answer.status_code


def test_the_pairs_are_shown_side_by_side(th: Thatch, client: TestClient) -> None:
    _pair(th)
    page = client.get("/duplicates").text
    assert "deploy with make release please" in page
    assert page.count('<div class="side">') == 2
    assert 'value="same"' in page
    assert 'value="different"' in page


def test_different_removes_the_pair_from_the_api_s_duplicates(
    th: Thatch, client: TestClient, keys: Secrets
) -> None:
    _pair(th)
    assert _review(client, keys, "different") == 303
    assert th.duplicates() == []
    assert "No near-duplicates to review" in client.get("/duplicates").text
    # Both memories stay.
    assert [m.label for m in th.list("all")] == ["one", "two"]


def test_same_keeps_the_pair_until_one_is_forgotten(
    th: Thatch, client: TestClient, keys: Secrets
) -> None:
    _pair(th)
    assert _review(client, keys, "same") == 303
    assert len(th.duplicates()) == 1
    page = client.get("/duplicates").text
    assert "confirmed the same" in page
    assert "Keep this one (forget &#39;two&#39;)" in page
    forgot = client.post(
        "/memory/forget",
        data={CSRF_FIELD: keys.csrf, "store": "global", "label": "two", "back": "/duplicates"},
    )
    assert forgot.headers["location"] == "/duplicates"
    assert th.duplicates() == []
    assert [m.label for m in th.list("all")] == ["one"]


def test_a_review_without_the_csrf_token_changes_nothing(th: Thatch, client: TestClient) -> None:
    _pair(th)
    fields = {"store": "global", "first": "one", "second": "two", "verdict": "different"}
    assert client.post("/duplicates/review", data=fields).status_code == 403
    assert len(th.duplicates()) == 1


def test_an_unknown_verdict_is_refused(th: Thatch, client: TestClient, keys: Secrets) -> None:
    _pair(th)
    assert _review(client, keys, "maybe") == 400
    assert len(th.duplicates()) == 1


def test_back_only_leads_to_the_page_s_own_pages(
    th: Thatch, client: TestClient, keys: Secrets
) -> None:
    _pair(th)
    data = {CSRF_FIELD: keys.csrf, "store": "global", "first": "one", "second": "two"}
    answer = client.post(
        "/duplicates/review", data={**data, "verdict": "same", "back": "https://evil.example/"}
    )
    assert answer.headers["location"] == "/duplicates?store=global"
    answer = client.post(
        "/duplicates/review", data={**data, "verdict": "same", "back": "/hygiene?store=global"}
    )
    assert answer.headers["location"] == "/hygiene?store=global"


def test_the_rendered_different_button_takes_the_pair_off(th: Thatch, client: TestClient) -> None:
    _pair(th)
    page = client.get("/duplicates").text
    forms = re.findall(r'<form method="post" action="/duplicates/review">.*?</form>', page, re.S)
    sent = [
        {name: html.unescape(value) for name, value in re.findall(HIDDEN, form)} for form in forms
    ]
    different = next(fields for fields in sent if fields["verdict"] == "different")
    answer = client.post("/duplicates/review", data=different)
    assert answer.headers["location"] == "/duplicates?store=all"
    assert th.duplicates() == []
