"""thatch's MCP server: the official SDK's low-level server with thatch's tools.

It runs in the daemon, one per ``thatch mcp`` session
(:mod:`thatch.daemon.mcp_session`; ``thatch mcp`` itself only relays bytes,
see :mod:`thatch.mcp_relay`), or in the ``thatch mcp`` process with
``--in-process`` or when no daemon can run. Its tools run in a
:class:`ToolBackend`, on the daemon's runtime or this process's. Each call
carries the caller's project folder (``CLAUDE_PROJECT_DIR``, else
``CURSOR_PROJECT_DIR``, else the working directory), which decides the
memory store.

On stdio, stdout carries only protocol messages; logs go to stderr and
thatch's log file.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import thatch

# The SDK, the tool registry and the runtime load where they are used: the
# daemon imports this module before its first MCP session.
if TYPE_CHECKING:
    import argparse

    from anyio import AsyncFile
    from mcp.server.lowlevel import Server

    from thatch.mcp_relay import ServerArgs
    from thatch.runtime import Runtime
    from thatch.setup.model import SetupTarget
    from thatch.setup.notice import SetupCheck
    from thatch.tools.registry import ToolRegistry

log = logging.getLogger("thatch")

#: Environment variables that name the project; forwarded with every call.
PROJECT_ENV = ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR")


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
            from thatch.config import Config
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
        from thatch.errors import ThatchError
        from thatch.tools.registry import ToolOutcome
        from thatch.tools.spec import ToolContext

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


def project_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables that name the caller's project, as sent with each call."""
    env = os.environ if environ is None else environ
    return {name: env[name] for name in PROJECT_ENV if env.get(name)}


def structured(result: Any, text: str, is_error: bool) -> dict[str, Any] | None:
    """MCP's ``structuredContent``: a JSON object (lists become ``{"items": [...]}``)."""
    if isinstance(result, dict):
        return result
    if isinstance(result, list):
        return {"items": result}
    if is_error:
        return {"error": text}
    if result is None:
        return None
    return {"value": result}


def build_server(
    backend: ToolBackend,
    *,
    cwd: str | None = None,
    environ: Mapping[str, str] | None = None,
    instructions: str | None = None,
) -> Server[Any]:
    """The MCP server: tools listed by and called through ``backend``.

    ``cwd`` and ``environ`` (default: this process's) say where the caller's
    project is. ``instructions`` is what the client shows the agent (default:
    the whole of :func:`thatch.agent_instructions.instructions`).
    """
    import anyio.to_thread
    from mcp import types
    from mcp.server.lowlevel import Server

    from thatch import agent_instructions

    folder = cwd or os.getcwd()
    env = project_env(environ)

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        described = await anyio.to_thread.run_sync(backend.list_tools)
        return types.ListToolsResult(tools=[types.Tool.model_validate(d) for d in described])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        run = functools.partial(
            backend.call, params.name, dict(params.arguments or {}), folder, env
        )
        try:
            # The backend blocks (a socket round trip, or the model itself).
            reply = await anyio.to_thread.run_sync(run)
        except Exception as exc:
            log.exception("tool %s could not run", params.name)
            message = f"{params.name} could not run: {exc}"
            reply = {"result": None, "text": message, "is_error": True}
        is_error = bool(reply.get("is_error"))
        text = str(reply.get("text", ""))
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=structured(reply.get("result"), text, is_error),
            is_error=is_error,
        )

    return Server(
        "thatch",
        version=thatch.__version__,
        instructions=agent_instructions.instructions() if instructions is None else instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve(
    server: Server[Any],
    stdin: AsyncFile[str] | None = None,
    stdout: AsyncFile[str] | None = None,
) -> None:
    """Serve ``server`` until the client closes its side: on stdin/stdout, or the streams given.

    The daemon passes a session's socket as ``stdin`` and ``stdout``; the
    SDK's stdio transport then frames the messages exactly as on stdio.
    """
    from mcp.server.stdio import stdio_server

    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(args: argparse.Namespace | ServerArgs) -> int:
    """``thatch mcp [--in-process]`` as argparse parsed it: the same as the fast path."""
    from thatch.mcp_relay import main as relay_main

    return relay_main(args)


def serve_in_process(home: str | None, *, why: str | None = None) -> int:
    """Serve on stdio with the tools in this process until the harness closes stdin.

    ``why`` is logged as a warning first: the reason the daemon does not
    serve this session (``--in-process`` gives none).
    """
    import anyio

    _configure_logging(home)
    if why:
        log.warning("%s", why)
    backend = InProcessBackend(home)
    check = setup_check(home)
    if check.notice:
        log.warning("%s", check.notice)
    try:
        anyio.run(serve, build_server(backend, instructions=server_instructions(check)))
    finally:
        backend.close()
    return 0


def setup_check(
    home: str | None,
    environ: Mapping[str, str] | None = None,
    *,
    cwd: str | None = None,
    targets: Iterable[SetupTarget] | None = None,
) -> SetupCheck:
    """The setup of the harness that started the server: what is missing, which scope works.

    The harness is named by ``THATCH_HARNESS`` (``thatch setup`` puts it in
    the MCP registration) or recognised by its variables; ``cwd`` and
    ``targets`` as for :func:`thatch.setup.notice.check`. A failed check
    reports nothing and no complete scope: it must never keep the server
    from starting, and the agent then gets the whole instructions.
    """
    from thatch.setup.notice import SetupCheck, check, harness_of

    env = os.environ if environ is None else environ
    try:
        return check(home, env, cwd=cwd, targets=targets)
    except Exception:
        log.exception("could not check the harness setup")
        return SetupCheck(harness_of(env), "", None)


def server_instructions(check: SetupCheck) -> str:
    """The instructions for the client: the setup notice first, then thatch's own."""
    from thatch.agent_instructions import server_instructions as for_harness

    text = for_harness(check.harness, check.complete_scope)
    return f"{check.notice}\n\n{text}" if check.notice else text


def _configure_logging(home: str | None) -> None:
    """Warnings to stderr (harnesses show an MCP server's stderr), details to the log file."""
    from thatch import logfile, rundir

    logger = logging.getLogger("thatch")
    try:
        logfile.configure(rundir.locate(home=home).log_path)
    except OSError as exc:
        print(f"thatch mcp: cannot write the log file ({exc}); logging to stderr", file=sys.stderr)
    if not any(getattr(h, "_thatch_stderr", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(logging.Formatter("thatch mcp: %(levelname)s %(message)s"))
        handler._thatch_stderr = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
