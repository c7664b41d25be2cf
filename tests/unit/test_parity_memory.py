"""Parity with the original's QA use cases: the memory, prediction and dedup tools.

Each test runs the real tools (SQLite, word-hash embedder) in a tmp home and
is named after the use case it checks.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from thatch.plugin.errors import InvalidInputError
from thatch.tools import ToolContext, ToolRegistry

NOTE = "deploys go through the staging cluster first"


def ok(registry: ToolRegistry, ctx: ToolContext, name: str, **arguments: Any) -> Any:
    outcome = registry.call(name, arguments, ctx)
    assert not outcome.is_error, outcome.text
    return json.loads(outcome.text)


def failed(registry: ToolRegistry, ctx: ToolContext, name: str, **arguments: Any) -> str:
    outcome = registry.call(name, arguments, ctx)
    assert outcome.is_error, outcome.text
    return outcome.text


# -- UC-001 --------------------------------------------------------------------


def test_uc001_saving_an_existing_label_is_refused(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    ok(registry, ctx, "memory_remember", label="deploy", content=NOTE + "\nthen production")
    error = failed(registry, ctx, "memory_remember", label="deploy", content="deploy on fridays")
    assert "'deploy' already exists in store global" in error
    assert NOTE in error
    assert "then production" not in error
    assert "overwrite: true" in error
    assert "--overwrite" in error
    assert ctx.thatch.show("deploy").content == NOTE + "\nthen production"


def test_uc001_overwrite_replaces_and_the_same_text_is_unchanged(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    ok(registry, ctx, "memory_remember", label="deploy", content=NOTE)
    again = ok(registry, ctx, "memory_remember", label="deploy", content=NOTE)
    assert again["action"] == "unchanged"
    replaced = ok(
        registry,
        ctx,
        "memory_remember",
        label="deploy",
        content="on fridays",
        overwrite=True,
    )
    assert replaced["action"] == "updated"
    assert ctx.thatch.show("deploy").content == "on fridays"


def test_uc001_the_python_api_refuses_by_default(ctx: ToolContext) -> None:
    th = ctx.thatch
    th.remember("deploy", NOTE)
    with pytest.raises(InvalidInputError, match="already exists"):
        th.remember("deploy", "deploy on fridays")
    with pytest.raises(InvalidInputError, match="already exists"):
        th.remember("deploy", NOTE, branch="main")  # a branch change replaces too
    assert th.remember("deploy", "deploy on fridays", overwrite=True).action == "updated"


# -- UC-004 --------------------------------------------------------------------


def test_uc004_reading_an_unknown_store_is_an_error_listing_the_stores(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    ok(registry, ctx, "memory_remember", label="deploy", content=NOTE, store="acme/shop")
    error = failed(registry, ctx, "memory_recall", query="staging", store="acme/shp")
    assert "no store named 'acme/shp'" in error
    assert "global, acme/shop" in error or "acme/shop, global" in error
    assert "no owner part" in failed(registry, ctx, "memory_list", store="database")
    assert ok(registry, ctx, "memory_recall", query="staging", store="acme/shop")


# -- UC-019 --------------------------------------------------------------------


def test_uc019_recall_includes_archived_memories_on_request(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    ok(registry, ctx, "memory_remember", label="deploy", content=NOTE)
    ok(registry, ctx, "memory_archive", label="deploy")
    assert ok(registry, ctx, "memory_recall", query="staging cluster deploys") == []
    hits = ok(
        registry, ctx, "memory_recall", query="staging cluster deploys", include_archived=True
    )
    assert [(hit["label"], hit["archived"]) for hit in hits] == [("deploy", True)]
    by_words = ctx.thatch.recall("staging", mode="words", include_archived=True)
    assert [hit.memory.label for hit in by_words] == ["deploy"]


# -- UC-022 --------------------------------------------------------------------


def _teach(registry: ToolRegistry, ctx: ToolContext, matcher: str, prediction: str) -> int:
    result = ok(
        registry,
        ctx,
        "prediction_update",
        matcher=matcher,
        prediction=prediction,
        signal="create",
        detail="the user said so",
    )
    return int(result["prediction"]["id"])


def test_uc022_prediction_list_shows_matchers_and_provenance(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    _teach(registry, ctx, "naming a test file", "name it after the use case")
    [listed] = ok(registry, ctx, "prediction_list")
    assert listed["statement"] == "name it after the use case"
    [matcher] = listed["matchers"]
    assert matcher["description"] == "naming a test file"
    assert matcher["weight"] > 0
    assert [(p["signal"], p["detail"]) for p in listed["provenance"]] == [
        ("create", "the user said so")
    ]


def test_uc022_prediction_delete_takes_a_statement(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    _teach(registry, ctx, "naming a test file", "name it after the use case")
    deleted = ok(registry, ctx, "prediction_delete", statement="name it  after the use case")
    assert deleted["prediction"]["statement"] == "name it after the use case"
    assert ok(registry, ctx, "prediction_list") == []
    assert "no prediction states" in failed(registry, ctx, "prediction_delete", statement="x")
    assert "'id' or its 'statement'" in failed(registry, ctx, "prediction_delete")


def test_uc022_a_statement_of_several_predictions_is_refused_with_their_ids(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    first = _teach(registry, ctx, "naming a test file", "keep it short")
    other = ctx.thatch.decisions.update(
        "writing a commit message", "keep it short", "create", store="acme/shop"
    ).prediction.id
    error = failed(registry, ctx, "prediction_delete", statement="keep it short")
    assert f"id {first} in global" in error
    assert f"id {other} in acme/shop" in error
    assert len(ctx.thatch.decisions.list("all")) == 2


# -- UC-024 --------------------------------------------------------------------


def _twins(registry: ToolRegistry, ctx: ToolContext) -> None:
    ok(registry, ctx, "memory_remember", label="tabs", content="indent python code with tabs")
    ok(registry, ctx, "memory_remember", label="tabs2", content="indent python code with tabs!")
    assert len(ok(registry, ctx, "find_duplicates")) == 1


def test_uc024_a_pair_marked_different_is_not_proposed_again(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    _twins(registry, ctx)
    marked = ok(
        registry, ctx, "dedup_mark_checked", label="tabs", other="tabs2", verdict="different"
    )
    assert marked["verdict"] == "different"
    assert ok(registry, ctx, "find_duplicates") == []
    assert ok(registry, ctx, "hygiene_report")["duplicates"] == []


def test_uc024_a_pair_marked_same_stays_listed_as_confirmed(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    _twins(registry, ctx)
    [unreviewed] = ok(registry, ctx, "find_duplicates")
    assert unreviewed["verdict"] is None
    ok(registry, ctx, "dedup_mark_checked", label="tabs2", other="tabs", verdict="same")
    [confirmed] = ok(registry, ctx, "find_duplicates")
    assert confirmed["verdict"] == "same"
    [reported] = ok(registry, ctx, "hygiene_report")["duplicates"]
    assert reported["verdict"] == "same"
    # A later verdict replaces the earlier one.
    ok(registry, ctx, "dedup_mark_checked", label="tabs", other="tabs2", verdict="different")
    assert ok(registry, ctx, "find_duplicates") == []
