"""thatch's MCP server: the official SDK's low-level server with thatch's tools.

It runs in the daemon, one per ``thatch mcp`` session
(:mod:`thatch.daemon.mcp_session`; ``thatch mcp`` itself only relays bytes,
see :mod:`thatch.mcp_relay`), or in the ``thatch mcp`` process with
``--in-process`` or when no daemon can run. Its tools run in a
:class:`~thatch.tools.backend.ToolBackend`, on the daemon's runtime or this process's. Each call
carries the caller's project folder (the one its harness names in the
environment, ``Harness.project_folder``, else the working directory), which
decides the memory store.

On stdio, stdout carries only protocol messages; logs go to stderr and
thatch's log file.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import thatch

# The SDK, the tool registry and the runtime load where they are used: the
# daemon imports this module before its first MCP session.
if TYPE_CHECKING:
    from anyio import AsyncFile
    from mcp.server.lowlevel import Server

    from thatch.plugin.harness import Harness
    from thatch.setup.notice import SetupCheck
    from thatch.tools.backend import ToolBackend

log = logging.getLogger("thatch")


def project_env(
    environ: Mapping[str, str] | None = None, harnesses: Iterable[Harness] | None = None
) -> dict[str, str]:
    """The harnesses' variables (``Harness.environment``) set in ``environ``, sent with each call.

    They name the caller's project; ``harnesses``: None means the installed ones.
    """
    from thatch.runtime import installed_harnesses

    env = os.environ if environ is None else environ
    chosen = installed_harnesses() if harnesses is None else harnesses
    names = {name for harness in chosen for name in harness.environment}
    return {name: env[name] for name in sorted(names) if env.get(name)}


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
    the whole of :func:`thatch.instructions.agent.instructions`).
    """
    import anyio.to_thread
    from mcp import types
    from mcp.server.lowlevel import Server

    from thatch.instructions import agent as agent_instructions
    from thatch.tools.backend import InProcessBackend

    folder = cwd or os.getcwd()
    # The runtime has its harnesses loaded already; loading them again costs a session start.
    loaded = (
        backend.app.plugins.harnesses().values() if isinstance(backend, InProcessBackend) else None
    )
    env = project_env(environ, loaded)

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
    Every line gets an answer: see :class:`MendedMessages`.
    """
    from mcp.server.stdio import stdio_server

    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        messages = MendedMessages(read_stream, write_stream)
        await server.run(messages, write_stream, server.create_initialization_options())


class MendedMessages:
    """The transport's messages, with each line its parser refused mended or answered.

    The SDK's parser refuses a whole line for one lone UTF-16 surrogate
    escape (``"\\ud83c"``: half an emoji a JavaScript client cut) and hands
    the server its error instead of a message, which the server drops: the
    client would wait forever for the answer. Such a line is parsed again by
    Python's json, which accepts it, its surrogates made U+FFFD
    (:func:`thatch.unicode_fix.scrub`), and served. A line that still is no
    message is answered with a JSON-RPC error that says why. (Bytes that
    are not UTF-8 never get here: the transport reads them as U+FFFD.)

    A read stream as the SDK's ``ReadStream`` protocol describes it.
    """

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write_stream = write_stream

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message, which the server runs it in."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        from mcp import types

        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            mended = mend_message(item)
            if not isinstance(mended.message, types.JSONRPCError):
                return mended
            await self._write_stream.send(mended)

    def __aiter__(self) -> MendedMessages:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> MendedMessages:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def mend_message(refused: Exception) -> Any:
    """The message of a line the SDK's parser refused, or the error that answers it.

    ``refused`` is the parser's error. One that found no JSON holds the
    line, which is parsed again; for JSON that is no JSON-RPC message the
    request's id cannot be told, so its error has none (as JSON-RPC says).
    Returns a ``SessionMessage`` either way.
    """
    from mcp import types
    from mcp.shared.message import SessionMessage

    from thatch.unicode_fix import scrub

    line = _refused_line(refused)
    if line is None:
        problem = _first_problem(refused)
        return _error(types.INVALID_REQUEST, f"not a JSON-RPC message: {problem}")
    try:
        data = scrub(json.loads(line))
    except ValueError as exc:
        return _error(types.PARSE_ERROR, f"the message is not JSON: {exc}")
    try:
        message = types.jsonrpc_message_adapter.validate_json(
            json.dumps(data, ensure_ascii=False), by_name=False
        )
    except ValueError as exc:
        return _error(types.INVALID_REQUEST, f"not a JSON-RPC message: {_first_problem(exc)}")
    log.info("MCP: lone surrogates in a message were replaced with U+FFFD")
    return SessionMessage(message)


def _refused_line(refused: Exception) -> str | None:
    """The line the parser found no JSON in (None: it found JSON, or the error is another)."""
    from pydantic import ValidationError

    if not isinstance(refused, ValidationError):
        return None
    problems = refused.errors()
    if len(problems) != 1 or problems[0]["type"] != "json_invalid":
        return None
    line = problems[0].get("input")
    return line if isinstance(line, str) else None


def _first_problem(exc: Exception) -> str:
    """The first of a validation error's problems, as ``where: what``."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError) or not exc.errors():
        return str(exc)
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def _error(code: int, message: str) -> Any:
    """The answer to a message whose id could not be read: an error with no id."""
    from mcp import types
    from mcp.shared.message import SessionMessage

    log.warning("MCP: answered a message with an error: %s", message)
    error = types.ErrorData(code=code, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error))


def serve_in_process(home: str | None, *, why: str | None = None) -> int:
    """Serve on stdio with the tools in this process until the harness closes stdin.

    ``why`` is logged as a warning first: the reason the daemon does not
    serve this session (``--in-process`` gives none).
    """
    import anyio

    _configure_logging(home)
    if why:
        log.warning("%s", why)
    from thatch.tools.backend import InProcessBackend

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
    targets: Iterable[Harness] | None = None,
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
    from thatch.instructions.agent import server_instructions as for_harness

    text = for_harness(check.complete_scope, check.instruction_scopes)
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
