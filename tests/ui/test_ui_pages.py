"""The page's memories and decision-model views, through the same API the CLI uses."""

from __future__ import annotations

import re

from starlette.testclient import TestClient
from thatch.api import Thatch
from thatch.memory.writer import MemoryInput
from thatch.ui.guard import CSRF_FIELD, Secrets
from thatch.ui.memories import PAGE_SIZE

XSS = "<script>alert(1)</script> see [the docs](javascript:alert(2))"


def _change(client: TestClient, keys: Secrets, path: str, **fields: str) -> int:
    answer = client.post(path, data={CSRF_FIELD: keys.csrf, **fields})
    return answer.status_code


def test_search_finds_a_memory_saved_through_the_api(th: Thatch, client: TestClient) -> None:
    th.remember("indent", "The user indents Python with four spaces", store="global")
    th.remember("editor", "The user edits in a terminal editor", store="global")
    page = client.get("/memories", params={"q": "indents python spaces"}).text
    assert "indent" in page
    # The hit shows its fused score, its cosine and that the words matched too.
    assert "Score" in page
    assert "Cosine" in page
    assert "meaning + words (#1)" in page


def test_listing_filters_by_store_and_archived(th: Thatch, client: TestClient) -> None:
    th.remember("shared", "A fact for every project", store="global")
    th.remember("local", "A fact of one repository", store="acme/web")
    th.remember("old", "A fact put away", store="global")
    th.archive("old", "global")
    everything = client.get("/memories").text
    assert "shared" in everything
    assert "local" in everything
    assert ">old<" not in everything
    only_global = client.get("/memories", params={"store": "global"}).text
    assert "shared" in only_global
    assert "local" not in only_global
    archived = client.get("/memories", params={"archived": "only"}).text
    assert ">old<" in archived
    assert "shared" not in archived


def test_pages_through_many_memories(th: Thatch, client: TestClient) -> None:
    count = PAGE_SIZE * 2 + 7
    th.remember_many(
        MemoryInput(label=f"fact-{i:04d}", content=f"fact number {i}", store="global")
        for i in range(count)
    )
    first = client.get("/memories").text
    assert first.count('<td><a href="/memory?') == PAGE_SIZE
    assert "page=2" in first
    last = client.get("/memories", params={"page": "3"}).text
    assert "fact-0106" in last
    assert "fact-0000" not in last
    assert "next" not in last


def test_edit_changes_what_show_gives(th: Thatch, client: TestClient, keys: Secrets) -> None:
    th.remember("tabs", "The user indents with tabs", store="global")
    status = _change(
        client, keys, "/memory/edit", store="global", label="tabs", content="Spaces, never tabs"
    )
    assert status == 303
    assert th.show("tabs", "global").content == "Spaces, never tabs"


def test_forget_removes_the_memory(th: Thatch, client: TestClient, keys: Secrets) -> None:
    th.remember("gone", "A fact to forget", store="global")
    assert _change(client, keys, "/memory/forget", store="global", label="gone") == 303
    assert [m.label for m in th.list("all", include_archived=True)] == []
    assert client.get("/memory", params={"store": "global", "label": "gone"}).status_code == 404


def test_archive_and_unarchive(th: Thatch, client: TestClient, keys: Secrets) -> None:
    th.remember("kept", "A fact to put away", store="global")
    fields = {"store": "global", "label": "kept"}
    assert _change(client, keys, "/memory/archive", archived="1", **fields) == 303
    assert th.show("kept", "global").archived
    assert "Unarchive" in client.get("/memory", params=fields).text
    assert _change(client, keys, "/memory/archive", archived="0", **fields) == 303
    assert not th.show("kept", "global").archived


def test_memory_content_is_shown_as_text(th: Thatch, client: TestClient) -> None:
    th.remember("hostile", XSS, store="global")
    pages = [
        client.get("/memories").text,
        client.get("/memories", params={"q": "alert docs"}).text,
        client.get("/memory", params={"store": "global", "label": "hostile"}).text,
    ]
    for page in pages:
        assert "<script>alert" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        # The markdown link stays text: no anchor points at javascript:.
        assert 'href="javascript' not in page


def test_an_api_error_is_shown_escaped(client: TestClient) -> None:
    answer = client.get("/memory", params={"store": "global", "label": "<b>nope</b>"})
    assert answer.status_code in (400, 404)
    assert "<b>nope</b>" not in answer.text


def test_decision_page_shows_confidence_change_after_confirm(
    th: Thatch, client: TestClient
) -> None:
    situation, preference = "naming a new module", "prefer a short noun"
    created = th.decisions.update(situation, preference, "create", store="global")
    cell = re.compile(
        rf'id="prediction-{created.prediction.id}">.*?class="num confidence">(\d+)%', re.S
    )
    before = cell.search(client.get("/decisions").text)
    assert before is not None
    assert before.group(1) == f"{created.confidence * 100:.0f}"
    confirmed = th.decisions.update(situation, preference, "confirm", store="global")
    after = cell.search(client.get("/decisions").text)
    assert after is not None
    assert after.group(1) == f"{confirmed.confidence * 100:.0f}"
    assert after.group(1) != before.group(1)
    assert situation in client.get("/decisions").text


def test_a_mistyped_store_is_named_in_the_error(client: TestClient) -> None:
    answer = client.get("/memories", params={"store": "acme/<i>web</i>"})
    assert answer.status_code in (400, 404)
    assert "<i>web</i>" not in answer.text
    assert "the stores are: global" in answer.text


def test_every_form_of_a_memory_carries_the_csrf_token(
    th: Thatch, client: TestClient, keys: Secrets
) -> None:
    th.remember("tabs", "The user indents with tabs", store="global")
    page = client.get("/memory", params={"store": "global", "label": "tabs"}).text
    forms = re.findall(r'<form method="post".*?</form>', page, flags=re.S)
    assert len(forms) == 3
    for form in forms:
        assert f'name="{CSRF_FIELD}" value="{keys.csrf}"' in form


def test_listing_and_search_filter_by_branch(th: Thatch, client: TestClient) -> None:
    th.remember("everywhere", "Deploys go through the staging cluster", store="global")
    th.remember("feature", "Deploys of the beta go to the canary", store="global", branch="beta")
    th.remember("other", "Deploys on main wait for review", store="global", branch="main")
    only_beta = client.get("/memories", params={"branch": "beta"}).text
    assert ">feature<" in only_beta
    assert ">everywhere<" not in only_beta
    assert ">other<" not in only_beta
    unbranched = client.get("/memories", params={"branch": "-"}).text
    assert ">everywhere<" in unbranched
    assert ">feature<" not in unbranched
    searched = client.get("/memories", params={"q": "deploys", "branch": "main"}).text
    assert ">other<" in searched
    assert ">feature<" not in searched
    # The filter is kept when paging, and the page offers the branches it shows.
    assert 'value="main"' in searched
    every = client.get("/memories").text
    assert '<option value="beta">' in every
