"""thatch's MCP tools: the records, the argument checks and the registry.

``thatch mcp`` serves the tools of a :class:`ToolRegistry`; plugins add
their own :class:`Tool` records through the ``thatch_tools`` hook.
"""

from __future__ import annotations

from thatch.plugin.tool import Tool, ToolContext, ToolHandler
from thatch.tools.registry import ToolNameClashError, ToolOutcome, ToolRegistry, core_tools
from thatch.tools.validate import validate_arguments

__all__ = [
    "Tool",
    "ToolContext",
    "ToolHandler",
    "ToolNameClashError",
    "ToolOutcome",
    "ToolRegistry",
    "core_tools",
    "validate_arguments",
]
