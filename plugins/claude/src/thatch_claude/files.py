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

With ``CLAUDE_CONFIG_DIR`` set, Claude Code keeps its user-level files there
instead: ``$CLAUDE_CONFIG_DIR/.claude.json`` (not ``~/.claude.json``), and
``settings.json``, ``CLAUDE.md`` and ``skills/`` in that folder rather than
in ``~/.claude``.
"""

from __future__ import annotations

from pathlib import Path

import attrs
from thatch.plugin import InvalidInputError, SetupContext

#: The MCP server's name: Claude Code shows its tools as ``mcp__thatch__<tool>``.
SERVER_NAME = "thatch"


@attrs.frozen
class ClaudeFiles:
    """The files of one scope, and the user-level ones every scope may touch."""

    #: ``~/.claude.json``: user-scope MCP servers and per-project approvals.
    user_config: Path
    #: ``~/.claude/settings.json``: the user-level settings every project merges in.
    user_settings: Path
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


def config_dir(context: SetupContext) -> Path:
    """Claude Code's user-level folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    named = context.environ.get("CLAUDE_CONFIG_DIR")
    if named:
        return Path(named).expanduser()
    return context.user_home / ".claude"


def files_for(context: SetupContext) -> ClaudeFiles:
    """The Claude Code files for ``context``'s scope.

    :raises InvalidInputError: project scope without a project folder.
    """
    folder = config_dir(context)
    custom = bool(context.environ.get("CLAUDE_CONFIG_DIR"))
    # Claude Code keeps .claude.json next to the folder by default, inside it when it is moved.
    user_config = folder / ".claude.json" if custom else context.user_home / ".claude.json"
    user_settings = folder / "settings.json"
    skills = folder / "skills"
    if context.scope == "global":
        return ClaudeFiles(
            user_config=user_config,
            user_settings=user_settings,
            mcp_file=user_config,
            settings=user_settings,
            instructions=folder / "CLAUDE.md",
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
        user_settings=user_settings,
        mcp_file=project / ".mcp.json",
        settings=project / ".claude" / "settings.json",
        instructions=project / "CLAUDE.md",
        skills=skills,
        # Claude Code keys projects by their real path (its working directory).
        project_key=str(project.resolve()),
        local_settings=project / ".claude" / "settings.local.json",
    )
