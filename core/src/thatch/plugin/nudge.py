"""A nudge: text a plugin wants the agent to read before it answers a prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

#: Tier 1: the agent must act (unsaved tool output). Tier 2: context for this
#: prompt (recalled memories, the user's decision model). Tier 3: a fallback
#: reminder, shown only when nothing else is.
TIERS = (1, 2, 3)


@attrs.frozen
class Nudge:
    """One candidate piece of injected context."""

    #: Who made it: ``extraction``, ``recall``, ``decisions``, ``reminder`` or a plugin's name.
    source: str
    text: str
    tier: int = attrs.field(default=2, validator=attrs.validators.in_(TIERS))
    #: Order within a tier: higher first.
    priority: int = 0
    #: A shorter form used when ``text`` does not fit the budget (None: drop it).
    short_text: str | None = None
    #: Memories the nudge shows, so the same memory is not shown again soon.
    memory_ids: tuple[int, ...] = ()
    #: Bookkeeping to do only if the nudge is delivered (e.g. log the
    #: predictions it shows). Core runs it after the hook has its answer; one
    #: that raises is logged and not tried again (core's own bookkeeping keeps
    #: a write the storage refused and retries it).
    on_delivered: Callable[[], None] | None = attrs.field(
        default=None, eq=False, repr=False, kw_only=True
    )


#: Between two nudges in plain-text delivery.
SEPARATOR = "\n\n"


def plain_text(nudges: Sequence[Nudge]) -> str:
    """The nudges' texts separated by blank lines ("" for none): most harnesses read this."""
    return SEPARATOR.join(nudge.text for nudge in nudges)
