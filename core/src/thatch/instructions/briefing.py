"""The briefing core puts in every setup context: what a harness plugin writes for its agent.

A harness plugin never imports thatch's texts; setup hands it this object
(``SetupContext.briefing``), which renders the instructions
(:mod:`.agent`) and the workflows (:mod:`.workflows`) with the harness's
tool prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from thatch.instructions.agent import instructions
from thatch.instructions.workflows import workflows

if TYPE_CHECKING:
    from thatch.plugin.setup import Workflow


class CoreBriefing:
    """What thatch tells every agent, as a harness's setup receives it in its context."""

    def instructions(self, prefix: str = "", level: int = 1) -> str:
        return instructions(prefix, level)

    def workflows(self, prefix: str = "", kind: str = "skill") -> Sequence[Workflow]:
        return workflows(prefix, kind)


#: The briefing core puts in every setup context.
BRIEFING = CoreBriefing()
