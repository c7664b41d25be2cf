"""The tool registry: plugins' tools, name clashes, and calls that never raise."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
import thatch_sqlite.plugin
from thatch import hookimpl
from thatch.plugin.config import Config
from thatch.plugin.errors import NotFoundError
from thatch.runtime import Runtime
from thatch.testing import plugins_with
from thatch.tools import Tool, ToolContext, ToolNameClashError, ToolOutcome, ToolRegistry
from thatch.tools.schema import arguments, string


def make_runtime(home: Path) -> Runtime:
    """A runtime on SQLite in ``home`` with the word-hash embedder and no other plugin."""
    return Runtime(Config.load(home, environ={}), plugins_with(thatch_sqlite.plugin))


def _echo(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    return {"said": args["text"], "store": ctx.thatch.default_store}


ECHO = Tool(
    name="echo",
    description="Say the text back.",
    input_schema=arguments({"text": string("what to say")}, "text"),
    handler=_echo,
    read_only=True,
)


def _tool(name: str, handler: Any) -> Tool:
    return Tool(name=name, description="test tool", input_schema=arguments({}), handler=handler)


@pytest.fixture
def app(tmp_path: Path) -> Iterable[Runtime]:
    runtime = make_runtime(tmp_path / "home")
    yield runtime
    runtime.close()


@pytest.fixture
def ctx(app: Runtime, tmp_path: Path) -> ToolContext:
    return ToolContext(app, app.project(str(tmp_path)))


def test_extra_tools_are_listed_after_core_and_run(ctx: ToolContext) -> None:
    registry = ToolRegistry([ECHO])
    assert registry.names()[-1] == "echo"
    assert registry.names()[0] == "memory_remember"
    assert registry.get("echo") is ECHO
    outcome = registry.call("echo", {"text": "hi"}, ctx)
    assert outcome == ToolOutcome(
        data={"said": "hi", "store": "global"}, text='{"said": "hi", "store": "global"}'
    )


def test_plugin_tools_come_from_the_hook(app: Runtime, ctx: ToolContext) -> None:
    class EchoPlugin:
        @hookimpl
        def thatch_tools(self) -> list[Tool]:
            return [ECHO]

    app.plugins.manager.register(EchoPlugin(), name="echo-plugin")
    registry = ToolRegistry.from_plugins(app.plugins)
    assert "echo" in registry.names()
    assert registry.call("echo", {"text": "yo"}, ctx).data["said"] == "yo"


def test_a_clash_with_a_core_tool_is_refused_with_the_name() -> None:
    with pytest.raises(ToolNameClashError, match="two tools are named 'memory_recall'"):
        ToolRegistry([_tool("memory_recall", _echo)])


def test_a_clash_between_plugins_is_refused() -> None:
    with pytest.raises(ToolNameClashError, match="'echo'"):
        ToolRegistry([ECHO, ECHO])


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dot.ted"])
def test_names_mcp_refuses_are_refused(name: str) -> None:
    with pytest.raises(ToolNameClashError, match="not valid for MCP"):
        ToolRegistry([_tool(name, _echo)])


def test_a_schema_that_is_not_an_object_is_refused() -> None:
    tool = Tool(name="bad", description="d", input_schema={"type": "string"}, handler=_echo)
    with pytest.raises(ToolNameClashError, match="'bad'"):
        ToolRegistry([tool])


def test_an_unknown_tool_is_an_error_listing_the_tools(ctx: ToolContext) -> None:
    outcome = ToolRegistry().call("memory_recal", {}, ctx)
    assert outcome.is_error
    assert outcome.text.startswith("unknown tool 'memory_recal'; the tools are: memory_remember,")


def test_bad_arguments_never_reach_the_handler(ctx: ToolContext) -> None:
    def must_not_run(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
        raise AssertionError("handler ran")

    tool = Tool(
        name="strict",
        description="d",
        input_schema=arguments({"text": string("t")}, "text"),
        handler=must_not_run,
    )
    outcome = ToolRegistry([tool]).call("strict", {"txt": "a"}, ctx)
    assert outcome.is_error
    assert "missing required argument 'text'" in outcome.text
    assert "unknown argument 'txt'" in outcome.text


def test_thatch_errors_become_their_message(ctx: ToolContext) -> None:
    def missing(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
        raise NotFoundError("no memory labelled 'x'; see the labels with memory_list")

    outcome = ToolRegistry([_tool("missing", missing)]).call("missing", {}, ctx)
    assert outcome == ToolOutcome.error("no memory labelled 'x'; see the labels with memory_list")
    assert outcome.data == {"error": outcome.text}


def test_unexpected_errors_are_short_and_logged(
    ctx: ToolContext, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
        raise RuntimeError("disk on fire " + "x" * 1000)

    with caplog.at_level(logging.ERROR, logger="thatch"):
        outcome = ToolRegistry([_tool("broken", broken)]).call("broken", None, ctx)
    assert outcome.is_error
    assert outcome.text.startswith("broken failed unexpectedly (RuntimeError: disk on fire")
    assert len(outcome.text) < 400
    assert "thatch's log" in outcome.text
    assert [record.message for record in caplog.records] == ["tool broken failed"]
    assert caplog.records[0].exc_info is not None


def test_attrs_records_are_returned_as_plain_data(ctx: ToolContext) -> None:
    @attrs.frozen
    class Answer:
        value: int
        words: tuple[str, ...]

    outcome = ToolRegistry([_tool("rec", lambda ctx, args: [Answer(1, ("a",))])]).call(
        "rec", {}, ctx
    )
    assert outcome.data == [{"value": 1, "words": ["a"]}]
    assert outcome.to_wire() == {
        "result": [{"value": 1, "words": ["a"]}],
        "text": '[{"value": 1, "words": ["a"]}]',
        "is_error": False,
    }
