"""The pluggy entry point (``[project.entry-points.thatch] example-receptor = ...``).

Every thatch command loads plugins, so this module imports only the hook
marker; the source and the rule are imported when the receptor asks for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

if TYPE_CHECKING:
    from thatch.plugin import InterpretationRule, SignalSource


@hookimpl
def thatch_receptor_signals() -> Iterable[SignalSource]:
    """The one source this plugin adds: ``recurring-error``."""
    from thatch_example_receptor.signals import RecurringError

    return [RecurringError()]


@hookimpl
def thatch_receptor_rules() -> Iterable[InterpretationRule]:
    """The one rule this plugin adds: ``recurring-error``."""
    from thatch_example_receptor.rules import RecurringErrorRule

    return [RecurringErrorRule()]
