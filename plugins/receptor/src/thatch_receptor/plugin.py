"""The pluggy entry point of the receptor (its hooks are added as the receptor is built).

Importing this module is cheap: the receptor's modules are imported only when
a hook is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

if TYPE_CHECKING:
    from thatch.plugin import Command, SignalSource


@hookimpl
def thatch_receptor_signals() -> tuple[SignalSource, ...]:
    """The built-in signal sources (:mod:`thatch_receptor.signals`), without embeddings."""
    from thatch_receptor.signals import builtin_sources

    return builtin_sources()


@hookimpl
def thatch_commands() -> tuple[Command, ...]:
    """``thatch receptor replay``: recorded events through a fresh receptor."""
    from thatch.plugin import Command

    from thatch_receptor import cli

    return (
        Command(
            name="receptor",
            help="the emotion receptor: replay recorded events through it, a live session's status",
            run=cli.run,
            arguments=cli.add_arguments,
        ),
    )
