"""``thatch demo``: the whole story of a Claude Code session, in a throw-away home.

It starts the real daemon, feeds the real hook commands the payloads Claude
Code sends (session start, a batch of tool calls, prompts), saves memories
and a preference through the real MCP server (``thatch mcp``, driven by the
``mcp`` SDK's client), and prints what the agent would see at each step.
Then it stops the daemon and deletes the home.

Core knows no harness by name: the story runs the named hook commands
(``thatch reminder``...), so it is told with the installed harness serving
them (Claude Code's plugin), whose variables it sets and clears.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch.demo_session import (
    BATCH,
    FIRST_PROMPT,
    LATER_PROMPT,
    MEMORIES,
    PREFERENCE,
    SESSION,
    SITUATION_PROMPT,
    WALL_COMMAND,
    WALL_FILE,
    WALL_MEMORY,
    WALL_ROUNDS,
    edit_payload,
    failure_payload,
    prompt_payload,
    session_start_payload,
)

if TYPE_CHECKING:
    from thatch.plugin.harness import Harness

REMOTE = "git@github.com:acme/shop.git"
#: The subcommand of the receptor plugin; with it installed the story ends at a wall.
RECEPTOR_COMMAND = "receptor"
#: How long the story waits for the receptor to have its delivery ready.
RECEPTOR_WAIT_SECONDS = 60.0
#: The named hook commands the story runs; the harness serving them tells it.
STORY_COMMANDS = ("reminder", "buffer-batch", "flush-tools")


def thatch_command() -> list[str]:
    """How to run this installation's ``thatch``: the console script beside the interpreter."""
    from thatch.plugin.launcher import direct_command

    return list(direct_command())


def _step(number: int, title: str, how: str) -> None:
    print(f"\n== {number}. {title}\n   ({how})")


def _show(text: str) -> None:
    shown = text.strip() or "(nothing: the hook printed nothing)"
    print("   | " + shown.replace("\n", "\n   | "))


def _hook(
    command: str | list[str], payload: Mapping[str, Any], env: Mapping[str, str], cwd: Path
) -> str:
    """Run a hook command exactly as Claude Code does: payload on stdin, stdout to the agent."""
    completed = subprocess.run(
        [*thatch_command(), *([command] if isinstance(command, str) else command)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=dict(env),
        cwd=cwd,
        timeout=30,
        check=False,
    )
    return completed.stdout


def _project(folder: Path) -> Path:
    """A git repository whose origin gives it the store acme/shop (global without git)."""
    folder.mkdir()
    try:
        for args in (["init", "-q"], ["remote", "add", "origin", REMOTE]):
            subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        print("   (git is not available: memories go to the global store)")
    return folder


def story_harness(harnesses: Iterable[Harness]) -> Harness | None:
    """The installed harness serving every named command of the story, or None."""
    for harness in harnesses:
        if set(STORY_COMMANDS) <= {command.name for command in harness.commands}:
            return harness
    return None


def project_variables(harness: Harness, project: Path) -> dict[str, str]:
    """The harness's project folder variable (the first of its environment) set to ``project``."""
    return {harness.environment[0]: str(project)} if harness.environment else {}


async def _agent_calls(
    env: Mapping[str, str], project: Path, calls: list[tuple[str, dict[str, Any]]]
) -> list[tuple[str, bool, str]]:
    """Call MCP tools the way an agent does: through ``thatch mcp`` over stdio.

    ``env`` names the project as the harness does (:func:`project_variables`).
    """
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import TextContent

    command = thatch_command()
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], "mcp"], env=dict(env), cwd=project
    )
    results: list[tuple[str, bool, str]] = []
    # The server's stderr (warnings for a person at a terminal) stays out of the story.
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                # thatch's tools answer in text; only a text block has any.
                first = result.content[0] if result.content else None
                text = first.text if isinstance(first, TextContent) else ""
                results.append((name, result.is_error, text))
    return results


def _call_tools(
    env: Mapping[str, str], project: Path, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    import anyio

    for name, is_error, text in anyio.run(_agent_calls, env, project, calls):
        outcome = "error: " if is_error else ""
        print(f"   {name} -> {outcome}{_brief(text)}")


def _brief(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text[:120]
    if isinstance(data, dict):
        for key in ("action", "outcome", "drained"):
            if key in data:
                return f"{key}: {data[key]}"
    return text[:120]


def run_demo() -> int:
    """Run the demo; returns the exit status."""
    from thatch.daemon.client import DaemonClient
    from thatch.plugin.config import Config
    from thatch.plugins import Plugins
    from thatch.runtime import installed_harnesses

    harnesses = installed_harnesses()
    receptor = RECEPTOR_COMMAND in Plugins.load(Config.load()).commands()
    harness = story_harness(harnesses)
    if harness is None:
        print(
            "thatch demo: no installed harness serves the hook commands "
            f"{', '.join(STORY_COMMANDS)}; install thatch-claude (see thatch plugins)"
        )
        return 1
    with tempfile.TemporaryDirectory(prefix="thatch-demo-") as tmp:
        home = Path(tmp) / "home"
        env = {**os.environ, "THATCH_HOME": str(home)}
        # The caller's own harness session must not leak into the story.
        for variable in {"THATCH_DB_PATH", *(n for h in harnesses for n in h.environment)}:
            env.pop(variable, None)
        print(f"thatch demo: a {harness.title} session, in a throw-away home ({tmp})")
        project = _project(Path(tmp) / "shop")
        client = DaemonClient(str(home), environ=env)
        started = time.perf_counter()
        client.ensure_running(warm=True)
        status = client.request("status")
        print(
            f"   daemon started (pid {status['pid']}), model loaded in "
            f"{time.perf_counter() - started:.1f} s"
        )
        try:
            agent_env = {**env, **project_variables(harness, project)}
            _story(env, project, agent_env, receptor=receptor)
            if receptor:
                _wall(env, project, harness.name)
        finally:
            client.stop()
    print("\nThe daemon was stopped and the home deleted. To use thatch for real: thatch setup")
    return 0


def _story(
    env: Mapping[str, str], project: Path, agent_env: Mapping[str, str], *, receptor: bool
) -> None:
    """The session, step by step; ``agent_env`` is the environment the MCP server gets."""
    _step(1, "the session starts", "SessionStart hook: thatch reminder")
    _show(_hook("reminder", session_start_payload(project), env, project))

    _step(2, "the agent runs three tools", "PostToolBatch hook: thatch buffer-batch")
    for call in BATCH["tool_calls"]:
        print(f"   {call['tool_name']} {json.dumps(call['tool_input'])[:90]}")
    _show(_hook("buffer-batch", {**BATCH, "cwd": str(project)}, env, project))
    print("   (queued for this session; note the secret in the Bash output)")

    _step(3, f"the user asks: {FIRST_PROMPT!r}", "UserPromptSubmit hook: thatch flush-tools")
    _show(_hook("flush-tools", prompt_payload(FIRST_PROMPT, project), env, project))

    _step(4, "the agent saves what it learned", "MCP tools memory_remember, extraction_done")
    saved = [*MEMORIES, WALL_MEMORY] if receptor else list(MEMORIES)
    calls = [("memory_remember", {"label": label, "content": content}) for label, content in saved]
    calls.append(("extraction_done", {"session_id": SESSION}))
    _call_tools(agent_env, project, calls)

    _step(5, f"later, the user asks: {LATER_PROMPT!r}", "thatch flush-tools")
    _show(_hook("flush-tools", prompt_payload(LATER_PROMPT, project), env, project))

    matcher, prediction = PREFERENCE
    _step(6, "the user states a preference", "MCP tool prediction_update, signal create")
    print(f"   when {matcher}: {prediction}")
    _call_tools(
        agent_env,
        project,
        [("prediction_update", {"matcher": matcher, "prediction": prediction, "signal": "create"})],
    )

    _step(7, f"the user asks: {SITUATION_PROMPT!r}", "thatch flush-tools")
    _show(_hook("flush-tools", prompt_payload(SITUATION_PROMPT, project), env, project))
    print("   (a memory shown in this session waits 10 prompts before it is shown again)")


def _wall(env: Mapping[str, str], project: Path, harness: str) -> None:
    """The receptor's part: a failing streak, its reading, and the one item the agent gets."""
    _step(
        8,
        "the agent hits a wall: edit, the test fails, edit, it fails again",
        f"thatch hook {harness} PostToolBatch / PostToolUseFailure",
    )
    for attempt in range(WALL_ROUNDS):
        print(f"   Edit {WALL_FILE}, then {WALL_COMMAND} -> exit 1 (TypeError)")
        for event, payload in (
            ("PostToolBatch", edit_payload(project, attempt)),
            ("PostToolUseFailure", failure_payload(project, attempt)),
        ):
            _show_context(_hook(["hook", harness, event], payload, env, project), quiet=True)
    status = _receptor_status(env, project)
    if status is None:
        print("   (the receptor had nothing ready in time)")
        return
    axes = ", ".join(f"{axis} {value:.2f}" for axis, value in status["axes"].items() if value)
    # "now": the axes go on rising after the firing, whose values the delivery's reason gives.
    print(f"   the receptor reads now: {axes}; pattern {status['pattern']}")
    for firing in status["firings"][-1:]:
        print(f"   fired {', '.join(firing['fired'])} -> {firing['mode']} ({firing['why']})")

    _step(9, "the next tool call's hook answer", f"thatch hook {harness} PostToolBatch")
    _show_context(
        _hook(["hook", harness, "PostToolBatch"], edit_payload(project, 99), env, project)
    )
    print("   (one item, right after the failures; none while the agent is in flow)")


def _show_context(answer: str, *, quiet: bool = False) -> None:
    """What the agent reads of a tool hook's JSON answer."""
    try:
        text = json.loads(answer)["hookSpecificOutput"]["additionalContext"] if answer else ""
    except (ValueError, KeyError, TypeError):
        text = answer
    if text or not quiet:
        _show(text)


def _receptor_status(env: Mapping[str, str], project: Path) -> dict[str, Any] | None:
    """The session's receptor status once a delivery waits (None when none comes in time)."""
    deadline = time.monotonic() + RECEPTOR_WAIT_SECONDS
    while time.monotonic() < deadline:
        completed = subprocess.run(
            [*thatch_command(), RECEPTOR_COMMAND, "status", SESSION, "--json"],
            capture_output=True,
            text=True,
            env=dict(env),
            cwd=project,
            timeout=30,
            check=False,
        )
        if completed.returncode == 0:
            status: dict[str, Any] = json.loads(completed.stdout)
            if status.get("pending") or status.get("deliveries"):
                return status
        time.sleep(0.3)
    return None
