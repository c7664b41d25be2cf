"""Held nudges as the session store writes them: one JSON list per session.

Some harnesses (Cursor) cannot read context from their prompt hook, so core
holds the nudges composed for a prompt until the session's next event whose
output the agent does read (see ``thatch_context_kinds``). The file keeps
what delivery needs — each nudge's text, order and the memories it shows —
not ``short_text`` (composition already chose the text) nor
``on_delivered``: a callback cannot be written to a file, so the store keeps
it in memory next to the row (:meth:`thatch.sessions.SessionStore.hold`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from thatch.plugin.nudge import Nudge

#: A held nudge's ``on_delivered`` (None: it has none).
Callback = Callable[[], None] | None


def encode(nudges: Sequence[Nudge]) -> str:
    """The nudges as the JSON text of a ``held`` row."""
    return json.dumps(
        [
            {
                "source": nudge.source,
                "text": nudge.text,
                "tier": nudge.tier,
                "priority": nudge.priority,
                "memory_ids": list(nudge.memory_ids),
            }
            for nudge in nudges
        ]
    )


def decode(text: str, callbacks: Sequence[Callback] = ()) -> list[Nudge]:
    """The nudges of a ``held`` row, with ``callbacks[i]`` as the i-th one's ``on_delivered``.

    :param text: what :func:`encode` wrote.
    :param callbacks: the callbacks kept when the set was held; fewer (none
        after a daemon restart) leaves the rest without one.
    """
    return [
        Nudge(
            source=item["source"],
            text=item["text"],
            tier=item["tier"],
            priority=item["priority"],
            memory_ids=tuple(item["memory_ids"]),
            on_delivered=callbacks[index] if index < len(callbacks) else None,
        )
        for index, item in enumerate(json.loads(text))
    ]
