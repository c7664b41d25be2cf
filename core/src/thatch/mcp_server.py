"""``thatch mcp``: the stdio MCP server a harness starts for each session.

The server itself only speaks MCP. Its tools run in a :class:`ToolBackend`:
the shared daemon by default (so every session uses one loaded model), or
this process with ``--in-process``. Each call carries the caller's project
folder (``CLAUDE_PROJECT_DIR``, else ``CURSOR_PROJECT_DIR``, else the working
directory), which decides the memory store.

stdout carries only protocol messages; logs go to stderr and thatch's log file.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import thatch

# Only what answering ``initialize`` needs is imported at the top: a harness
# waits for this server before its first turn. The tool registry, the
# runtime and the SDK load where they are used.
if TYPE_CHECKING:
    import argparse

    from mcp.server.lowlevel import Server

    from thatch.runtime import Runtime
    from thatch.setup.notice import SetupCheck
    from thatch.tools.registry import ToolRegistry

log = logging.getLogger("thatch")

#: Environment variables that name the project; forwarded with every call.
PROJECT_ENV = ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR")


class ServerArgs(NamedTuple):
    """``thatch mcp``'s options, as :func:`parse_args` reads them."""

    home: str | None = None
    in_process: bool = False


def parse_args(argv: Sequence[str]) -> ServerArgs | None:
    """``argv`` (without the program name) as ``thatch mcp``, or None for argparse.

    The console script serves ``thatch mcp`` without building the whole
    command line's parser, which imports every command's module. Only the
    plain forms are read here: ``-h``, abbreviations, unknown options and
    other commands return None, and argparse answers them.
    """
    home: str | None = None
    in_process = False
    seen_command = False
    tokens = iter(argv)
    for token in tokens:
        if token == "--home":
            home = next(tokens, None)
            if home is None or home.startswith("-"):
                return None
        elif token.startswith("--home="):
            home = token.partition("=")[2]
        elif token == "--in-process" and seen_command:
            in_process = True
        elif token == "mcp" and not seen_command:
            seen_command = True
        else:
            return None
    return ServerArgs(home or None, in_process) if seen_command else None


class ToolBackend(Protocol):
    """Where tool calls run: this process, or the daemon over its socket."""

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool as MCP's ``tools/list`` describes it."""
        ...

    def call(
        self, name: str, arguments: dict[str, Any], cwd: str, env: dict[str, str]
    ) -> dict[str, Any]:
        """Run one tool for the project at ``cwd``/``env``: ``{"result", "text", "is_error"}``."""
        ...


class InProcessBackend:
    """Tools run in this process, on a runtime of its own (or one it is given)."""

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


async def serve(server: Server[Any]) -> None:
    """Serve ``server`` on stdin/stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def make_backend(home: str | None, *, in_process: bool) -> ToolBackend:
    """The daemon's backend, or one in this process when asked or when no daemon can run.

    A daemon that cannot start (a runtime folder owned by someone else, a
    platform without Unix sockets) must not cost the agent its memory: the
    tools then run here, with a warning on stderr saying why.
    """
    if in_process:
        return InProcessBackend(home)
    from thatch.daemon.client import DaemonBackend
    from thatch.errors import ThatchError

    backend = DaemonBackend(home)
    try:
        backend.client.ensure_running()
    except (ThatchError, OSError) as exc:
        log.warning("the daemon is unavailable (%s); running tools in this process", exc)
        return InProcessBackend(home)
    return backend


def main(args: argparse.Namespace | ServerArgs) -> int:
    """Run ``thatch mcp [--in-process]`` until the harness closes the connection."""
    import anyio

    home = getattr(args, "home", None)
    _configure_logging(home)
    backend = make_backend(home, in_process=bool(getattr(args, "in_process", False)))
    check = setup_check(home)
    if check.notice:
        log.warning("%s", check.notice)
    try:
        anyio.run(serve, build_server(backend, instructions=server_instructions(check)))
    finally:
        if isinstance(backend, InProcessBackend):
            backend.close()
    return 0


def setup_check(home: str | None, environ: Mapping[str, str] | None = None) -> SetupCheck:
    """The setup of the harness that started this server: what is missing, which scope works.

    The harness is named by ``THATCH_HARNESS`` (``thatch setup`` puts it in
    the MCP registration) or recognised by its variables. A failed check
    reports nothing and no complete scope: it must never keep the server
    from starting, and the agent then gets the whole instructions.
    """
    from thatch.setup.notice import SetupCheck, check, harness_of

    env = os.environ if environ is None else environ
    try:
        return check(home, env)
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
