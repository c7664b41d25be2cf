"""What Claude Code is told about thatch: the CLAUDE.md block and the skills.

The skills are Markdown files with front matter in this package
(``thatch_claude/skills/<name>.md``), each written as is to
``~/.claude/skills/<name>/SKILL.md``.
"""

from __future__ import annotations

from importlib import resources

import attrs
from thatch.decisions.nudge import INSTRUCTIONS as DECISION_INSTRUCTIONS

#: The skills thatch installs, in the order the CLAUDE.md block lists them.
SKILL_NAMES = (
    "thatch-project-primer",
    "thatch-fact-extractor",
    "thatch-dedup-classifier",
    "thatch-session-reflection",
    "thatch-decision-model",
)

#: The CLAUDE.md block's name (its markers read ``thatch:begin thatch``).
BLOCK_NAME = "thatch"

_MEMORY = """\
## thatch: memory for this project and this user

thatch keeps long-term memory on this machine; its tools are `mcp__thatch__*`.

- Before answering about this project or this user, or deciding something
  that may have been settled before, call `memory_recall` with the topic.
- Save each durable fact (a decision and its reason, a convention, a build or
  test command, a pitfall, a stated preference) with `memory_remember`, one
  fact per memory under a short stable label; reuse the label to correct it.
  Never save secrets or transient task state.
- A prompt may carry a thatch extraction nudge listing recent tool activity:
  save what is worth keeping (skill `thatch-fact-extractor`), then call
  `extraction_done` with the session id it gives. It repeats until you do.
- Skills: `thatch-project-primer` (learn a repository), `thatch-fact-extractor`,
  `thatch-dedup-classifier` (tidy duplicates), `thatch-session-reflection`
  (save what a session taught), `thatch-decision-model`.

### The user decision model

"""


def instructions_block() -> str:
    """The text of the CLAUDE.md block: memory workflow, skills, decision model."""
    return _MEMORY + DECISION_INSTRUCTIONS


@attrs.frozen
class Skill:
    """One skill file as shipped in the package."""

    name: str
    content: str


def skills() -> list[Skill]:
    """Every skill thatch installs, with its ``SKILL.md`` text."""
    folder = resources.files("thatch_claude") / "skills"
    return [
        Skill(name, (folder / f"{name}.md").read_text(encoding="utf-8")) for name in SKILL_NAMES
    ]
