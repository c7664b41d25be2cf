"""What an event's actions hold, as bits: the receptor calls a source only when it can speak.

Most built-in sources have nothing to say about most events: a failing-run
source about an event without a failing run, a search source about one
without a search. Such a source declares, as ``speaks_on`` beside its
``read``, the traits without which that ``read`` returns nothing; the
receptor works out an event's traits once (:func:`traits_of`) and leaves out
the sources that could not speak, rather than calling each to hear it say
nothing. A source that declares none (a third party's) is called on every
event, and a subclass that overrides ``read`` without declaring its own is
too (:func:`declared_traits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thatch_receptor.actions import Action

#: The event has at least one action, and none of them failed.
CLEAN = 1
#: A run among the actions failed.
FAILED_RUN = 2
#: A search or a recall with a query.
SEARCH = 4
#: A search or a recall that found nothing.
EMPTY_RESULT = 8
#: Work handed to a sub-agent.
DELEGATION = 16
#: The actions touched at least one path.
PATHS = 32


def traits_of(actions: Sequence[Action]) -> int:
    """The traits of an event's actions, or-ed together."""
    traits = 0
    failed = False
    for action in actions:
        kind = action.kind
        if action.failed:
            failed = True
            if kind == "run":
                traits |= FAILED_RUN
        if action.query and (kind == "search" or kind == "memory_read"):
            traits |= SEARCH
        if action.result_count == 0:
            traits |= EMPTY_RESULT
        if kind == "delegation":
            traits |= DELEGATION
        if action.paths:
            traits |= PATHS
    if actions and not failed:
        traits |= CLEAN
    return traits


def declared_traits(source: object) -> int | None:
    """The ``speaks_on`` declared in the class that defines the source's ``read``, if any.

    Looked up there rather than on the instance: a subclass that reads
    differently must say again when it can speak, or it is called every time.
    """
    for klass in type(source).__mro__:
        found = vars(klass)
        if "read" in found:
            declared = found.get("speaks_on")
            return declared if type(declared) is int and declared else None
    return None
