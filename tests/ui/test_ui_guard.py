"""Only the user's browser may use the page: token, cookie, CSRF, Host, headers."""

from __future__ import annotations

from starlette.testclient import TestClient
from thatch.api import Thatch
from thatch.ui.guard import COOKIE, CSRF_FIELD, CSRF_HEADER, MAX_FORM_BYTES, Secrets

FIELDS = {"store": "global", "label": "keep"}


def _saved(th: Thatch) -> None:
    th.remember("keep", "A fact nobody else may touch", store="global")


def test_without_the_token_every_request_is_refused_and_nothing_changes(
    th: Thatch, stranger: TestClient, keys: Secrets
) -> None:
    _saved(th)
    pages = ("/", "/memories", "/duplicates", "/hygiene", "/decisions", "/plugins")
    for path in (*pages, "/static/ui.css", "/nowhere"):
        assert stranger.get(path).status_code == 403, path
    assert stranger.get("/memories", params={"token": "guess"}).status_code == 403
    stranger.cookies.set(COOKIE, "guess")
    assert stranger.get("/memories").status_code == 403
    # Even holding the CSRF token, a change without the access token does nothing.
    answer = stranger.post("/memory/forget", data={CSRF_FIELD: keys.csrf, **FIELDS})
    assert answer.status_code == 403
    answer = stranger.post(
        "/memory/edit", data={CSRF_FIELD: keys.csrf, "content": "changed", **FIELDS}
    )
    assert answer.status_code == 403
    for path in ("/duplicates/review", "/doctor"):
        assert stranger.post(path, data={CSRF_FIELD: keys.csrf, **FIELDS}).status_code == 403
    assert th.show("keep", "global").content == "A fact nobody else may touch"


def test_the_token_becomes_a_strict_cookie_and_leaves_the_url(
    stranger: TestClient, keys: Secrets
) -> None:
    answer = stranger.get("/memories", params={"token": keys.access, "q": "tabs"})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/memories?q=tabs"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "samesite=strict" in cookie.lower()
    assert stranger.get("/memories").status_code == 200


def test_a_change_without_the_csrf_token_is_refused(
    th: Thatch, client: TestClient, keys: Secrets
) -> None:
    _saved(th)
    assert client.post("/memory/forget", data=FIELDS).status_code == 403
    assert client.post("/memory/forget", data={CSRF_FIELD: "wrong", **FIELDS}).status_code == 403
    edit = {"content": "changed", **FIELDS}
    assert client.post("/memory/edit", data=edit).status_code == 403
    assert client.post("/memory/archive", data={"archived": "1", **FIELDS}).status_code == 403
    memory = th.show("keep", "global")
    assert (memory.content, memory.archived) == ("A fact nobody else may touch", False)
    # The token in a header does as well as in the form.
    answer = client.post(
        "/memory/archive", data={"archived": "1", **FIELDS}, headers={CSRF_HEADER: keys.csrf}
    )
    assert answer.status_code == 303
    assert th.show("keep", "global").archived


def test_a_foreign_host_is_refused(client: TestClient) -> None:
    # A DNS-rebinding page reaches 127.0.0.1 under its own name.
    assert client.get("/memories", headers={"host": "evil.example:8080"}).status_code == 403


def test_every_answer_carries_the_safety_headers(client: TestClient, stranger: TestClient) -> None:
    for answer in (client.get("/memories"), client.get("/decisions"), stranger.get("/memories")):
        csp = answer.headers["content-security-policy"]
        assert "default-src 'self'" in csp
        assert "'unsafe-inline'" not in csp
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_pages_hold_no_inline_script_and_no_outside_asset(client: TestClient) -> None:
    for path in ("/memories", "/decisions"):
        page = client.get(path).text
        assert "<script>" not in page
        assert "http://" not in page
        assert "https://" not in page
        assert client.get("/static/ui.js").status_code == 200


def test_an_oversized_change_is_refused_unread(
    th: Thatch, client: TestClient, keys: Secrets
) -> None:
    _saved(th)
    huge = {CSRF_FIELD: keys.csrf, "content": "x" * (MAX_FORM_BYTES + 1), **FIELDS}
    assert client.post("/memory/edit", data=huge).status_code == 413
    assert th.show("keep", "global").content == "A fact nobody else may touch"


def test_the_token_redirect_stays_on_this_site(stranger: TestClient, keys: Secrets) -> None:
    answer = stranger.get(f"http://testserver//evil.example/?token={keys.access}")
    assert answer.headers["location"] == "/evil.example/"
