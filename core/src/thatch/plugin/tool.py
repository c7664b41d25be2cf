"""What an MCP tool is: a name, a JSON Schema for its arguments and a handler.

Core's tools and the tools plugins contribute through ``thatch_tools`` are
the same :class:`Tool` records; :class:`thatch.tools.registry.ToolRegistry`
validates the arguments before a handler sees them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from thatch.api import Thatch
    from thatch.runtime import Runtime


@attrs.frozen
class ToolContext:
    """Where a tool call runs: the daemon's runtime and the caller's project."""

    #: The shared runtime (config, plugins, session store).
    app: Runtime
    #: The caller's project view: its repository store and branch.
    thatch: Thatch
    #: The agent session the call came from, when the caller knows it.
    session_id: str | None = None


#: A tool's handler: validated arguments in, JSON-able data (or attrs records) out.
#: It raises :class:`thatch.plugin.errors.ThatchError` for anything the agent can fix.
ToolHandler = Callable[[ToolContext, Mapping[str, Any]], Any]


@attrs.frozen
class Tool:
    """One MCP tool served by ``thatch mcp``."""

    name: str
    #: Written for the agent: when to call the tool and what it returns.
    description: str
    #: A JSON Schema object (the subset :mod:`thatch.tools.validate` checks).
    input_schema: Mapping[str, Any]
    handler: ToolHandler
    #: Only reads: the harness may call it without asking the user.
    read_only: bool = False
    #: May delete or overwrite something the user cannot get back.
    destructive: bool = False
    #: Calling it twice with the same arguments changes nothing more.
    idempotent: bool = False

    def describe(self) -> dict[str, Any]:
        """The tool as MCP's ``tools/list`` describes it (camelCase keys)."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": _plain(self.input_schema),
            "annotations": {
                "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive,
                "idempotentHint": self.idempotent,
                # thatch's tools touch only the local database.
                "openWorldHint": False,
            },
        }


def _plain(value: Any) -> Any:
    """A deep copy as plain dicts and lists, so callers cannot alter the tool's schema."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
