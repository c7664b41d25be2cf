"""``thatch mcp`` driven by the official MCP client over stdio, and what it loads to start.

One server start (the real model loads once) serves the whole sequence:
every tool is listed with its annotations and called successfully, and bad
arguments come back as error results that name the argument; through the
relay to the daemon's server, and with ``--in-process``. Then the relay's
own promises: it starts on the standard library, a session outlives
``thatch daemon stop``, and with no daemon the server runs in-process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_messages import INITIALIZE
from thatch.daemon.client import DaemonClient

from integration.conftest import Runner, daemon_pid, make_repo

THATCH = Path(sys.executable).with_name("thatch")

READ_ONLY = {
    "memory_recall",
    "memory_list",
    "memory_show",
    "store_list",
    "find_duplicates",
    "hygiene_report",
    "prediction_list",
}
WRITES = {
    # With a session it logs a showing of each prediction returned.
    "prediction_query",
    "memory_remember",
    "memory_forget",
    "memory_archive",
    "dedup_mark_checked",
    "extraction_done",
    "prediction_update",
    "prediction_delete",
}
DESTRUCTIVE = {"memory_forget", "prediction_delete"}

TEST_COMMAND = (
    "Run the test suite with 'uv run pytest -q'; the integration tests need the "
    "embedding model files installed."
)
TABS = "The user prefers tabs over spaces for indentation in Python files."
TABS_AGAIN = "In Python files the user prefers tabs over spaces for indentation."


class Agent:
    """A client session with helpers that check each result."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def ok(self, name: str, **arguments: Any) -> Any:
        result = await self.session.call_tool(name, arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        assert result.is_error is False, f"{name}: {text}"
        data = json.loads(text)
        expected = {"items": data} if isinstance(data, list) else data
        assert result.structured_content == expected
        return data

    async def error(self, name: str, **arguments: Any) -> str:
        result = await self.session.call_tool(name, arguments)
        assert result.is_error is True, f"{name} should have failed"
        return str(result.content[0].text)  # type: ignore[union-attr]


async def _check_listing(session: ClientSession) -> None:
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) >= READ_ONLY | WRITES
    for name in READ_ONLY | WRITES:
        hints = tools[name].annotations
        assert hints is not None, name
        assert hints.read_only_hint is (name in READ_ONLY), name
        assert hints.destructive_hint is (name in DESTRUCTIVE), name
        assert hints.open_world_hint is False, name
        assert tools[name].input_schema["type"] == "object"


async def _memories(agent: Agent) -> None:
    saved = await agent.ok("memory_remember", label="test-command", content=TEST_COMMAND)
    # CLAUDE_PROJECT_DIR (a clone of acme/web) decides the store, not the cwd.
    assert (saved["action"], saved["memory"]["store"]) == ("created", "acme/web")
    await agent.ok("memory_remember", label="tabs", content=TABS, store="global")
    again = await agent.ok(
        "memory_remember", label="tabs-python", content=TABS_AGAIN, store="global"
    )
    assert [similar["label"] for similar in again["similar"]] == ["tabs"]

    hits = await agent.ok("memory_recall", query="how do I run the tests?")
    assert hits[0]["label"] == "test-command"
    assert hits[0]["relevant"] is True
    listed = await agent.ok("memory_list")
    assert {(m["store"], m["label"]) for m in listed} == {
        ("acme/web", "test-command"),
        ("global", "tabs"),
        ("global", "tabs-python"),
    }
    shown = await agent.ok("memory_show", label="test-command")
    assert shown["content"] == TEST_COMMAND
    assert shown["recall_count"] == 1

    archived = await agent.ok("memory_archive", label="test-command")
    assert archived["memory"]["archived"] is True
    hits = await agent.ok("memory_recall", query="how do I run the tests?", store="acme/web")
    assert hits == []
    back = await agent.ok("memory_archive", label="test-command", unarchive=True)
    assert back["memory"]["archived"] is False

    stores = {info["name"]: info for info in await agent.ok("store_list")}
    assert stores["acme/web"]["current"] is True
    assert stores["global"]["memories"] == 2


async def _upkeep(agent: Agent) -> None:
    pairs = await agent.ok("find_duplicates")
    assert [(p["first"]["store"], {p["first"]["label"], p["second"]["label"]}) for p in pairs] == [
        ("global", {"tabs", "tabs-python"})
    ]
    marked = await agent.ok("dedup_mark_checked", label="tabs", other="tabs-python", store="global")
    assert marked["checked"] is True
    assert await agent.ok("find_duplicates", store="global") == []
    report = await agent.ok("hygiene_report")
    assert (report["stale_days"], report["duplicates"], report["stale"]) == (90, [], [])
    done = await agent.ok("extraction_done", session_id="a-session-never-seen")
    assert done == {"session_id": "a-session-never-seen", "drained": 0}


async def _predictions(agent: Agent) -> None:
    created = await agent.ok(
        "prediction_update",
        matcher="choosing a name for a new module",
        prediction="prefer a short noun",
        signal="create",
        rationale="short names read well in imports",
    )
    assert created["outcome"] == "created"
    hits = await agent.ok(
        "prediction_query", context="choosing a name for the new parser module", limit=3
    )
    assert [hit["statement"] for hit in hits] == ["prefer a short noun"]
    listed = await agent.ok("prediction_list")
    assert [p["id"] for p in listed] == [hits[0]["id"]]
    deleted = await agent.ok("prediction_delete", id=hits[0]["id"])
    assert deleted["prediction"]["statement"] == "prefer a short noun"
    assert await agent.ok("prediction_list") == []


async def _bad_arguments(agent: Agent) -> None:
    assert await agent.error("memory_recall", query="tests", limit="x") == (
        "argument 'limit' must be an integer from 1 to 50, got 'x'"
    )
    assert (await agent.error("memory_show")).startswith("missing required argument 'label'")
    assert "unknown argument 'lable'" in await agent.error(
        "memory_remember", lable="x", content="y"
    )
    assert "'signal'" in await agent.error(
        "prediction_update", matcher="m", prediction="p", signal="maybe"
    )


async def _session(params: StdioServerParameters) -> None:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        initialized = await session.initialize()
        assert initialized.server_info.name == "thatch"
        assert "memory_recall" in (initialized.instructions or "")
        await _check_listing(session)
        agent = Agent(session)
        await _memories(agent)
        await _upkeep(agent)
        await _predictions(agent)
        await _bad_arguments(agent)
        forgotten = await agent.ok("memory_forget", label="test-command")
        assert forgotten["memory"]["label"] == "test-command"
        assert "no memory labelled 'test-command'" in await agent.error(
            "memory_show", label="test-command"
        )


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["daemon", "in-process"])
def test_every_tool_through_a_real_mcp_client(home: Path, tmp_path: Path, mode: str) -> None:
    repo = make_repo(tmp_path / "web", "git@github.com:acme/web.git")
    outside = tmp_path / "outside-git"
    outside.mkdir()
    params = StdioServerParameters(
        command=str(THATCH),
        args=["mcp", "--in-process"] if mode == "in-process" else ["mcp"],
        env={"THATCH_HOME": str(home), "CLAUDE_PROJECT_DIR": str(repo)},
        cwd=outside,
    )
    client = DaemonClient(str(home))
    try:
        anyio.run(_session, params)
        # The tools ran in the shared daemon, which `thatch mcp` started on demand.
        assert client.running() is (mode == "daemon")
    finally:
        client.stop()


#: The console script's ``thatch mcp`` in a fresh interpreter; the modules it
#: loaded go to stderr, with their files, when stdin closes.
REPORT_IMPORTS = """
import sys
before = set(sys.modules)
import atexit, json
atexit.register(lambda: print(json.dumps({
    name: getattr(sys.modules[name], "__file__", None) or ""
    for name in sorted(set(sys.modules) - before)
}), file=sys.stderr))
sys.argv = ["thatch", "mcp"]
from thatch.cli import console_main
console_main()
"""

#: What the relay may load of thatch; everything else is the standard library.
RELAY_MODULES = {
    "thatch",
    "thatch.cli",
    "thatch.plugin",  # its lazy package, for the next
    "thatch.plugin.errors",  # the console script's error wrapper
    "thatch.hookcmd",
    "thatch.hookcmd.args",
    "thatch.hookcmd.answers",  # the hook table: which variables the harnesses set
    "thatch.mcp_relay",
    "thatch.mcp_relay.connect",
    "thatch.mcp_relay.pump",
    "thatch.private",  # the console script's umask
    "thatch.rundir",
    "thatch.socketguard",
    "thatch.unicode_fix",
    "thatch.wire",
}


def _clean_env(home: Path, user_home: Path) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("THATCH_", "CLAUDE", "CURSOR_", "OPENCODE"))
    }
    env.update({"THATCH_HOME": str(home), "HOME": str(user_home)})
    return env


@pytest.mark.slow
@pytest.mark.parametrize("harness", [None, "claude"])
def test_the_relay_starts_on_the_standard_library_only(
    daemon: DaemonClient, home: Path, tmp_path: Path, harness: str | None
) -> None:
    env = _clean_env(home, tmp_path)
    if harness:
        env["THATCH_HARNESS"] = harness
    done = subprocess.run(
        [sys.executable, "-c", REPORT_IMPORTS],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=True,
    )
    answer = json.loads(done.stdout.splitlines()[0])
    # The daemon's server answered, with the setup notice of the relay's harness.
    assert answer["result"]["serverInfo"]["name"] == "thatch"
    instructions = answer["result"]["instructions"]
    assert "memory_recall" in instructions
    assert instructions.startswith("thatch: the Claude Code setup is incomplete") is bool(harness)
    loaded: dict[str, str] = json.loads(done.stderr.splitlines()[-1])
    third_party = sorted(name for name, path in loaded.items() if "site-packages" in path)
    assert third_party == []
    # The notice is also logged, through the standard-library log writer.
    allowed = RELAY_MODULES | ({"thatch.logfile"} if harness else set())
    assert sorted(n for n in loaded if n.split(".")[0] == "thatch" and n not in allowed) == []
    assert ("thatch mcp: WARNING thatch: the Claude Code setup" in done.stderr) is bool(harness)


async def _survive_a_stop(params: StdioServerParameters, stop: Any) -> tuple[Any, Any]:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        agent = Agent(session)
        saved = await agent.ok("memory_remember", label="tabs", content=TABS, store="global")
        await anyio.to_thread.run_sync(stop)
        # The same session, a new daemon: started, handed the handshake, asked.
        listed = await agent.ok("memory_list")
        tools = (await session.list_tools()).tools
        return saved, (listed, tools)


@pytest.mark.slow
def test_a_session_survives_a_daemon_stop(
    daemon: DaemonClient, home: Path, tmp_path: Path, thatch: Runner
) -> None:
    params = StdioServerParameters(
        command=str(THATCH), args=["mcp"], env=_clean_env(home, tmp_path), cwd=tmp_path
    )
    first = daemon_pid(daemon)
    stopped: list[str] = []

    def stop() -> None:
        stopped.append(thatch("daemon", "stop").stdout.strip())
        assert not daemon.running()

    saved, (listed, tools) = anyio.run(_survive_a_stop, params, stop)
    assert stopped == ["daemon stopped"]
    assert saved["action"] == "created"
    assert [(m["store"], m["label"]) for m in listed] == [("global", "tabs")]
    assert "memory_recall" in {tool.name for tool in tools}
    assert daemon.running()
    assert daemon_pid(daemon) not in (None, first)


@pytest.mark.slow
def test_with_no_daemon_and_no_autostart_the_server_runs_in_process(
    home: Path, tmp_path: Path
) -> None:
    env = {**_clean_env(home, tmp_path), "THATCH_NO_AUTOSTART": "1"}
    errors = tmp_path / "stderr.txt"

    async def session() -> tuple[str, Any]:
        params = StdioServerParameters(command=str(THATCH), args=["mcp"], env=env, cwd=tmp_path)
        with errors.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                initialized = await client.initialize()
                agent = Agent(client)
                await agent.ok("memory_remember", label="tabs", content=TABS, store="global")
                return initialized.instructions or "", await agent.ok("memory_list")

    instructions, listed = anyio.run(session)
    assert "memory_recall" in instructions
    assert [(m["store"], m["label"]) for m in listed] == [("global", "tabs")]
    assert not DaemonClient(str(home)).running()
    logged = errors.read_text()
    assert "thatch mcp: WARNING the daemon is unavailable" in logged
    assert "THATCH_NO_AUTOSTART" in logged
    assert "running tools in this process" in logged
