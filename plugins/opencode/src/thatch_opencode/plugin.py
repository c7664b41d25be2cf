"""The pluggy entry point: opencode's events, its delivery, and its setup target."""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

from thatch_opencode import HARNESS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from thatch.plugin import Event, Harness, Nudge
    from thatch.plugin.setup import SetupTarget


@hookimpl
def thatch_parse_event(harness: str, hook_event: str, payload: Mapping[str, Any]) -> Event | None:
    """The core event for ``thatch hook opencode EVENT``; None for other harnesses."""
    if harness != HARNESS:
        return None
    # Imported here so that loading the plugin (every thatch command) stays cheap.
    from thatch_opencode.events import parse_event

    return parse_event(hook_event, payload)


@hookimpl
def thatch_deliver(nudges: Sequence[Nudge], event: Event, harness: str) -> str | None:
    """Nudges as plain text: the JS plugin puts it in a message part; None for other harnesses."""
    if harness != HARNESS:
        return None
    from thatch.plugin import plain_text as plain

    return plain(nudges)


@hookimpl
def thatch_setup_targets() -> Iterable[SetupTarget]:
    """opencode's setup target: opencode.json, the instructions and the JS plugin."""
    from thatch_opencode.target import OpencodeTarget

    return [OpencodeTarget()]


@hookimpl
def thatch_harnesses() -> Iterable[Harness]:
    """The one harness this plugin integrates."""
    from thatch_opencode.harness import OpencodeHarness

    return [OpencodeHarness()]
