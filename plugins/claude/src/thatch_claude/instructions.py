"""What Claude Code is told about thatch: the CLAUDE.md block and the skills.

Claude Code reads the workflow itself from the MCP server's instructions,
which arrive with the tools they describe; the CLAUDE.md block only says
where the tools and that text come from, so the agent does not read it
twice. The skills hold the longer procedures: thatch's memory workflows
(written once for every harness, handed over in ``SetupContext.briefing``),
each rendered with the front matter Claude Code reads (``name``,
``description``) to ``~/.claude/skills/<name>/SKILL.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from thatch.plugin.setup import Briefing

#: The CLAUDE.md block's name (its markers read ``thatch:begin thatch``).
BLOCK_NAME = "thatch"

_BLOCK = """\
## thatch: memory for this project and this user

thatch keeps long-term memory and a model of how this user decides, on this
machine. Its tools are `mcp__thatch__*`; when and how to use them is in the
instructions of the thatch MCP server, and the `thatch-*` skills hold the
longer procedures. If no `mcp__thatch__` tool is available, the server is not
connected: tell the user to run `thatch doctor`.
"""


def instructions_block() -> str:
    """The text of the CLAUDE.md block: a pointer to the tools and their instructions."""
    return _BLOCK


@attrs.frozen
class Skill:
    """One skill file as shipped in the package."""

    name: str
    content: str


def skills(briefing: Briefing) -> list[Skill]:
    """Every skill thatch installs, with its ``SKILL.md`` text, from ``briefing``'s workflows."""
    return [
        Skill(
            workflow.name,
            f"---\nname: {workflow.name}\ndescription: {workflow.description}\n---\n\n"
            f"{workflow.body}",
        )
        for workflow in briefing.workflows(kind="skill")
    ]
