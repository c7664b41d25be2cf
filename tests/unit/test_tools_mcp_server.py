"""The MCP server over an in-process client: listing, forwarding, results and errors.

Also the daemon's side of a ``thatch mcp`` session (the same server over a
socket) and the relay's command line.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import thatch
import thatch_sqlite.plugin
from mcp import Client
from mcp_messages import INITIALIZE, INITIALIZED
from thatch import wire
from thatch.instructions import agent as agent_instructions
from thatch.mcp.server import (
    build_server,
    project_env,
    server_instructions,
    setup_check,
    structured,
)
from thatch.mcp_relay import ServerArgs, parse_args
from thatch.plugin.config import Config
from thatch.plugin.harness import HarnessBase
from thatch.plugin.setup import Scope, SetupContext
from thatch.plugins import Plugins
from thatch.runtime import Runtime
from thatch.setup import notice as setup_notice
from thatch.setup.notice import SetupCheck, check
from thatch.testing import plugins_with
from thatch.tools import ToolRegistry
from thatch.tools.backend import InProcessBackend, ToolBackend

ECHO_TOOL = {
    "name": "echo",
    "description": "Say it back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "annotations": {"readOnlyHint": True, "destructiveHint": False},
}


class FakeBackend:
    """Records calls and answers with whatever the test put in ``reply``."""

    def __init__(self, reply: dict[str, Any] | Exception) -> None:
        self.reply = reply
        self.calls: list[tuple[str, dict[str, Any], str, dict[str, str]]] = []

    def list_tools(self) -> list[dict[str, Any]]:
        return [ECHO_TOOL]

    def call(
        self, name: str, arguments: dict[str, Any], cwd: str, env: dict[str, str]
    ) -> dict[str, Any]:
        self.calls.append((name, arguments, cwd, env))
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def _session(backend: ToolBackend, **kwargs: Any) -> Any:
    """Run ``script(client)`` against a server on ``backend``; returns what it returns."""

    def run(script: Any) -> Any:
        async def main() -> Any:
            async with Client(build_server(backend, **kwargs)) as client:
                return await script(client)

        return anyio.run(main)

    return run


def test_tools_are_listed_from_the_backend() -> None:
    async def script(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = _session(FakeBackend({}))(script)
    assert [tool.name for tool in tools] == ["echo"]
    assert tools[0].input_schema == ECHO_TOOL["inputSchema"]
    assert tools[0].annotations is not None
    assert tools[0].annotations.read_only_hint is True


def test_a_call_carries_the_project_folder_and_returns_text_and_structure() -> None:
    backend = FakeBackend(
        {"result": [{"label": "a"}], "text": '[{"label": "a"}]', "is_error": False}
    )
    environ = {"CLAUDE_PROJECT_DIR": "/work/app", "CURSOR_PROJECT_DIR": "", "HOME": "/home/u"}

    async def script(client: Client) -> Any:
        return await client.call_tool("echo", {"text": "hi"})

    result = _session(backend, cwd="/somewhere", environ=environ)(script)
    assert backend.calls == [
        ("echo", {"text": "hi"}, "/somewhere", {"CLAUDE_PROJECT_DIR": "/work/app"})
    ]
    assert result.is_error is False
    assert [block.text for block in result.content] == ['[{"label": "a"}]']
    assert result.structured_content == {"items": [{"label": "a"}]}


def test_a_tool_error_is_an_error_result() -> None:
    backend = FakeBackend(
        {
            "result": {"error": "argument 'limit' must be..."},
            "text": "argument 'limit' must be...",
            "is_error": True,
        }
    )

    async def script(client: Client) -> Any:
        return await client.call_tool("echo", {"limit": "x"})

    result = _session(backend)(script)
    assert result.is_error is True
    assert result.content[0].text == "argument 'limit' must be..."


def test_a_backend_failure_is_an_error_result_not_a_crash(caplog: pytest.LogCaptureFixture) -> None:
    backend = FakeBackend(OSError("socket gone"))

    async def script(client: Client) -> Any:
        return await client.call_tool("echo", {})

    result = _session(backend)(script)
    assert result.is_error is True
    assert result.content[0].text == "echo could not run: socket gone"
    assert result.structured_content == {"error": "echo could not run: socket gone"}
    assert "tool echo could not run" in caplog.text


def test_the_server_introduces_itself_with_instructions() -> None:
    server = build_server(FakeBackend({}))
    assert (server.name, server.version) == ("thatch", thatch.__version__)
    assert server.instructions == agent_instructions.instructions()
    assert build_server(FakeBackend({}), instructions="short").instructions == "short"


def test_the_setup_notice_comes_before_the_instructions() -> None:
    broken = SetupCheck("cursor", "thatch: the Cursor setup is incomplete", None)
    assert server_instructions(broken) == (
        f"thatch: the Cursor setup is incomplete\n\n{agent_instructions.instructions()}"
    )
    set_up = SetupCheck("cursor", "", "project", frozenset({"project"}))
    assert server_instructions(set_up) == agent_instructions.POINTER


def test_a_setup_check_that_fails_leaves_the_whole_instructions(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(home: str | None, environ: object) -> SetupCheck:
        raise RuntimeError("unreadable settings")

    monkeypatch.setattr(setup_notice, "check", broken)
    check = setup_check(None, {"THATCH_HARNESS": "cursor"})
    assert check == SetupCheck("cursor", "", None)
    assert server_instructions(check) == agent_instructions.instructions()
    assert "could not check the harness setup" in caplog.text


class FakeTarget(HarnessBase):
    """A harness whose setup has a problem in the scopes listed in ``broken``."""

    name = "cursor"
    title = "Cursor"
    instruction_scopes: frozenset[Scope] = frozenset({"project"})

    def __init__(self, broken: set[str]) -> None:
        self.broken = broken

    def problems(self, context: SetupContext) -> list[str]:
        return [f"the {context.scope} setup lacks a rule"] if context.scope in self.broken else []


@pytest.mark.parametrize(
    ("broken", "scope"),
    [(set(), "project"), ({"project"}, "global"), ({"project", "global"}, None)],
)
def test_the_setup_check_names_the_first_complete_scope(
    monkeypatch: pytest.MonkeyPatch, home: Path, broken: set[str], scope: str | None
) -> None:
    class Loaded:
        def harnesses(self) -> dict[str, FakeTarget]:
            return {"cursor": FakeTarget(broken)}

    monkeypatch.setattr(Plugins, "load", classmethod(lambda cls, config, environ=None: Loaded()))
    found = check(str(home), {"THATCH_HARNESS": "cursor", "HOME": str(home)})
    assert (found.harness, found.complete_scope) == ("cursor", scope)
    # Cursor's rule file carries the instructions in a project setup only.
    assert found.instruction_scopes == {"project"}
    if scope is None:
        # Either complete scope would do, so the notice lists the project's problems.
        assert "- the project setup lacks a rule\n" in found.notice
        assert "thatch setup --cursor" in found.notice
    else:
        assert found.notice == ""


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["mcp"], ServerArgs()),
        (["mcp", "--in-process"], ServerArgs(in_process=True)),
        (["--home", "/h", "mcp"], ServerArgs(home="/h")),
        (["mcp", "--home=/h", "--in-process"], ServerArgs(home="/h", in_process=True)),
        # argparse's to answer: help, errors, other commands.
        (["mcp", "--help"], None),
        (["--in-process", "mcp"], None),
        (["mcp", "--home"], None),
        (["mcp", "mcp"], None),
        (["mcp", "--in-proc"], None),
        (["search", "mcp"], None),
        ([], None),
    ],
)
def test_the_fast_path_reads_only_plain_mcp_command_lines(
    argv: list[str], expected: ServerArgs | None
) -> None:
    assert parse_args(argv) == expected


@pytest.mark.parametrize(
    ("result", "is_error", "expected"),
    [
        ({"a": 1}, False, {"a": 1}),
        ([1, 2], False, {"items": [1, 2]}),
        (3, False, {"value": 3}),
        (None, False, None),
        (None, True, {"error": "boom"}),
    ],
)
def test_structured_content_is_always_an_object(result: Any, is_error: bool, expected: Any) -> None:
    assert structured(result, "boom", is_error) == expected


def test_project_env_keeps_only_the_project_variables() -> None:
    environ = {"CURSOR_PROJECT_DIR": "/c", "CLAUDE_PROJECT_DIR": "", "PATH": "/bin"}
    assert project_env(environ) == {"CURSOR_PROJECT_DIR": "/c"}


# -- the in-process backend ------------------------------------------------------


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Runtime]:
    runtime = Runtime(
        Config.load(tmp_path / "home", environ={}), plugins_with(thatch_sqlite.plugin)
    )
    yield runtime
    runtime.close()


def test_in_process_backend_runs_tools_for_the_callers_project(
    app: Runtime, tmp_path: Path
) -> None:
    backend = InProcessBackend(app=app)
    assert backend.list_tools() == ToolRegistry().describe()
    reply = backend.call(
        "memory_remember", {"label": "tabs", "content": "indent with tabs"}, str(tmp_path), {}
    )
    assert reply["is_error"] is False
    assert reply["result"]["memory"]["store"] == "global"
    bad = backend.call("memory_recall", {"query": "tabs", "limit": "x"}, str(tmp_path), {})
    assert bad == {
        "result": {"error": "argument 'limit' must be an integer from 1 to 50, got 'x'"},
        "text": "argument 'limit' must be an integer from 1 to 50, got 'x'",
        "is_error": True,
    }
    backend.close()
    # A runtime it was given is the caller's to close.
    assert backend.call("store_list", {}, str(tmp_path), {})["is_error"] is False


def test_in_process_backend_through_the_server(app: Runtime, tmp_path: Path) -> None:
    async def script(client: Client) -> Any:
        await client.call_tool("memory_remember", {"label": "tabs", "content": "indent with tabs"})
        return await client.call_tool("memory_recall", {"query": "indent tabs"})

    result = _session(InProcessBackend(app=app), cwd=str(tmp_path), environ={})(script)
    assert result.is_error is False
    assert [hit["label"] for hit in result.structured_content["items"]] == ["tabs"]


def test_the_check_takes_the_callers_folder_and_given_targets(tmp_path: Path) -> None:
    seen: list[Path | None] = []

    class Recording(FakeTarget):
        def problems(self, context: SetupContext) -> list[str]:
            seen.append(context.project)
            return []

    found = check(None, {"THATCH_HARNESS": "cursor"}, cwd=str(tmp_path), targets=[Recording(set())])
    assert (found.harness, found.notice, found.complete_scope) == ("cursor", "", "project")
    # The caller's folder, not this process's working directory.
    assert seen == [tmp_path]
    missing = check(None, {"THATCH_HARNESS": "cursor"}, cwd=str(tmp_path), targets=[])
    assert "the cursor plugin is not installed" in missing.notice


# -- the daemon's side of a session ----------------------------------------------


def test_a_daemon_session_serves_the_tools_over_its_connection(
    app: Runtime, tmp_path: Path
) -> None:
    from thatch.daemon.mcp_session import McpSession

    request = {
        "op": "mcp",
        "cwd": str(tmp_path),
        "env": {"THATCH_HARNESS": "cursor", "PATH": "/elsewhere", "HOME": 7},
    }
    session = McpSession(InProcessBackend(app=app), request, targets=[])
    # Only the variables thatch mcp forwards, and only strings.
    assert session.env == {"THATCH_HARNESS": "cursor"}
    assert "the cursor plugin is not installed" in session.notice
    daemon_end, relay_end = socket.socketpair()
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "memory_remember", "arguments": {"label": "tabs", "content": "tabs"}},
    }
    # The initialize request came in the same packet as the opening line.
    serving = threading.Thread(target=session.serve, args=(daemon_end, wire.encode(INITIALIZE)))
    serving.start()
    with relay_end, daemon_end:
        relay_end.sendall(wire.encode(INITIALIZED) + wire.encode(call))
        lines = wire.LineReader(relay_end)
        initialized = wire.decode(lines.line())
        called = wire.decode(lines.line())
        relay_end.shutdown(socket.SHUT_WR)
        serving.join(30)
        assert not serving.is_alive()
    assert initialized["result"]["serverInfo"]["name"] == "thatch"
    assert initialized["result"]["instructions"].startswith(session.notice)
    assert called["id"] == 2
    assert called["result"]["isError"] is False
    assert called["result"]["structuredContent"]["memory"]["store"] == "global"
    assert [m.label for m in app.project(str(tmp_path)).list()] == ["tabs"]


def test_a_session_whose_relay_vanished_ends_quietly(
    app: Runtime, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from thatch.daemon.mcp_session import McpSession

    session = McpSession(InProcessBackend(app=app), {"cwd": str(tmp_path)}, targets=[])
    daemon_end, relay_end = socket.socketpair()
    relay_end.close()
    with daemon_end:
        session.serve(daemon_end, wire.encode(INITIALIZE))
    assert "MCP session failed" not in caplog.text
