"""``recurring-error``: frustration fed by one recurring error calls for what is known of it.

The receptor's default rules read the composition's axes and pattern; this
one reads a signal of its own source. When frustration fires and
``recurring-error`` contributed, it offers the error's context — the error
named in the reason, so the agent sees at once what the offer is about. It
offers (``passive``) rather than places it in the agent's context: a third
party's rule should earn ``active`` on measurements first. In deep work it
only runs the probe and caches it (``silent``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from thatch.plugin import Interpretation

from thatch_example_receptor import NAME

if TYPE_CHECKING:
    from thatch.plugin import FiringComposition, SignalReading


@dataclass
class RecurringErrorRule:
    """Offers the error's context when a recurring error helped frustration fire."""

    name: str = NAME
    #: The source whose readings the rule looks for.
    source: str = NAME

    def interpret(self, composition: FiringComposition) -> Interpretation | None:
        reading = self._reading(composition)
        if reading is None or "frustration" not in composition.fired:
            return None
        return Interpretation(
            rule=self.name,
            trigger="error_context",
            mode="silent" if composition.in_flow else "passive",
            reason=f"the same error keeps coming back: {reading.detail}",
            score=reading.value,
        )

    def _reading(self, composition: FiringComposition) -> SignalReading | None:
        """The source's strongest reading in the composition (signals come strongest first)."""
        return next((r for r in composition.signals if r.source == self.source), None)
