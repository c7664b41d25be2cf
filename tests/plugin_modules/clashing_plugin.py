"""A plugin that is not installed and adds a command core has already: ``thatch search``."""

from __future__ import annotations

from collections.abc import Iterable

from thatch.plugin import Command, hookimpl


@hookimpl
def thatch_commands() -> Iterable[Command]:
    return [Command("search", "a search of its own", lambda args, context: 0)]
