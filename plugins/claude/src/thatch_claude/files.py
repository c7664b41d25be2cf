"""Where Claude Code keeps what ``thatch setup --claude`` writes, for one setup context.

============  ===============================  ===============================
what          project scope                    global scope
============  ===============================  ===============================
MCP server    ``.mcp.json`` (+ approval in     ``~/.claude.json`` (user scope)
              ``.claude/settings.local.json``)
hooks         ``.claude/settings.json``        ``~/.claude/settings.json``
instructions  ``CLAUDE.md``                    ``~/.claude/CLAUDE.md``
skills        ``~/.claude/skills/<name>/SKILL.md`` (both)
============  ===============================  ===============================
"""

from __future__ import annotations

from pathlib import Path

import attrs
from thatch.errors import InvalidInputError
from thatch.setup.model import SetupContext

#: The MCP server's name: Claude Code shows its tools as ``mcp__thatch__<tool>``.
SERVER_NAME = "thatch"


@attrs.frozen
class ClaudeFiles:
    """The files of one scope, and the user-level ones every scope may touch."""

    #: ``~/.claude.json``: user-scope MCP servers and per-project approvals.
    user_config: Path
    #: Holds ``mcpServers.thatch`` for this scope.
    mcp_file: Path
    settings: Path
    instructions: Path
    skills: Path
    #: The project folder as Claude Code keys it in ``~/.claude.json`` (None: global).
    project_key: str | None = None
    #: ``.claude/settings.local.json``: the user's own approval of ``.mcp.json``
    #: servers for this project (not committed). None for a global setup.
    local_settings: Path | None = None

    @property
    def approval_keys(self) -> tuple[str, ...]:
        """Where ``~/.claude.json`` lists the project's approved ``.mcp.json`` servers."""
        if self.project_key is None:
            return ()
        return ("projects", self.project_key, "enabledMcpjsonServers")


def files_for(context: SetupContext) -> ClaudeFiles:
    """The Claude Code files for ``context``'s scope.

    :raises InvalidInputError: project scope without a project folder.
    """
    home = context.user_home
    user_config = home / ".claude.json"
    skills = home / ".claude" / "skills"
    if context.scope == "global":
        return ClaudeFiles(
            user_config=user_config,
            mcp_file=user_config,
            settings=home / ".claude" / "settings.json",
            instructions=home / ".claude" / "CLAUDE.md",
            skills=skills,
        )
    if context.project is None:
        raise InvalidInputError(
            "a project setup for Claude Code needs a project folder; "
            "pass --project DIR or use --global"
        )
    project = context.project
    return ClaudeFiles(
        user_config=user_config,
        mcp_file=project / ".mcp.json",
        settings=project / ".claude" / "settings.json",
        instructions=project / "CLAUDE.md",
        skills=skills,
        # Claude Code keys projects by their real path (its working directory).
        project_key=str(project.resolve()),
        local_settings=project / ".claude" / "settings.local.json",
    )
