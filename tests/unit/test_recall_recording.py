"""Which search results count as recalled: the relevant ones, never weak or archived matches.

``thatch hygiene`` calls a memory stale when it was neither updated nor
recalled for 90 days, so a memory counted on every search that happened to
list it would never look stale. Real SQLite file, word-hash embedder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.memory.transfer import ParsedLines
from thatch.plugin.config import Config
from thatch.result_json import memory_hit_data
from thatch.runtime import Runtime
from thatch.testing import WordHashEmbedder, make_runtime, plugins_with
from thatch.tools import ToolContext, ToolRegistry

QUERY = "indent code with tabs"


@pytest.fixture
def th(tmp_path: Path) -> Iterator[Thatch]:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=WordHashEmbedder())
    with Thatch(Config.load(tmp_path / "home", environ={}), plugins, tmp_path) as opened:
        _remember(opened)
        yield opened


def _remember(th: Thatch) -> None:
    th.remember("tabs", "indent code with tabs", store="global")
    th.remember("db", "sessions live in postgres", store="global")
    th.remember("old-tabs", "we used to indent code with tabs", store="global")
    th.archive("old-tabs", "global")


def _counts(th: Thatch) -> dict[str, int]:
    return {m.label: m.recall_count for m in th.list("all", include_archived=True)}


def test_a_search_counts_only_its_relevant_results(th: Thatch) -> None:
    hits = th.recall(QUERY, limit=5)
    threshold = th.thresholds().recall
    shown = {hit.memory.label: memory_hit_data(hit, threshold)["relevant"] for hit in hits}
    assert shown == {"tabs": True, "db": False}  # the weak match is listed, marked so
    assert _counts(th) == {"tabs": 1, "db": 0, "old-tabs": 0}
    assert th.show("db").last_recalled_at is None


def test_archived_results_are_listed_but_not_counted(th: Thatch) -> None:
    hits = th.recall(QUERY, include_archived=True)
    assert {hit.memory.label for hit in hits} >= {"tabs", "old-tabs"}
    assert _counts(th) == {"tabs": 1, "db": 0, "old-tabs": 0}


def test_a_weak_match_searched_for_daily_still_goes_stale(tmp_path: Path) -> None:
    old = (datetime.now(UTC) - timedelta(days=200)).isoformat()
    rows = [("tabs", "indent code with tabs"), ("db", "sessions live in postgres")]
    raw = [
        json.dumps({"label": label, "content": content, "store": "global", "updated_at": old})
        for label, content in rows
    ]
    plugins = plugins_with(thatch_sqlite.plugin, embedder=WordHashEmbedder())
    with Thatch(Config.load(tmp_path / "old", environ={}), plugins, tmp_path) as th:
        th.import_lines(ParsedLines(lambda: raw, "old.jsonl"))
        assert {memory.label for memory in th.hygiene().stale} == {"tabs", "db"}
        for _ in range(3):
            assert [hit.memory.label for hit in th.recall(QUERY)] == ["tabs", "db"]
        assert {memory.label for memory in th.hygiene().stale} == {"db"}


def test_record_false_counts_nothing(th: Thatch) -> None:
    th.recall(QUERY, record=False)
    assert set(_counts(th).values()) == {0}


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Runtime]:
    runtime = make_runtime(tmp_path / "home", thatch_sqlite.plugin)
    yield runtime
    runtime.close()


def test_memory_recall_counts_as_search_does(app: Runtime, tmp_path: Path) -> None:
    outside = tmp_path / "outside-git"
    outside.mkdir()
    ctx = ToolContext(app, app.project(str(outside)))
    _remember(ctx.thatch)
    outcome = ToolRegistry().call("memory_recall", {"query": QUERY, "include_archived": True}, ctx)
    assert not outcome.is_error, outcome.text
    listed = {hit["label"]: hit["relevant"] for hit in outcome.data}
    assert listed["tabs"] is True
    assert listed["db"] is False
    assert "old-tabs" in listed
    assert _counts(ctx.thatch) == {"tabs": 1, "db": 0, "old-tabs": 0}
