"""Every core MCP tool against a real runtime (SQLite, word-hash embedder) in a tmp home."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import thatch_claude.plugin
import thatch_sqlite.plugin
from thatch.plugin.events import Event
from thatch.runtime import Runtime
from thatch.sessions.records import NewInteraction
from thatch.testing import make_runtime
from thatch.tools import ToolContext, ToolOutcome, ToolRegistry

CORE_TOOLS = {
    "memory_remember",
    "memory_recall",
    "memory_list",
    "memory_show",
    "memory_forget",
    "memory_archive",
    "store_list",
    "find_duplicates",
    "dedup_mark_checked",
    "hygiene_report",
    "extraction_done",
    "prediction_query",
    "prediction_update",
    "prediction_list",
    "prediction_delete",
}
READ_ONLY = {
    "memory_recall",
    "memory_list",
    "memory_show",
    "store_list",
    "find_duplicates",
    "hygiene_report",
    # Not prediction_query: with a session it logs a showing of each prediction.
    "prediction_list",
}
DESTRUCTIVE = {"memory_forget", "prediction_delete"}


def call(registry: ToolRegistry, ctx: ToolContext, name: str, **arguments: Any) -> ToolOutcome:
    outcome = registry.call(name, arguments, ctx)
    assert outcome.is_error or json.loads(outcome.text) == outcome.data
    return outcome


def ok(registry: ToolRegistry, ctx: ToolContext, name: str, **arguments: Any) -> Any:
    outcome = call(registry, ctx, name, **arguments)
    assert not outcome.is_error, outcome.text
    return outcome.data


def failed(registry: ToolRegistry, ctx: ToolContext, name: str, **arguments: Any) -> str:
    outcome = call(registry, ctx, name, **arguments)
    assert outcome.is_error, outcome.data
    assert outcome.data == {"error": outcome.text}
    return outcome.text


# -- descriptions --------------------------------------------------------------


def test_every_core_tool_is_described_with_its_annotations(registry: ToolRegistry) -> None:
    described = {tool["name"]: tool for tool in registry.describe()}
    assert set(described) == CORE_TOOLS
    for name, tool in described.items():
        hints = tool["annotations"]
        assert hints["readOnlyHint"] is (name in READ_ONLY), name
        assert hints["destructiveHint"] is (name in DESTRUCTIVE), name
        assert hints["openWorldHint"] is False
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema.get("required", ())) <= set(schema["properties"])
        assert len(tool["description"]) > 80, f"{name} needs a description an agent can use"


def test_describe_returns_copies(registry: ToolRegistry) -> None:
    first = registry.describe()[0]
    first["inputSchema"]["properties"].clear()
    assert registry.describe()[0]["inputSchema"]["properties"]


# -- memories ------------------------------------------------------------------


def test_remember_then_recall_finds_it(registry: ToolRegistry, ctx: ToolContext) -> None:
    saved = ok(registry, ctx, "memory_remember", label="tabs", content="indent code with tabs")
    assert saved["action"] == "created"
    assert saved["memory"]["store"] == "global"
    assert saved["redactions"] == 0
    ok(registry, ctx, "memory_remember", label="db", content="sessions live in postgres")
    hits = ok(registry, ctx, "memory_recall", query="tabs indent")
    assert hits[0]["label"] == "tabs"
    assert hits[0]["relevant"] is True
    assert set(hits[0]) >= {"label", "store", "content", "score", "cosine", "relevant"}
    assert len(ok(registry, ctx, "memory_recall", query="tabs postgres", limit=1)) == 1


def test_remember_redacts_and_reports_similar(registry: ToolRegistry, ctx: ToolContext) -> None:
    ok(registry, ctx, "memory_remember", label="one", content="deploy with make ship please")
    second = ok(
        registry, ctx, "memory_remember", label="two", content="please deploy with make ship"
    )
    assert [similar["label"] for similar in second["similar"]] == ["one"]
    secret = ok(
        registry,
        ctx,
        "memory_remember",
        label="token",
        content="the CI token is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    )
    assert secret["redactions"] == 1
    assert "a1B2c3D4" not in secret["memory"]["content"]


def test_recall_in_a_named_store_and_all(registry: ToolRegistry, ctx: ToolContext) -> None:
    ok(registry, ctx, "memory_remember", label="web", content="web uses vite", store="acme/web")
    assert ok(registry, ctx, "memory_recall", query="vite") == []
    assert [h["store"] for h in ok(registry, ctx, "memory_recall", query="vite", store="all")] == [
        "acme/web"
    ]
    found = ok(registry, ctx, "memory_recall", query="vite", store="acme/web")
    assert found[0]["label"] == "web"


def test_list_show_and_stores(registry: ToolRegistry, ctx: ToolContext) -> None:
    ok(registry, ctx, "memory_remember", label="tabs", content="indent with tabs")
    ok(registry, ctx, "memory_remember", label="web", content="web uses vite", store="acme/web")
    assert [m["label"] for m in ok(registry, ctx, "memory_list")] == ["tabs"]
    assert [m["label"] for m in ok(registry, ctx, "memory_list", store="all")] == ["web", "tabs"]
    shown = ok(registry, ctx, "memory_show", label="web", store="acme/web")
    assert shown["content"] == "web uses vite"
    assert shown["recall_count"] == 0
    stores = {info["name"]: info for info in ok(registry, ctx, "store_list")}
    assert stores["acme/web"]["memories"] == 1
    assert stores["global"]["current"] is False


def test_show_of_a_missing_memory_is_an_error_naming_it(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    message = failed(registry, ctx, "memory_show", label="nope")
    assert "no memory labelled 'nope'" in message


def test_archive_hides_from_recall_and_unarchive_brings_back(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    ok(registry, ctx, "memory_remember", label="tabs", content="indent with tabs")
    archived = ok(registry, ctx, "memory_archive", label="tabs")
    assert archived["action"] == "archived"
    assert archived["memory"]["archived"] is True
    assert ok(registry, ctx, "memory_recall", query="indent tabs") == []
    assert ok(registry, ctx, "memory_list") == []
    assert len(ok(registry, ctx, "memory_list", include_archived=True)) == 1
    back = ok(registry, ctx, "memory_archive", label="tabs", unarchive=True)
    assert (back["action"], back["memory"]["archived"]) == ("unarchived", False)
    assert ok(registry, ctx, "memory_recall", query="indent tabs")[0]["label"] == "tabs"


def test_forget_deletes_and_a_second_forget_fails(registry: ToolRegistry, ctx: ToolContext) -> None:
    ok(registry, ctx, "memory_remember", label="tabs", content="indent with tabs")
    forgotten = ok(registry, ctx, "memory_forget", label="tabs")
    assert (forgotten["action"], forgotten["memory"]["label"]) == ("forgotten", "tabs")
    assert ok(registry, ctx, "memory_list", include_archived=True) == []
    assert "no memory labelled 'tabs'" in failed(registry, ctx, "memory_forget", label="tabs")


def test_engine_errors_come_back_as_tool_errors(registry: ToolRegistry, ctx: ToolContext) -> None:
    assert "looks like a path" in failed(registry, ctx, "memory_remember", label="a/b", content="x")
    assert "store name 'no/such/store'" in failed(
        registry, ctx, "memory_recall", query="x", store="no/such/store"
    )


# -- upkeep --------------------------------------------------------------------


def test_duplicates_then_mark_checked(registry: ToolRegistry, ctx: ToolContext) -> None:
    ok(registry, ctx, "memory_remember", label="one", content="deploy with make ship")
    ok(registry, ctx, "memory_remember", label="two", content="ship with make deploy")
    ok(registry, ctx, "memory_remember", label="other", content="sessions live in postgres")
    pairs = ok(registry, ctx, "find_duplicates")
    assert len(pairs) == 1
    assert {pairs[0]["first"]["label"], pairs[0]["second"]["label"]} == {"one", "two"}
    assert pairs[0]["cosine"] >= 0.9
    marked = ok(registry, ctx, "dedup_mark_checked", label="one", other="two")
    assert marked == {
        "checked": True,
        "verdict": "different",
        "label": "one",
        "other": "two",
        "store": "global",
    }
    assert ok(registry, ctx, "find_duplicates", store="global") == []
    assert "'missing'" in failed(registry, ctx, "dedup_mark_checked", label="one", other="missing")


def test_hygiene_report(registry: ToolRegistry, ctx: ToolContext) -> None:
    ok(registry, ctx, "memory_remember", label="one", content="deploy with make ship")
    ok(registry, ctx, "memory_remember", label="two", content="ship with make deploy")
    report = ok(registry, ctx, "hygiene_report", days=30)
    assert report["stale_days"] == 30
    assert report["stale"] == []
    assert report["orphaned"] == []
    assert len(report["duplicates"]) == 1
    assert ok(registry, ctx, "hygiene_report")["stale_days"] == 90
    assert failed(registry, ctx, "hygiene_report", days=0) == (
        "argument 'days' must be an integer from 1 to 36500, got 0"
    )


def _queue(app: Runtime, session_id: str, count: int) -> None:
    event = Event(
        kind="tool_use",
        harness="claude",
        session_id=session_id,
        event_id=f"{session_id}-1",
        received_at=1.0,
    )
    interactions = [NewInteraction(f"Bash{n}", "{}", "ok") for n in range(count)]
    assert app.sessions.record(event, interactions)


def test_extraction_done_drains_only_its_session(
    registry: ToolRegistry, ctx: ToolContext, app: Runtime
) -> None:
    _queue(app, "s-1", 3)
    _queue(app, "s-2", 1)
    assert ok(registry, ctx, "extraction_done", session_id="s-1") == {
        "session_id": "s-1",
        "drained": 3,
    }
    assert app.sessions.pending("s-1") == []
    assert len(app.sessions.pending("s-2")) == 1
    assert ok(registry, ctx, "extraction_done", session_id="s-1")["drained"] == 0
    assert ok(registry, ctx, "extraction_done", session_id="never-seen")["drained"] == 0
    assert "missing required argument 'session_id'" in failed(registry, ctx, "extraction_done")


# -- decision model ------------------------------------------------------------

SITUATION = "reviewing a pull request that touches old code"
CHOICE = "leave unrelated debt alone"


def test_prediction_update_query_list_delete(
    registry: ToolRegistry, ctx: ToolContext, app: Runtime
) -> None:
    created = ok(
        registry,
        ctx,
        "prediction_update",
        matcher=SITUATION,
        prediction=CHOICE,
        signal="create",
        rationale="small diffs review faster",
    )
    assert created["outcome"] == "created"
    assert created["confidence"] == pytest.approx(0.5)
    confirmed = ok(
        registry, ctx, "prediction_update", matcher=SITUATION, prediction=CHOICE, signal="confirm"
    )
    assert confirmed["outcome"] == "reinforced"
    assert confirmed["confidence"] > created["confidence"]
    hits = ok(registry, ctx, "prediction_query", context=SITUATION, session_id="s-9")
    assert [hit["statement"] for hit in hits] == [CHOICE]
    assert hits[0]["tests"] == 1
    assert [fire.session for fire in ctx.thatch.decision_storage.fires()] == ["s-9"]
    listed = ok(registry, ctx, "prediction_list")
    assert [(p["id"], p["statement"]) for p in listed] == [(hits[0]["id"], CHOICE)]
    deleted = ok(registry, ctx, "prediction_delete", id=hits[0]["id"])
    assert (deleted["action"], deleted["prediction"]["statement"]) == ("deleted", CHOICE)
    assert ok(registry, ctx, "prediction_list") == []
    assert "no prediction with id" in failed(registry, ctx, "prediction_delete", id=hits[0]["id"])


def test_prediction_query_without_a_session_logs_no_showing(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    ok(registry, ctx, "prediction_update", matcher=SITUATION, prediction=CHOICE, signal="create")
    assert len(ok(registry, ctx, "prediction_query", context=SITUATION)) == 1
    assert ctx.thatch.decision_storage.fires() == []


def test_the_context_session_id_is_used_when_the_agent_gives_none(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    with_session = ToolContext(ctx.app, ctx.thatch, session_id="from-harness")
    ok(
        registry,
        with_session,
        "prediction_update",
        matcher=SITUATION,
        prediction=CHOICE,
        signal="create",
    )
    ok(registry, with_session, "prediction_query", context=SITUATION)
    assert [fire.session for fire in ctx.thatch.decision_storage.fires()] == ["from-harness"]


def test_prediction_arguments_are_checked(registry: ToolRegistry, ctx: ToolContext) -> None:
    assert failed(
        registry, ctx, "prediction_update", matcher=SITUATION, prediction=CHOICE, signal="yes"
    ) == ("argument 'signal' must be one of (create, confirm, disconfirm, soft), got 'yes'")
    assert failed(registry, ctx, "prediction_delete", id="3") == (
        "argument 'id' must be an integer of at least 1, got '3'"
    )


# -- the project a call comes from -----------------------------------------------


def _repo(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def test_the_project_folder_decides_the_store(registry: ToolRegistry, tmp_path: Path) -> None:
    # The harness names the project folder in the environment it starts us in.
    app = make_runtime(tmp_path / "home", thatch_sqlite.plugin, thatch_claude.plugin)
    repo = _repo(tmp_path / "web", "git@github.com:acme/web.git")
    in_repo = ToolContext(app, app.project(str(tmp_path), {"CLAUDE_PROJECT_DIR": str(repo)}))
    saved = ok(registry, in_repo, "memory_remember", label="build", content="npm run build")
    assert saved["memory"]["store"] == "acme/web"
    stores = {info["name"]: info["current"] for info in ok(registry, in_repo, "store_list")}
    assert stores == {"acme/web": True}
    assert ok(registry, in_repo, "memory_show", label="build")["store"] == "acme/web"
    app.close()
