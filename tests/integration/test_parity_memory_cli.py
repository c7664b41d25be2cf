"""Parity with the original's QA use cases: ``thatch remember``/``search`` and ``thatch mcp``.

The real console script, with the real model, in an isolated home.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from integration.conftest import Runner, as_json
from integration.test_mcp_server import Agent

THATCH = Path(sys.executable).with_name("thatch")
NOTE = "Deploys go through the staging database migration check first."


def test_uc001_saving_an_existing_label_is_refused(thatch: Runner) -> None:
    thatch("remember", "deploy", NOTE)
    refused = thatch("remember", "deploy", "Deploy on fridays.", check=False)
    assert refused.returncode == 2
    assert "'deploy' already exists in store global" in refused.stderr
    assert NOTE in refused.stderr
    assert "--overwrite" in refused.stderr
    assert "unchanged" in thatch("remember", "deploy", NOTE).stdout
    assert "updated" in thatch("remember", "deploy", "Deploy on fridays.", "--overwrite").stdout
    assert as_json(thatch("show", "deploy", "--json"))["content"] == "Deploy on fridays."


def test_uc001_import_refuses_an_existing_label_unless_overwrite(
    thatch: Runner, tmp_path: Path
) -> None:
    thatch("remember", "deploy", NOTE)
    lines = tmp_path / "memories.jsonl"
    lines.write_text('{"label": "deploy", "content": "Deploy on fridays.", "store": "global"}\n')
    refused = thatch("import", str(lines), check=False)
    assert refused.returncode == 2
    assert "line 1 'deploy' in global" in refused.stderr
    assert "--overwrite" in refused.stderr
    assert as_json(thatch("show", "deploy", "--json"))["content"] == NOTE
    assert "1 updated" in thatch("import", str(lines), "--overwrite").stdout
    assert "1 unchanged" in thatch("import", str(lines)).stdout


def test_uc004_an_unquoted_query_is_not_taken_for_a_store(thatch: Runner) -> None:
    thatch("remember", "deploy", NOTE, "--store", "acme/shop")
    words = thatch("search", "staging", "database", check=False)
    assert words.returncode != 0
    assert "quote them: thatch search 'staging database'" in words.stderr
    assert "the stores are: acme/shop, global" in words.stderr
    unknown = thatch("search", "staging", "bogus/store", check=False)
    assert unknown.returncode != 0
    assert "no store named 'bogus/store'; the stores are: acme/shop, global" in unknown.stderr
    for command in (["list", "bogus/store"], ["hygiene", "bogus/store"]):
        assert thatch(*command, check=False).returncode != 0, command
    assert "deploy" in thatch("search", "staging database", "acme/shop").stdout


def test_uc019_search_finds_archived_memories_with_archived(thatch: Runner) -> None:
    thatch("remember", "deploy", NOTE)
    thatch("archive", "deploy")
    assert as_json(thatch("search", "staging migration check", "--json")) == []
    [hit] = as_json(thatch("search", "staging migration check", "--json", "--archived"))
    assert hit["label"] == "deploy"


async def _agent_session(params: StdioServerParameters) -> None:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        agent = Agent(session)
        await agent.ok("memory_remember", label="deploy", content=NOTE)
        refused = await agent.error("memory_remember", label="deploy", content="Fridays.")
        assert "already exists" in refused
        assert "overwrite: true" in refused
        await agent.ok("memory_remember", label="deploy", content="Fridays.", overwrite=True)
        await agent.ok(
            "prediction_update",
            matcher="choosing a name for a new module",
            prediction="prefer a short noun",
            signal="create",
        )
        [listed] = await agent.ok("prediction_list")
        assert [m["description"] for m in listed["matchers"]] == [
            "choosing a name for a new module"
        ]
        assert [p["signal"] for p in listed["provenance"]] == ["create"]
        deleted = await agent.ok("prediction_delete", statement="prefer a short noun")
        assert deleted["prediction"]["id"] == listed["id"]


def test_uc001_uc022_through_a_real_mcp_client(home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-git"
    outside.mkdir()
    params = StdioServerParameters(
        command=str(THATCH),
        args=["mcp", "--in-process"],
        env={"THATCH_HOME": str(home)},
        cwd=outside,
    )
    anyio.run(_agent_session, params)
