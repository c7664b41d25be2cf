"""The pluggy entry point (``[project.entry-points.thatch] example = ...``).

Every thatch command loads plugins, so this module imports only the hook
marker; the harness module is imported when the hook is called.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

if TYPE_CHECKING:
    from thatch.plugin import Harness


@hookimpl
def thatch_harnesses() -> Iterable[Harness]:
    """The one harness this plugin adds."""
    from thatch_example_harness.harness import ExampleHarness

    return [ExampleHarness()]
