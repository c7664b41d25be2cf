"""What a hook prints itself when no daemon answers a session start or a prompt.

A daemon that cannot start, hangs or answers with an error must not leave
the agent without its memory's instructions: a session start still gets the
fixed part of its reminder (how to recall, what to save), a prompt the
one-line save reminder, in the format of the harness whose payload came.
Core rendered both in advance, with each harness's own delivery, into the
hook table (:mod:`thatch.hooktable`, read by :mod:`thatch.hookcmd.answers`),
from the texts of :mod:`thatch.instructions.reminders`, which the daemon's reminders
use too.

A named command's payload may be another harness's (``Harness.claim``, as
the daemon tells it): that harness's stand-in for the command's kind of
event is printed then. Nothing is printed for an event whose answer nobody
reads (a tool call, a stop), for a named command that answers beside
another one (``HookCommand.stand_in`` false: ``flush-predictions``), for a
harness whose hook cannot carry the text (its stand-in is empty), nor
without a table.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from thatch.hookcmd.answers import HookTable
    from thatch.hookcmd.args import HookArgs


def output(
    args: HookArgs, payload: Mapping[str, Any], environ: Mapping[str, str], table: HookTable
) -> str:
    """The hook's stdout standing in for the daemon's answer ("" for none)."""
    if args.command == "hook":
        harness = table.harnesses.get((args.harness or "").lower())
        return str(harness["stand_in"].get((args.event or "").lower(), "")) if harness else ""
    command = table.commands.get(args.command)
    if command is None or command["stand_in"] is None:
        return ""
    serving = command["harness"]
    claimant = table.claimant(serving, payload, environ)
    if claimant != serving:
        # Another harness's payload: answered as that harness answers its own hooks.
        return str(table.harnesses[claimant]["by_kind"].get(command["answer"], ""))
    return str(command["stand_in"]["json" if args.json else "plain"])
