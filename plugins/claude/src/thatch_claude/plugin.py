"""The pluggy entry point: the Claude Code harness.

Every thatch command loads plugins, so this module imports only the hook
marker; the work lives in modules imported when a hook is called.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

if TYPE_CHECKING:
    from thatch.plugin import Harness


@hookimpl
def thatch_harnesses() -> Iterable[Harness]:
    """The one harness this plugin integrates."""
    from thatch_claude.harness import ClaudeHarness

    return [ClaudeHarness()]
