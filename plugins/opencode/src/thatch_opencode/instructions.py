"""What opencode's agent is told about thatch, in AGENTS.md or an instructions file.

This file is opencode's one channel for the workflow (the text comes from
``SetupContext.briefing``): the MCP server sends only a pointer once this
setup is in place (``OpencodeHarness.instruction_scopes``). opencode names
MCP tools ``<server>_<tool>``, so every tool here reads
``thatch_memory_recall`` and so on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thatch.plugin.setup import Briefing

#: The AGENTS.md block's name: its markers read ``thatch:begin thatch``.
BLOCK_NAME = "thatch"

#: The file a global setup writes in opencode's config folder and lists under "instructions".
INSTRUCTIONS_FILE_NAME = "thatch-instructions.md"

#: How opencode shows the thatch server's tools.
TOOL_PREFIX = "thatch_"


_AGENTS = """
### The thatch agents

The longer procedures are subagents. Delegate to the one whose description
fits and give it what that description asks for: it sees only its task.

{names}
"""


def instructions_text(briefing: Briefing) -> str:
    """The instructions: the memory workflow, how to read the decision model, the agents."""
    names = "\n".join(f"- `{workflow.name}`" for workflow in briefing.workflows(TOOL_PREFIX))
    return briefing.instructions(TOOL_PREFIX, level=2) + _AGENTS.format(names=names)
