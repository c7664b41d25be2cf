"""``thatch setup --claude``: what Claude Code needs, as changes core applies.

- The MCP server: ``.mcp.json`` plus the project's approval in
  ``.claude/settings.local.json`` (without it ``claude mcp list`` shows
  "Pending approval"; Claude Code 2.1 moves approvals it finds in
  ``~/.claude.json`` there itself), or the user-scope registration in
  ``~/.claude.json``.
- One hook per event in :data:`HOOK_EVENTS`, each running
  ``thatch hook claude EVENT``.
- A marked block in ``CLAUDE.md`` and the skills in ``~/.claude/skills``
  (shared by every project's setup: the last uninstall takes them back).

Claude Code ignores a JSON file with comments or trailing commas, so every
JSON change is ``strict_for`` Claude Code: setup refuses such a file
instead of editing it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
from thatch.plugin import (
    Change,
    Detection,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    SetupContext,
    TextBlock,
)
from thatch.plugin.launcher import harness_which

from thatch_claude import HARNESS
from thatch_claude.files import SERVER_NAME, config_dir, files_for
from thatch_claude.instructions import BLOCK_NAME, instructions_block, skills

#: The hooks setup installs. PostToolBatch reports every tool call, so
#: PostToolUse is left out: with both, each call would be queued twice.
#: PostToolUseFailure is the only one that says a call failed and why; the
#: batch then leaves that call out (see thatch_claude.failures).
HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolBatch",
    "PostToolUseFailure",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
)

#: Events about tools: their hook entries need a matcher ("*": every tool).
TOOL_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure", "PostToolBatch"})

#: Seconds Claude Code waits for a thatch hook; the command answers well within it.
HOOK_TIMEOUT = 10


@attrs.frozen
class ClaudeTarget:
    """Claude Code as a :class:`~thatch.plugin.setup.SetupTarget`."""

    name: str = HARNESS
    title: str = "Claude Code"
    #: Finds a program as the harness would (the user's PATH, no virtualenv); tests pass a fake.
    which: Callable[[str], str | None] = harness_which

    def detect(self, context: SetupContext) -> Detection:
        """Claude Code is in use if ``~/.claude`` (or ``$CLAUDE_CONFIG_DIR``), the project's
        ``.claude`` or ``claude`` exist."""
        evidence: list[str] = []
        folders = [config_dir(context)]
        if context.project is not None:
            folders.append(context.project / ".claude")
        evidence.extend(f"{folder}/" for folder in folders if folder.is_dir())
        binary = self.which("claude")
        if binary:
            evidence.append(f"claude on PATH ({binary})")
        return Detection(found=bool(evidence), evidence=tuple(evidence))

    def changes(self, context: SetupContext) -> Sequence[Change]:
        """The MCP server, the hooks, the CLAUDE.md block and the skills for ``context``.

        What an older thatch setup left in the same files is taken out
        (:mod:`thatch_claude.legacy`).
        """
        from thatch_claude.legacy import retired

        files = files_for(context)
        # Claude Code reads all its JSON files strictly: one with a comment
        # or a trailing comma is ignored, so setup must not report it written.
        strict = self.title
        changes: list[Change] = [
            JsonEntry(
                files.mcp_file, ("mcpServers", SERVER_NAME), mcp_server(context), strict_for=strict
            )
        ]
        if files.local_settings is not None:
            changes.append(
                JsonListItem(
                    files.local_settings,
                    ("enabledMcpjsonServers",),
                    SERVER_NAME,
                    strict_for=strict,
                )
            )
        changes.extend(
            JsonListItem(
                files.settings, ("hooks", event), hook_entry(context, event), strict_for=strict
            )
            for event in HOOK_EVENTS
        )
        changes.append(TextBlock(files.instructions, BLOCK_NAME, instructions_block()))
        changes.extend(
            OwnedFile(files.skills / skill.name / "SKILL.md", skill.content)
            for skill in skills(context.briefing)
        )
        changes.extend(retired(context))
        return changes

    def problems(self, context: SetupContext) -> Sequence[str]:
        """Missing MCP registration or hooks, and commands that cannot run, each with its fix."""
        from thatch_claude.problems import find_problems

        return find_problems(context, self.which)


def mcp_server(context: SetupContext) -> dict[str, Any]:
    """The ``mcpServers.thatch`` entry: thatch's stdio MCP server."""
    return {
        "type": "stdio",
        "command": context.command[0],
        "args": [*context.command[1:], "mcp"],
        "env": context.mcp_env(HARNESS),
    }


def hook_entry(context: SetupContext, event: str) -> dict[str, Any]:
    """The entry under ``hooks.EVENT`` in Claude Code's settings that runs thatch."""
    entry: dict[str, Any] = {"matcher": "*"} if event in TOOL_EVENTS else {}
    entry["hooks"] = [
        {"type": "command", "command": hook_command(context, event), "timeout": HOOK_TIMEOUT}
    ]
    return entry


def hook_command(context: SetupContext, event: str) -> str:
    """``thatch hook claude EVENT``, after the variables thatch needs (``THATCH_HOME=...``)."""
    return context.hook_command("hook", HARNESS, event)
