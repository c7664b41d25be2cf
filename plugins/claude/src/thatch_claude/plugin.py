"""The pluggy entry point: Claude Code events, delivery and setup target.

Every thatch command loads plugins, so this module imports only the hook
marker; the work lives in modules imported when a hook is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from thatch.plugin import hookimpl

from thatch_claude import HARNESS

if TYPE_CHECKING:
    from thatch.plugin import Event, Harness, Nudge
    from thatch.plugin.setup import SetupTarget


@hookimpl
def thatch_parse_event(harness: str, hook_event: str, payload: Mapping[str, Any]) -> Event | None:
    """The core event of a Claude Code hook payload (``thatch hook claude EVENT``)."""
    if harness != HARNESS:
        return None
    from thatch_claude.events import parse_event
    from thatch_claude.failures import REPORTED

    return parse_event(hook_event, payload, REPORTED)


@hookimpl
def thatch_deliver(nudges: Sequence[Nudge], event: Event, harness: str) -> str | None:
    """Nudges as Claude Code reads them: plain text or ``hookSpecificOutput`` JSON."""
    if harness != HARNESS:
        return None
    from thatch_claude.delivery import deliver

    return deliver(nudges, event.hook_event)


@hookimpl
def thatch_setup_targets() -> Iterable[SetupTarget]:
    """``thatch setup --claude``: MCP registration, hooks, CLAUDE.md block and skills."""
    from thatch_claude.target import ClaudeTarget

    return [ClaudeTarget()]


@hookimpl
def thatch_harnesses() -> Iterable[Harness]:
    """The one harness this plugin integrates."""
    from thatch_claude.harness import ClaudeHarness

    return [ClaudeHarness()]
