"""``example-agent`` as thatch sees it: its events, its answers, its setup and its checks.

The agent runs a hook command for each event, with one JSON line on stdin::

    {"session": "s-1", "cwd": "/work/app", "prompt": "how do we deploy?"}

and reads one JSON line from the hook's stdout, ``{"context": "..."}``, as
context for the agent (nothing printed: nothing to add). Its config is one
JSON file, ``.example-agent/config.json`` in a project or
``~/.example-agent/config.json`` for every project, with a command per hook
event and the MCP servers it starts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from thatch.plugin import (
    AnswerKind,
    Change,
    Detection,
    Event,
    EventKind,
    HarnessBase,
    InvalidInputError,
    JsonEntry,
    OwnedFile,
    SetupContext,
    ToolCall,
    optional_text,
    plain_text,
    text_field,
)
from thatch.plugin.launcher import harness_which

from thatch_example_harness import HARNESS

if TYPE_CHECKING:
    from collections.abc import Callable

    from thatch.plugin import Nudge
    from thatch.plugin.setup import Scope

#: Each event the agent sends and the core event it becomes.
EVENT_KINDS: dict[str, EventKind] = {
    "session-start": "session_start",
    "prompt": "prompt",
    "tool": "tool_use",
    "session-end": "session_end",
}
#: The program whose presence on PATH shows the agent is installed.
PROGRAM = "example-agent"
#: The agent's folder, in a project or in the user's home.
FOLDER = ".example-agent"


@attrs.frozen
class ExamplePaths:
    """The files a setup writes for one context."""

    #: The agent's one config file: hooks and MCP servers.
    config: Path
    #: thatch's instructions, which the agent reads with every session.
    instructions: Path

    @classmethod
    def of(cls, context: SetupContext) -> ExamplePaths:
        base = context.project if context.project is not None else context.user_home
        folder = base / FOLDER
        return cls(config=folder / "config.json", instructions=folder / "thatch.md")


class ExampleHarness(HarnessBase):
    """``example-agent``: ``thatch hook example EVENT`` and ``thatch setup --example``."""

    name = HARNESS
    title = "Example Agent"
    # Only these wait for a starting daemon: the agent reads their answers.
    hook_answers: Mapping[str, AnswerKind] = {"session-start": "session_start", "prompt": "prompt"}
    install_hint = "pip install example-agent"
    # Both scopes write the instructions file, so the MCP server only points at it.
    instruction_scopes: frozenset[Scope] = frozenset({"project", "global"})

    def __init__(self, which: Callable[[str], str | None] = harness_which) -> None:
        #: Finds a program as the agent would (the user's PATH); tests pass a fake.
        self.which = which

    # -- the hook path ------------------------------------------------------------
    def parse_event(self, hook_event: str, payload: Mapping[str, Any]) -> Event:
        kind = EVENT_KINDS.get(hook_event)
        if kind is None:
            raise InvalidInputError(
                f"example-agent event {hook_event!r} is not one thatch reads; use one of "
                f"{', '.join(EVENT_KINDS)} (run 'thatch setup --example' to rewrite the hooks)"
            )
        fields: dict[str, Any] = {}
        if kind == "prompt":
            fields["prompt"] = text_field(payload, "prompt")
        elif kind == "tool_use":
            call = ToolCall(name=text_field(payload, "tool"), input=payload.get("input"))
            fields["tool_calls"] = (call,)
        return Event(
            kind=kind,
            harness=HARNESS,
            session_id=text_field(payload, "session"),
            hook_event=hook_event,
            cwd=optional_text(payload, "cwd"),
            **fields,
        )

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        text = plain_text(nudges)
        return json.dumps({"context": text}) + "\n" if text else ""

    def running(self, environ: Mapping[str, str]) -> bool:
        return bool(environ.get("EXAMPLE_AGENT"))

    # -- setup and its checks -----------------------------------------------------
    def detect(self, context: SetupContext) -> Detection:
        evidence = [f"{folder}/" for folder in _folders(context) if folder.is_dir()]
        found = self.which(PROGRAM)
        if found:
            evidence.append(f"{PROGRAM} on PATH ({found})")
        return Detection(found=bool(evidence), evidence=tuple(evidence))

    def changes(self, context: SetupContext) -> Sequence[Change]:
        paths = ExamplePaths.of(context)
        changes: list[Change] = [
            JsonEntry(paths.config, ("hooks", event), context.hook_command("hook", HARNESS, event))
            for event in EVENT_KINDS
        ]
        changes.append(JsonEntry(paths.config, ("mcpServers", "thatch"), mcp_server(context)))
        changes.append(OwnedFile(paths.instructions, instructions(context)))
        return changes

    def problems(self, context: SetupContext) -> Sequence[str]:
        paths = ExamplePaths.of(context)
        fix = f"fix: run `{context.run('setup', '--example', *_scope_flags(context))}`"
        try:
            config = json.loads(paths.config.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return [f"{paths.config} is missing, so example-agent runs no thatch hook; {fix}"]
        except (OSError, ValueError) as exc:
            return [f"{paths.config} cannot be read as JSON ({exc}); {fix}"]
        hooks = config.get("hooks") if isinstance(config, dict) else None
        missing = [
            event for event in EVENT_KINDS if not isinstance(hooks, dict) or event not in hooks
        ]
        found = [f"{paths.config} has no hook for {', '.join(missing)}; {fix}"] if missing else []
        if not isinstance(config.get("mcpServers"), dict) or "thatch" not in config["mcpServers"]:
            found.append(f"{paths.config} does not start thatch's MCP server; {fix}")
        if _read(paths.instructions) != instructions(context):
            found.append(f"{paths.instructions} is missing or out of date; {fix}")
        return found

    def config_files(self, context: SetupContext) -> Sequence[Path]:
        paths = ExamplePaths.of(context)
        return (paths.config, paths.instructions)

    def prime_command(self, prompt: str) -> Sequence[str] | None:
        return (PROGRAM, "run", "--no-input", prompt)


def mcp_server(context: SetupContext) -> dict[str, Any]:
    """The ``mcpServers.thatch`` entry: thatch's stdio MCP server, told which harness starts it."""
    return {
        "command": context.command[0],
        "args": [*context.command[1:], "mcp"],
        "env": context.mcp_env(HARNESS),
    }


def instructions(context: SetupContext) -> str:
    """The instructions file: what core wants every agent told, and the workflows' names."""
    names = "\n".join(
        f"- {workflow.name}: {workflow.description}"
        for workflow in context.briefing.workflows(kind="procedure")
    )
    return f"{context.briefing.instructions(level=1)}\n## Procedures\n\n{names}\n"


def _folders(context: SetupContext) -> list[Path]:
    folders = [context.user_home / FOLDER]
    if context.project is not None:
        folders.append(context.project / FOLDER)
    return folders


def _scope_flags(context: SetupContext) -> tuple[str, ...]:
    if context.project is None:
        return ("--global",)
    return ("--project", str(context.project))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
