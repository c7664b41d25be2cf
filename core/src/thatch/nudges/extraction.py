"""The extraction nudge: the queued tool calls, shown with the instruction to save what they taught.

The agent is given the steps themselves, so any harness's agent can follow
them, and the harness's own extraction workflow where it has one, and asked
to call ``extraction_done``; the more prompts it is ignored for, the louder
it gets. The queue is filled by :mod:`thatch.sessions.ingest`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from thatch.nudges.framing import Framing, as_data, new_nonce, quoted
from thatch.plugin.nudge import Nudge
from thatch.redact import redact
from thatch.sessions.ingest import truncate
from thatch.sessions.records import Interaction

if TYPE_CHECKING:
    from thatch.plugin.harness import ExtractionWorkflow, Harness

#: The smallest room, in characters, an interaction gets in the nudge; with
#: less, fewer interactions are shown (the rest wait for a later nudge).
MIN_ITEM_CHARS = 160

_MAX_TOOL_NAME = 100
_PRIORITY = 100


@attrs.frozen
class ExtractionNudge:
    """An extraction nudge and how much of the queue it covers."""

    nudge: Nudge
    #: Interactions listed in the full text.
    shown: int
    #: The last seq the nudge covers: ``extraction_done`` drains up to it.
    through_seq: int


#: Nudges ignored from which the nudge is insistent, and from which it is in
#: capitals: the original's steps (polite while 0 or 1 were ignored).
INSISTENT_LEVEL = 2
SHOUTING_LEVEL = 3


@attrs.frozen
class _Naming:
    """How the nudge names the harness's workflow and thatch's tools."""

    #: The harness's workflow, or None: the steps alone.
    workflow: ExtractionWorkflow | None = None
    #: Put before each thatch tool name (``Harness.tool_prefix``).
    tool_prefix: str = ""

    @classmethod
    def of(cls, harness: Harness | None) -> _Naming:
        if harness is None:
            return cls()
        return cls(harness.extraction_workflow, harness.tool_prefix)


def extraction_nudge(
    session_id: str,
    interactions: Sequence[Interaction],
    level: int,
    budget: int,
    *,
    total: int | None = None,
    nonce: str | None = None,
    harness: Harness | None = None,
) -> Nudge:
    """The extraction nudge for a session's queue (see :func:`build_extraction_nudge`)."""
    built = build_extraction_nudge(
        session_id, interactions, level, budget, total=total, nonce=nonce, harness=harness
    )
    return built.nudge


def build_extraction_nudge(
    session_id: str,
    interactions: Sequence[Interaction],
    level: int,
    budget: int,
    *,
    total: int | None = None,
    nonce: str | None = None,
    harness: Harness | None = None,
) -> ExtractionNudge:
    """Build the tier-1 nudge that asks the agent to save what the queue taught.

    The text is a header, the instruction (use the harness's workflow where
    it has one; read the interactions, save with ``memory_remember``, then
    call ``extraction_done`` for this session) and the oldest interactions,
    numbered and framed as data (see :mod:`thatch.nudges.framing`), cut so
    the whole text, framing included, fits ``budget``. ``short_text`` is the
    header, instruction and count alone: it quotes no recorded text, so it
    needs no framing.

    :param session_id: the session whose queue this is.
    :param interactions: the queued interactions, oldest first (may be the
        first few of a longer queue).
    :param level: nudges already ignored: polite below
        :data:`INSISTENT_LEVEL`, in capitals from :data:`SHOUTING_LEVEL`.
    :param budget: the most characters the text may have.
    :param total: the queue's length, when ``interactions`` is only its start.
    :param nonce: the framing's nonce; drawn fresh when not given.
    :param harness: the session's harness, whose workflow and tool names the
        text uses (``Harness.extraction_workflow``, ``Harness.tool_prefix``);
        None: the steps alone, the bare tool names.
    :raises ValueError: ``interactions`` is empty or ``budget`` is below 1.
    """
    if not interactions:
        raise ValueError(f"no interactions to nudge about in session {session_id!r}")
    if budget < 1:
        raise ValueError(f"the extraction nudge budget is {budget}; give at least 1 character")
    count = max(total or 0, len(interactions))
    naming = _Naming.of(harness)
    short = _clip(_lead(session_id, level, count, naming, listed=False), budget)
    framing = Framing(_ORIGIN, nonce or new_nonce())
    lead = _lead(session_id, level, count, naming, listed=True)
    shown, items = _fit_items(lead, interactions, count, budget, framing.cost)
    if shown:
        text = _clip(framing.around(_with_count(lead, count, shown), items), budget)
        through = interactions[shown - 1].seq
    else:
        text = short
        through = interactions[-1].seq
    nudge = Nudge(
        source="extraction",
        text=text,
        tier=1,
        priority=_PRIORITY,
        short_text=short,
    )
    return ExtractionNudge(nudge=nudge, shown=shown, through_seq=through)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _header(level: int, count: int) -> tuple[str, str, str]:
    """The header, what opens the instruction and what closes it, by how often it was ignored."""
    interactions = _plural(count, "tool interaction")
    if level < INSISTENT_LEVEL:
        header = f"[thatch] {interactions} from this session may hold knowledge worth keeping."
        return header, "", "."
    be = "is" if count == 1 else "are"
    ignored = f"this request has been ignored for {_plural(level, 'prompt')}"
    closing = ". This reminder repeats on every prompt until you do."
    if level < SHOUTING_LEVEL:
        header = f"[thatch] Reminder: {interactions} {be} still unsaved; {ignored}."
        return header, "Before you answer: ", closing
    header = f"[thatch] Action required: {interactions} {be} still unsaved; {ignored}."
    return header, "Stop and do this first: ", closing


def _lead(session_id: str, level: int, count: int, naming: _Naming, *, listed: bool) -> str:
    """Header and instruction, louder the more nudges were ignored.

    Tool, workflow names and the session id stay as written even in
    capitals: the agent must call them exactly. The session id comes from
    the harness's payload, so it is quoted: no character of it can start a
    line.
    """
    header, opening, closing = _header(level, count)
    # (text, verbatim): verbatim parts are names the agent must type exactly.
    parts = [(header + "\n" + opening, False)]
    workflow = naming.workflow
    if workflow is not None:
        verb = "follow" if workflow.kind == "rule" else "use"
        parts += [
            (f"{verb} the ", False),
            (workflow.name, True),
            (f" {workflow.kind}{workflow.handoff}: ", False),
        ]
    # The steps themselves too: an agent without the workflow can follow them.
    source = "read the interactions below" if listed else "review your recent tool calls"
    parts.append((f"{source}, save each durable project or user fact with ", False))
    if not opening:
        # Nothing opens the instruction: its first word starts the line.
        first = parts[1][0]
        parts[1] = (first[0].upper() + first[1:], False)
    prefix = naming.tool_prefix
    parts += [
        (prefix + "memory_remember", True),
        (
            " (skip one-off output, progress, what is saved), then call ",
            False,
        ),
        (prefix + "extraction_done", True),
        (" with ", False),
        (f"session_id={quoted(session_id)}", True),
        (closing, False),
    ]
    shout = level >= SHOUTING_LEVEL
    lead = "".join(text if verbatim or not shout else text.upper() for text, verbatim in parts)
    if listed:
        return lead
    return lead + "\n" + f"Queued: {_plural(count, 'interaction')} (too long to list here)."


def _with_count(lead: str, count: int, shown: int) -> str:
    """The lead, and when some interactions wait for later, a line saying so."""
    line = _count_line(count, shown)
    return f"{lead}\n{line}" if line else lead


def _count_line(count: int, shown: int) -> str:
    if shown >= count:
        return ""  # the header gives the count; every room left goes to the interactions
    return (
        f"Queued: {_plural(count, 'interaction')}; the oldest {shown} are shown below, "
        "the rest come in a later reminder."
    )


def _fit_items(
    lead: str,
    interactions: Sequence[Interaction],
    count: int,
    budget: int,
    framing_cost: int,
) -> tuple[int, list[str]]:
    """As many interactions as fit with at least :data:`MIN_ITEM_CHARS` each, rendered.

    ``lead`` (the header and instruction) and ``framing_cost`` characters of
    ``budget`` go to the text around them.

    :return: how many are shown, and their texts (each on its own lines).
    """
    for shown in range(min(len(interactions), budget // MIN_ITEM_CHARS), 0, -1):
        fixed = len(_with_count(lead, count, shown)) + framing_cost
        room = budget - fixed - shown  # one newline before each item
        if room // shown >= MIN_ITEM_CHARS:
            break
    else:
        return 0, []
    chosen = interactions[:shown]
    fields = [(_as_shown(item.tool_input), _as_shown(item.tool_response)) for item in chosen]
    titles = [_title(number, item) for number, item in enumerate(chosen, start=1)]
    needs = [
        len(title) + len(_INPUT) + len(_RESPONSE) + len(given) + len(got)
        for title, (given, got) in zip(titles, fields, strict=True)
    ]
    items = []
    for title, (given, got), room_for_item in zip(titles, fields, _share(needs, room), strict=True):
        content = room_for_item - len(title) - len(_INPUT) - len(_RESPONSE)
        given_room, got_room = _share([len(given), len(got)], content)
        items.append(
            title + _INPUT + truncate(given, given_room) + _RESPONSE + truncate(got, got_room)
        )
    return shown, items


#: Where the framed interactions come from, as the framing's note says.
_ORIGIN = "tool calls"
_INPUT = "\ninput: "
_RESPONSE = "\nresponse: "


def _title(number: int, item: Interaction) -> str:
    name = as_data(truncate(item.tool_name, _MAX_TOOL_NAME).replace("\n", " "))
    return f"[{number}] {name}" + (" (failed)" if item.failed else "")


def _as_shown(text: str) -> str:
    """A queued field as shown: redacted again in case it was queued by other code, and
    made fit for the framing before it is cut, so its escapes count against the budget.
    """
    return as_data(redact(text).text)


def _share(needs: Sequence[int], room: int) -> list[int]:
    """Split ``room`` among ``needs``: none gets more than it needs, the rest share equally."""
    given = [0] * len(needs)
    left = max(room, 0)
    order = sorted(range(len(needs)), key=needs.__getitem__)
    for rank, index in enumerate(order):
        given[index] = min(needs[index], left // (len(needs) - rank))
        left -= given[index]
    return given


def _clip(text: str, budget: int) -> str:
    """The last guard: a nudge never exceeds its budget, whatever the inputs."""
    return text[:budget]
