"""Built-in ``plain-delivery``: nudges as plain text, for harnesses no plugin claims."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from thatch.nudges.delivery import plain
from thatch.plugin.specs import hookimpl

if TYPE_CHECKING:
    from thatch.plugin.events import Event
    from thatch.plugin.nudge import Nudge


@hookimpl(trylast=True)
def thatch_deliver(nudges: Sequence[Nudge], event: Event, harness: str) -> str:
    """The nudges' texts separated by blank lines; runs after every harness plugin."""
    return plain(nudges)
