"""opencode as thatch sees it: one :class:`~thatch.plugin.Harness`.

Each method imports its worker module when called, so loading the plugin
(every thatch command) stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch.plugin import AnswerKind, HarnessBase, plain_text
from thatch.plugin.harness import ExtractionWorkflow

from thatch_opencode import HARNESS

if TYPE_CHECKING:
    from thatch.plugin import Event, Nudge, SetupContext
    from thatch.plugin.setup import Scope, SetupTarget


class OpencodeHarness(HarnessBase):
    """opencode: its JS plugin runs ``thatch hook opencode EVENT`` for each event."""

    name = HARNESS
    title = "opencode"
    hook_answers: Mapping[str, AnswerKind] = {
        "session.created": "session_start",
        "session.compacted": "session_start",
        "chat.message": "prompt",
    }
    environment = ("OPENCODE",)
    # opencode shows (and reports) the tools of the MCP server "thatch" as thatch_<tool>.
    tool_prefix = "thatch_"
    thatch_tool_prefixes = ("thatch_",)
    extraction_workflow = ExtractionWorkflow(
        "thatch-fact-extractor", "agent", " (give it this block)"
    )
    install_hint = "npm install -g opencode-ai"
    # AGENTS.md (project) or thatch's instructions file (global) carries the instructions.
    instruction_scopes: frozenset[Scope] = frozenset({"project", "global"})

    def parse_event(self, hook_event: str, payload: Mapping[str, Any]) -> Event:
        from thatch_opencode.events import parse_event

        return parse_event(hook_event, payload)

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        # The JS plugin puts the text in a message part as it is.
        return plain_text(nudges)

    def running(self, environ: Mapping[str, str]) -> bool:
        return bool(environ.get("OPENCODE"))

    def config_files(self, context: SetupContext) -> Sequence[Path]:
        from thatch_opencode.target import OpencodePaths

        paths = OpencodePaths.of(context)
        return (paths.config, paths.plugin, paths.instructions)

    def prime_command(self, prompt: str) -> Sequence[str] | None:
        return ("opencode", "run", prompt)

    def setup_target(self) -> SetupTarget:
        from thatch_opencode.target import OpencodeTarget

        return OpencodeTarget()
