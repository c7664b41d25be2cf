"""Claude Code as thatch sees it: one :class:`~thatch.plugin.Harness`.

Everything core needs to know about Claude Code is here or behind these
methods; each method imports its worker module when called, so loading the
plugin (every thatch command) stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch.plugin import AnswerKind, HarnessBase, HookCommand
from thatch.plugin.harness import ExtractionWorkflow

from thatch_claude import HARNESS

if TYPE_CHECKING:
    from thatch.plugin import Candidate, Event, Nudge, SetupContext
    from thatch.plugin.setup import SetupTarget

#: Claude Code's variable for the project folder it runs in.
PROJECT_VARIABLE = "CLAUDE_PROJECT_DIR"


class ClaudeHarness(HarnessBase):
    """Claude Code: ``thatch hook claude EVENT`` and the named commands older setups wrote."""

    name = HARNESS
    title = "Claude Code"
    hook_answers: Mapping[str, AnswerKind] = {
        "SessionStart": "session_start",
        "UserPromptSubmit": "prompt",
    }
    commands = (
        HookCommand("reminder", "SessionStart", "hook, SessionStart: the session's briefing"),
        HookCommand(
            "buffer-batch", "PostToolBatch", "hook, PostToolBatch: queue the batch's calls"
        ),
        HookCommand("buffer-tool", "PostToolUse", "hook, PostToolUse: queue one tool call"),
        HookCommand("flush-tools", "UserPromptSubmit", "hook, UserPromptSubmit: the nudges"),
        # Beside flush-tools, which carries the save reminder when no daemon answers.
        HookCommand(
            "flush-predictions",
            "UserPromptSubmit",
            "hook, UserPromptSubmit: the decision model",
            stand_in=False,
        ),
    )
    environment = (PROJECT_VARIABLE, "CLAUDECODE")
    install_hint = "npm install -g @anthropic-ai/claude-code"
    # Claude Code shows the tools as mcp__thatch__<tool>, but its agents find
    # them by the bare name, which keeps the reminders short.
    tool_prefix = ""
    thatch_tool_prefixes = ("mcp__thatch__",)
    # Cursor runs Claude Code's hooks too, naming MCP tools its own way.
    mcp_tool_marker = "MCP:"
    extraction_workflow = ExtractionWorkflow(
        "thatch-fact-extractor", "skill", " (or a sub-agent with it, given this block)"
    )

    def parse_event(self, hook_event: str, payload: Mapping[str, Any]) -> Event:
        from thatch_claude.events import parse_event
        from thatch_claude.failures import REPORTED

        return parse_event(hook_event, payload, REPORTED)

    def read_transcript(self, path: Path) -> Iterable[Candidate]:
        from thatch_claude.transcript import read_transcript

        return read_transcript(path)

    def transcript_session(self, path: Path) -> str | None:
        """The session the transcript at ``path`` belongs to (its lines' ``sessionId``)."""
        from thatch_claude.transcript import transcript_session

        return transcript_session(path)

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        from thatch_claude.delivery import deliver

        return deliver(nudges, event.hook_event)

    def parse_command(self, command: HookCommand, payload: Mapping[str, Any]) -> Event:
        from thatch_claude.payloads import parse_command_payload

        return parse_command_payload(command, payload)

    def answer_command(self, nudges: Sequence[Nudge], event: Event, *, as_json: bool) -> str:
        from thatch_claude.delivery import answer_command

        return answer_command(nudges, event.hook_event, as_json=as_json)

    def project_folder(self, environ: Mapping[str, str]) -> str | None:
        return environ.get(PROJECT_VARIABLE) or None

    def running(self, environ: Mapping[str, str]) -> bool:
        return bool(environ.get(PROJECT_VARIABLE) or environ.get("CLAUDECODE"))

    def config_files(self, context: SetupContext) -> Sequence[Path]:
        from thatch_claude.files import files_for

        files = files_for(context)
        return (files.settings, files.mcp_file, files.instructions)

    def prime_command(self, prompt: str) -> Sequence[str] | None:
        return ("claude", "-p", prompt)

    def setup_target(self) -> SetupTarget:
        from thatch_claude.target import ClaudeTarget

        return ClaudeTarget()
