"""Built-in ``save-reminder``: a one-line reminder to save new knowledge.

It is tier 3, so composition shows it only when no other nudge is shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.nudges.reminder import save_reminder
from thatch.plugin.nudge import Nudge
from thatch.plugin.specs import hookimpl

if TYPE_CHECKING:
    from thatch.plugin.events import Event
    from thatch.runtime import Runtime


@hookimpl
def thatch_nudges(event: Event, app: Runtime) -> list[Nudge]:
    """The save reminder, on every prompt."""
    if event.prompt is None:
        return []
    harness = app.plugins.harness(event.harness)
    return [save_reminder(harness.tool_prefix if harness is not None else "")]
