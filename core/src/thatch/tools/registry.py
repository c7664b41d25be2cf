"""Every tool ``thatch mcp`` serves, and how one call is run.

A call never raises: bad arguments, errors the agent can fix and bugs all
come back as a :class:`ToolOutcome` with ``is_error`` set and a message the
agent can act on, because an MCP tool error must reach the model as text.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from thatch.plugin.errors import ThatchError
from thatch.plugin.tool import Tool, ToolContext
from thatch.serialize import to_json_data
from thatch.tools import decisions, maintenance, memory
from thatch.tools.validate import validate_arguments

if TYPE_CHECKING:
    from thatch.plugins import Plugins

log = logging.getLogger("thatch")

#: What MCP clients accept as a tool name.
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: An unexpected error's message is cut here: the details are in the log.
_SHORT = 300


class ToolNameClashError(ThatchError):
    """Two tools (core's or plugins') have the same name, or a name MCP refuses."""


@attrs.frozen
class ToolOutcome:
    """The result of one tool call, as the MCP server returns it."""

    #: JSON-able data: the tool's result, or ``{"error": message}``.
    data: Any
    #: What the agent reads: the data as JSON text, or the error message.
    text: str
    is_error: bool = False

    @classmethod
    def success(cls, data: Any) -> ToolOutcome:
        """An outcome for ``data`` (attrs records are turned into plain data)."""
        plain = to_json_data(data)
        return cls(data=plain, text=json.dumps(plain, ensure_ascii=False))

    @classmethod
    def error(cls, message: str) -> ToolOutcome:
        """A failed call with a message for the agent."""
        return cls(data={"error": message}, text=message, is_error=True)

    def to_wire(self) -> dict[str, Any]:
        """The ``{"result", "text", "is_error"}`` dict a tool backend returns."""
        return {"result": self.data, "text": self.text, "is_error": self.is_error}


def core_tools() -> list[Tool]:
    """thatch's own tools, memory first."""
    return [*memory.TOOLS, *maintenance.TOOLS, *decisions.TOOLS]


class ToolRegistry:
    """Core's tools plus plugins' tools, by name."""

    def __init__(self, extra: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in [*core_tools(), *extra]:
            self._add(tool)

    @classmethod
    def from_plugins(cls, plugins: Plugins) -> ToolRegistry:
        """Core's tools plus every tool the loaded plugins contribute (``thatch_tools``)."""
        return cls(plugins.tools())

    def _add(self, tool: Tool) -> None:
        if not _TOOL_NAME.fullmatch(tool.name):
            raise ToolNameClashError(
                f"tool name {tool.name!r} is not valid for MCP; use 1 to 64 letters, digits, "
                "'_' or '-'"
            )
        if tool.name in self._tools:
            raise ToolNameClashError(
                f"two tools are named {tool.name!r}; a plugin's thatch_tools must use a name "
                "of its own (rename the tool, or block the plugin under [plugins] blocked in "
                "the config file)"
            )
        if tool.input_schema.get("type") != "object":
            raise ToolNameClashError(
                f"tool {tool.name!r} has an input schema that is not of type 'object'; "
                "MCP needs an object of named arguments"
            )
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        """The tool names, in the order they are listed."""
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, if any."""
        return self._tools.get(name)

    def describe(self) -> list[dict[str, Any]]:
        """Every tool as MCP's ``tools/list`` describes it."""
        return [tool.describe() for tool in self._tools.values()]

    def call(self, name: str, arguments: Mapping[str, Any] | None, ctx: ToolContext) -> ToolOutcome:
        """Validate the arguments and run the tool; never raises."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolOutcome.error(
                f"unknown tool {name!r}; the tools are: {', '.join(self._tools)}"
            )
        try:
            checked = validate_arguments(tool.input_schema, arguments)
            return ToolOutcome.success(tool.handler(ctx, checked))
        except ThatchError as exc:
            return ToolOutcome.error(str(exc))
        except Exception as exc:
            log.exception("tool %s failed", name)
            detail = f"{type(exc).__name__}: {exc}"
            if len(detail) > _SHORT:
                detail = detail[: _SHORT - 1] + "…"
            return ToolOutcome.error(
                f"{name} failed unexpectedly ({detail}); the traceback is in thatch's log"
            )
