"""Where MCP tool calls run: a backend on the daemon's runtime or on one of this process's.

The daemon's MCP sessions and ``thatch mcp --in-process`` serve the same
tools through :class:`InProcessBackend`; the MCP server (:mod:`thatch.mcp.server`)
sees only the :class:`ToolBackend` protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from thatch.runtime import Runtime
    from thatch.tools.registry import ToolRegistry


class ToolBackend(Protocol):
    """Where tool calls run: :class:`InProcessBackend`, on the daemon's runtime or this one's."""

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool as MCP's ``tools/list`` describes it."""
        ...

    def call(
        self, name: str, arguments: dict[str, Any], cwd: str, env: dict[str, str]
    ) -> dict[str, Any]:
        """Run one tool for the project at ``cwd``/``env``: ``{"result", "text", "is_error"}``."""
        ...


class InProcessBackend:
    """Tools run in this process, on a runtime of its own or one it is given (the daemon's)."""

    def __init__(
        self,
        home: str | None = None,
        *,
        app: Runtime | None = None,
        registry: ToolRegistry | None = None,
    ) -> None:
        from thatch.tools.registry import ToolRegistry

        self._owns_app = app is None
        if app is None:
            from thatch.plugin.config import Config
            from thatch.plugins import Plugins
            from thatch.runtime import Runtime

            config = Config.load(home)
            app = Runtime(config, Plugins.load(config))
        self.app = app
        self.registry = registry or ToolRegistry(app.plugins.tools())

    def list_tools(self) -> list[dict[str, Any]]:
        return self.registry.describe()

    def call(
        self, name: str, arguments: dict[str, Any], cwd: str, env: dict[str, str]
    ) -> dict[str, Any]:
        from thatch.plugin.errors import ThatchError
        from thatch.plugin.tool import ToolContext
        from thatch.tools.registry import ToolOutcome

        try:
            project = self.app.project(cwd, env)
        except ThatchError as exc:
            # The storage could not open: every tool would fail the same way.
            return ToolOutcome.error(str(exc)).to_wire()
        context = ToolContext(self.app, project)
        return self.registry.call(name, arguments, context).to_wire()

    def close(self) -> None:
        """Close the runtime if this backend created it."""
        if self._owns_app:
            self.app.close()
