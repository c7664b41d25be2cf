"""The pluggy entry point: Cursor's payloads, its hook output, and its setup target."""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

from thatch_cursor import HARNESS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from thatch.plugin import Event, Harness, Nudge
    from thatch.plugin.setup import SetupTarget


@hookimpl
def thatch_parse_event(harness: str, hook_event: str, payload: Mapping[str, Any]) -> Event | None:
    """The core event for ``thatch hook cursor EVENT``; None for other harnesses."""
    if harness != HARNESS:
        return None
    # Imported here so that loading the plugin (every thatch command) stays cheap.
    from thatch_cursor.payloads import parse_event

    return parse_event(hook_event, payload)


@hookimpl
def thatch_deliver(nudges: Sequence[Nudge], event: Event, harness: str) -> str | None:
    """Nudges as Cursor's ``{"additional_context": ...}``; None for other harnesses."""
    if harness != HARNESS:
        return None
    from thatch_cursor.delivery import deliver

    return deliver(nudges, event)


@hookimpl
def thatch_context_kinds(harness: str) -> Iterable[str] | None:
    """sessionStart and postToolUse: Cursor reads no context from beforeSubmitPrompt."""
    if harness != HARNESS:
        return None
    from thatch_cursor.delivery import CONTEXT_KINDS

    return CONTEXT_KINDS


@hookimpl
def thatch_setup_targets() -> Iterable[SetupTarget]:
    """Cursor's setup target: hooks.json, mcp.json and the thatch rule."""
    from thatch_cursor.target import CursorTarget

    return [CursorTarget()]


@hookimpl
def thatch_harnesses() -> Iterable[Harness]:
    """The one harness this plugin integrates."""
    from thatch_cursor.harness import CursorHarness

    return [CursorHarness()]
