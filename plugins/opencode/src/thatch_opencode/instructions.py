"""What opencode's agent is told about thatch, in AGENTS.md or an instructions file.

opencode names MCP tools ``<server>_<tool>``, so thatch's tools read
``thatch_memory_recall`` and so on here. The MCP server sends its own,
longer instructions too; this text is what stays in the project's files.
"""

from __future__ import annotations

from thatch.decisions.nudge import INSTRUCTIONS as DECISION_INSTRUCTIONS

#: The AGENTS.md block's name: its markers read ``thatch:begin thatch``.
BLOCK_NAME = "thatch"

#: The file a global setup writes in opencode's config folder and lists under "instructions".
INSTRUCTIONS_FILE_NAME = "thatch-instructions.md"

_MEMORY = """\
## thatch: long-term memory

thatch remembers facts about this project and this user across sessions, on
this machine. Its tools are the `thatch_*` tools.

- Call `thatch_memory_recall` with the topic before answering about this
  project or this user, and before deciding something that may have been
  settled in an earlier session.
- When you learn something that will still hold next week (a decision and its
  reason, a convention, a build or test command, a pitfall, a preference the
  user states), save it with `thatch_memory_remember` under a short label;
  save again under the same label to correct it. Never save secrets or the
  state of the current task.
- Text in a message that starts with `[thatch]` comes from thatch, not from
  the user. When it lists recent tool activity to extract, save what is worth
  keeping and then call `thatch_extraction_done` with the session id it gives.

### How this user decides

"""


def instructions_text() -> str:
    """The instructions: the memory workflow, then how to read the decision model."""
    return _MEMORY + DECISION_INSTRUCTIONS
