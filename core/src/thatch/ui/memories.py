"""The memories page: list or search, filter, page; one memory's edit, forget, archive."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal
from urllib.parse import urlencode

import attrs
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from thatch.ui.context import ALL_STORES, UiContext, back_to
from thatch.ui.guard import change_form

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.plugin.records import Memory, RecallHit

PAGE_SIZE = 50
#: Search pages end here: each page asks recall for every hit before it, and
#: past a few hundred hits a better query helps more than another page.
MAX_SEARCH_PAGES = 20
#: The archived filter: hide archived memories, show only them, or both.
Archived = Literal["hide", "only", "all"]
ARCHIVED_CHOICES: tuple[Archived, ...] = ("hide", "only", "all")
#: The branch filter's value for memories tied to no branch (recalled on every one).
EVERY_BRANCH = "-"


@attrs.frozen
class Row:
    """One memory as the page lists it, with its search scores when searched."""

    memory: Memory
    score: float | None = None
    cosine: float | None = None
    #: Rank among the full-text hits; None when the words did not match.
    text_rank: int | None = None


@attrs.frozen
class Query:
    """What the memories page was asked for, read from its URL."""

    text: str
    store: str
    archived: Archived
    page: int
    #: Only memories of this git branch ("" any, :data:`EVERY_BRANCH` those of none).
    branch: str = ""

    @classmethod
    def of(cls, request: Request) -> Query:
        params = request.query_params
        text = params.get("q", "").strip()
        archived = params.get("archived", "hide")
        given = params.get("page", "1")
        page = max(int(given), 1) if given.isdigit() else 1
        return cls(
            text=text,
            store=params.get("store", ALL_STORES) or ALL_STORES,
            archived=archived if archived in ARCHIVED_CHOICES else "hide",
            page=min(page, MAX_SEARCH_PAGES) if text else page,
            branch=params.get("branch", "").strip(),
        )

    def url(self, **changes: object) -> str:
        """This query's URL with ``changes`` (e.g. ``page=2``)."""
        values = {
            "q": self.text,
            "store": self.store,
            "archived": self.archived,
            "branch": self.branch,
            "page": self.page,
        }
        values.update(changes)
        return "/memories?" + urlencode({k: v for k, v in values.items() if v != ""})


def rows_of(th: Thatch, query: Query) -> tuple[list[Row], bool]:
    """The page's rows, and whether a next page exists.

    A search asks recall for one hit more than the pages so far hold, so the
    ranking is the CLI's and the next page is known to exist.
    """
    wanted = query.page * PAGE_SIZE
    start = wanted - PAGE_SIZE
    include_archived = query.archived != "hide"
    if not query.text:
        memories = th.list(query.store, include_archived=include_archived)
        shown = [m for m in memories if _shown(m, query)]
        # Only the page's memories become rows: at 10k memories, a row for
        # each took a fifth of the page's time.
        return [Row(m) for m in shown[start:wanted]], len(shown) > wanted
    hits = th.recall(
        query.text,
        stores=query.store,
        limit=wanted + 1,
        record=False,
        include_archived=include_archived,
        # A branch's memories are found as they would be on that branch.
        on_branch=query.branch if query.branch not in ("", EVERY_BRANCH) else None,
    )
    rows = [_row(hit) for hit in hits if _shown(hit.memory, query)]
    if query.page == MAX_SEARCH_PAGES:
        rows = rows[:wanted]
    return rows[start:wanted], len(rows) > wanted


def _row(hit: RecallHit) -> Row:
    return Row(hit.memory, score=hit.score, cosine=hit.cosine, text_rank=hit.text_rank)


def _shown(memory: Memory, query: Query) -> bool:
    archived = query.archived
    if archived != "all" and memory.archived != (archived == "only"):
        return False
    if not query.branch:
        return True
    return memory.branch == (None if query.branch == EVERY_BRANCH else query.branch)


async def memories(request: Request) -> Response:
    """``GET /memories``: the list, or search results, one page of them."""
    ui: UiContext = request.app.state.ui
    query = Query.of(request)
    rows, more = await ui.call(rows_of, ui.th, query)
    stores = await ui.call(ui.th.known_stores)
    return ui.page(
        "memories.html",
        query=query,
        rows=rows,
        more=more,
        stores=[ALL_STORES, *stores],
        archived_choices=ARCHIVED_CHOICES,
        # Offered as you type: the branches of the memories on this page.
        branches=sorted({row.memory.branch for row in rows if row.memory.branch}),
        every_branch=EVERY_BRANCH,
    )


async def memory(request: Request) -> Response:
    """``GET /memory?store=S&label=L``: one memory, with its edit form and actions."""
    ui: UiContext = request.app.state.ui
    store, label = request.query_params.get("store", ""), request.query_params.get("label", "")
    found = await ui.call(ui.th.show, label, store or None)
    return ui.page("memory.html", memory=found)


def memory_url(memory: Memory) -> str:
    return "/memory?" + urlencode({"store": memory.store, "label": memory.label})


async def edit(request: Request) -> Response:
    """``POST /memory/edit``: new content for the memory, on the branch it had."""
    ui: UiContext = request.app.state.ui
    form = await change_form(request, ui.keys)
    current = await ui.call(ui.th.show, form.get("label", ""), form.get("store") or None)
    # A browser sends every line break of a textarea as CRLF (the HTML form
    # rules); the memory keeps the newlines the user typed.
    content = form.get("content", "").replace("\r\n", "\n")
    result = await ui.call(
        ui.th.remember,
        current.label,
        content,
        store=current.store,
        branch=current.branch,
        overwrite=True,
    )
    return RedirectResponse(memory_url(result.memory), status_code=303)


async def forget(request: Request) -> Response:
    """``POST /memory/forget``: delete the memory for good; back to the list (or ``back``)."""
    ui: UiContext = request.app.state.ui
    form = await change_form(request, ui.keys)
    await ui.call(ui.th.forget, form.get("label", ""), form.get("store") or None)
    return RedirectResponse(back_to(form, "/memories"), status_code=303)


async def archive(request: Request) -> Response:
    """``POST /memory/archive`` with ``archived=1`` (hide from recall) or ``0`` (bring back).

    Back to the memory's page, or to ``back`` (the hygiene report's one-click archive).
    """
    ui: UiContext = request.app.state.ui
    form = await change_form(request, ui.keys)
    change = ui.th.archive if form.get("archived") == "1" else ui.th.unarchive
    updated = await ui.call(change, form.get("label", ""), form.get("store") or None)
    return RedirectResponse(back_to(form, memory_url(updated)), status_code=303)
