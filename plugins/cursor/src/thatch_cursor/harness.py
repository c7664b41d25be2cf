"""Cursor as thatch sees it: one :class:`~thatch.plugin.Harness`.

Each method imports its worker module when called, so loading the plugin
(every thatch command) stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch.plugin import AnswerKind, EventKind, HarnessBase, PayloadClaim
from thatch.plugin.harness import ExtractionWorkflow

from thatch_cursor import HARNESS
from thatch_cursor.delivery import CONTEXT_EVENTS, CONTEXT_KINDS

if TYPE_CHECKING:
    from thatch.plugin import Event, Nudge, SetupContext
    from thatch.plugin.setup import Scope, SetupTarget

#: Cursor's variable for the project folder it runs in.
PROJECT_VARIABLE = "CURSOR_PROJECT_DIR"


class CursorHarness(HarnessBase):
    """Cursor: ``thatch hook cursor EVENT``, and its payloads in Claude Code's named commands."""

    name = HARNESS
    title = "Cursor"
    hook_answers: Mapping[str, AnswerKind] = {
        "sessionStart": "session_start",
        "beforeSubmitPrompt": "prompt",
    }
    # beforeSubmitPrompt's output cannot add context (see thatch_cursor.delivery).
    context_kinds: frozenset[EventKind] | None = CONTEXT_KINDS
    # Cursor reads additional_context from these alone, not from postToolUseFailure.
    context_events: frozenset[str] | None = CONTEXT_EVENTS
    # Cursor runs Claude Code's hooks too: its payloads name a conversation_id,
    # and it sets CURSOR_VERSION for the commands it runs.
    claim = PayloadClaim(keys=("conversation_id",), environ=("CURSOR_VERSION",))
    environment = (PROJECT_VARIABLE, "CURSOR_VERSION")
    # UNCERTAIN: Cursor may report an MCP tool as "MCP:<tool>", and thatch's
    # under the server's name as Claude Code spells it.
    mcp_tool_marker = "MCP:"
    thatch_tool_prefixes = ("mcp__thatch__",)
    extraction_workflow = ExtractionWorkflow("thatch-fact-extractor", "rule")
    install_hint = "Cursor's cursor-agent"
    # The thatch rule carries the instructions; Cursor keeps rule files only in a project.
    instruction_scopes: frozenset[Scope] = frozenset({"project"})

    def parse_event(self, hook_event: str, payload: Mapping[str, Any]) -> Event:
        from thatch_cursor.payloads import parse_event

        return parse_event(hook_event, payload)

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        from thatch_cursor.delivery import deliver

        return deliver(nudges, event)

    def project_folder(self, environ: Mapping[str, str]) -> str | None:
        return environ.get(PROJECT_VARIABLE) or None

    def running(self, environ: Mapping[str, str]) -> bool:
        return bool(environ.get("CURSOR_VERSION") or environ.get(PROJECT_VARIABLE))

    def config_files(self, context: SetupContext) -> Sequence[Path]:
        from thatch_cursor.target import CursorPaths

        paths = CursorPaths.of(context)
        return (paths.hooks, paths.mcp)

    def prime_command(self, prompt: str) -> Sequence[str] | None:
        # Without --approve-mcps, -p stops at a prompt to approve thatch's MCP
        # server that nobody can answer without a terminal.
        return ("cursor-agent", "-p", "--approve-mcps", prompt)

    def setup_target(self) -> SetupTarget:
        from thatch_cursor.target import CursorTarget

        return CursorTarget()
