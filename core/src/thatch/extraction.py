"""The extraction pipeline: tool calls in, a nudge to save what they taught out.

Every tool call a session makes (thatch's own tools and workflows excepted,
see :func:`is_thatch_workflow`) is queued, redacted and truncated, by
:func:`interactions_from`. On the next prompt, :func:`extraction_nudge`
shows the queue to the agent with the instruction to save durable facts —
the steps themselves, so any harness's agent can follow them, and the
harness's own extraction workflow where it has one — and call
``extraction_done``; the more prompts it is ignored for, the louder it gets.

Core knows no harness: how a harness's events name thatch's tools, how its
agents find them and which workflow it has are the harness's to say
(:class:`thatch.plugin.harness.Harness`); the daemon passes the event's
harness in (None for a harness no plugin serves: bare names, the steps alone).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from thatch.nudges.framing import Framing, as_data, new_nonce, quoted
from thatch.plugin.events import Event, ToolCall
from thatch.plugin.nudge import Nudge
from thatch.redact import redact
from thatch.sessions.models import Interaction, NewInteraction
from thatch.workflows import NAMES as WORKFLOW_NAMES

if TYPE_CHECKING:
    from thatch.plugin.harness import ExtractionWorkflow, Harness

__all__ = [
    "INSISTENT_LEVEL",
    "MIN_ITEM_CHARS",
    "SHOUTING_LEVEL",
    "THATCH_TOOL_NAMES",
    "THATCH_WORKFLOWS",
    "ExtractionNudge",
    "build_extraction_nudge",
    "extraction_nudge",
    "interactions_from",
    "is_thatch_tool",
    "is_thatch_workflow",
    "outcome",
    "truncate",
]

#: The MCP tools thatch serves, by their bare names.
THATCH_TOOL_NAMES: tuple[str, ...] = (
    "memory_remember",
    "memory_recall",
    "memory_list",
    "memory_show",
    "memory_forget",
    "memory_archive",
    "store_list",
    "find_duplicates",
    "dedup_mark_checked",
    "extraction_done",
    "hygiene_report",
    "prediction_query",
    "prediction_update",
    "prediction_list",
    "prediction_delete",
)

#: thatch's workflows, by name: what setup installs in every harness (skills,
#: rules, agents; see :mod:`thatch.workflows`).
THATCH_WORKFLOWS: tuple[str, ...] = tuple(sorted(WORKFLOW_NAMES))

#: The smallest room, in characters, an interaction gets in the nudge; with
#: less, fewer interactions are shown (the rest wait for a later nudge).
MIN_ITEM_CHARS = 160

# A text longer than this many times its limit is cut before it is
# redacted: redacting megabytes of output on every tool call would stall the
# daemon, and only the head and tail are kept anyway.
_PRECUT_FACTOR = 16
_PRECUT_MIN = 65_536

_MAX_TOOL_NAME = 100
_PRIORITY = 100


def is_thatch_tool(name: str, harness: Harness | None = None) -> bool:
    """Whether ``name`` is one of thatch's own MCP tools, as ``harness``'s events spell it.

    A bare name (``memory_recall``) is thatch's for every harness; the
    harness says which prefixes mark thatch's MCP server
    (``Harness.thatch_tool_prefixes``: every tool under one is thatch's,
    plugins' tools included) and what it puts before any MCP tool's name
    (``Harness.mcp_tool_marker``). None: bare names only.
    """
    if harness is not None:
        marker = harness.mcp_tool_marker
        if marker and name.startswith(marker):
            name = name[len(marker) :].strip()
        prefixes = harness.thatch_tool_prefixes
        if prefixes and name.startswith(tuple(prefixes)):
            return True
    return name in THATCH_TOOL_NAMES


# Tools, by lowercased name, that load a skill or rule into the context
# (Claude Code and opencode "Skill"; UNCERTAIN: Cursor "fetch_rules"), the
# input keys that name what they load, and the prefix of thatch's names.
_LOADER_TOOLS = frozenset({"skill", "fetch_rules"})
_LOADED_KEYS = ("skill", "command", "name", "rule_names")
_WORKFLOW_PREFIX = "thatch-"
# Tools that start a sub-agent (Claude Code "Task", now "Agent"; opencode
# "task"), and the input fields that say what it is to do.
_DISPATCH_TOOLS = frozenset({"task", "agent"})
_DISPATCH_TEXTS = ("description", "prompt")
# Tools that read a file, and the input keys of the path they read.
_READ_TOOLS = frozenset({"read", "read_file"})
_PATH_KEYS = ("file_path", "filePath", "path", "target_file")


def is_thatch_workflow(call: ToolCall) -> bool:
    """Whether ``call`` runs one of thatch's workflows rather than the user's work.

    Queuing these would make following a nudge trigger the next one. A call
    is thatch's workflow when it:

    - loads a skill or rule (``Skill``) and each one it names is thatch's:
      its name, after any ``namespace:`` part, starts with ``thatch-``;
    - starts a sub-agent (``Task``, ``Agent``) whose ``subagent_type`` starts
      with ``thatch-``, or whose ``description`` or ``prompt`` names one of
      :data:`THATCH_WORKFLOWS` or the ``extraction_done`` tool (the
      nudge's own words, which the agent hands over); a user's sub-agent
      about anything else, thatch's code included, is queued;
    - reads (``Read``) a file of a workflow: a path with a part named like
      one of :data:`THATCH_WORKFLOWS` (``.cursor/rules/thatch-fact-extractor.mdc``,
      ``skills/thatch-fact-extractor/SKILL.md``).

    Tool names are compared without case, as harnesses spell them differently.
    """
    if not isinstance(call.input, dict):
        return False
    tool = call.name.lower()
    if tool in _LOADER_TOOLS:
        return _loads_only_thatch(call.input)
    if tool in _DISPATCH_TOOLS:
        return _dispatches_thatch(call.input)
    if tool in _READ_TOOLS:
        return any(_is_workflow_path(call.input.get(key)) for key in _PATH_KEYS)
    return False


def _loads_only_thatch(given: dict[str, Any]) -> bool:
    """Whether a loader call names skills or rules, and only thatch's."""
    names: list[Any] = []
    for key in _LOADED_KEYS:
        value = given.get(key)
        if isinstance(value, list):
            names.extend(value)
        elif value:
            names.append(value)
    return bool(names) and all(_is_thatch_name(name) for name in names)


def _is_thatch_name(name: Any) -> bool:
    """Whether ``name`` (``thatch-x``, ``/thatch-x``, ``plugin:thatch-x``) is thatch's."""
    return isinstance(name, str) and name.lstrip("/").rpartition(":")[2].startswith(
        _WORKFLOW_PREFIX
    )


def _dispatches_thatch(given: dict[str, Any]) -> bool:
    """Whether a sub-agent call starts one of thatch's workflows."""
    agent = given.get("subagent_type")
    if isinstance(agent, str) and agent.startswith(_WORKFLOW_PREFIX):
        return True
    texts = [given.get(key) for key in _DISPATCH_TEXTS]
    return any(
        isinstance(text, str)
        and any(name in text for name in (*THATCH_WORKFLOWS, "extraction_done"))
        for text in texts
    )


def _is_workflow_path(path: Any) -> bool:
    """Whether ``path`` is a workflow's file or lies in a workflow's folder."""
    if not isinstance(path, str):
        return False
    parts = path.replace("\\", "/").split("/")
    return any(part.split(".", 1)[0] in THATCH_WORKFLOWS for part in parts)


def interactions_from(
    event: Event,
    harness: Harness | None = None,
    *,
    max_input: int = 1000,
    max_response: int = 2000,
) -> list[NewInteraction]:
    """The event's tool calls as interactions to queue, thatch's own calls left out.

    thatch's own calls are its tools, as ``harness`` (the event's) names
    them (:func:`is_thatch_tool`), and its workflows (:func:`is_thatch_workflow`).

    Inputs and responses become text (JSON for structured values), are
    redacted, and are cut to ``max_input`` / ``max_response`` characters,
    keeping the head and the tail. A failed call's response starts with
    its error (see :func:`outcome`).
    """
    return [
        NewInteraction(
            tool_name=call.name,
            tool_input=_clean(call.input, max_input),
            tool_response=_clean(outcome(call), max_response),
            call_id=call.call_id,
            failed=call.failed,
        )
        for call in event.tool_calls
        if not is_thatch_tool(call.name, harness) and not is_thatch_workflow(call)
    ]


def outcome(call: ToolCall) -> Any:
    """What the call gave back: for a failed call, what went wrong first.

    The error leads (``error: ...``, or ``interrupted by the user: ...``) so
    that cutting a long response to size keeps it; output the failed call
    still produced follows unless it only repeats the error.
    """
    output = salient(call.response)
    if call.error is None and not call.interrupted:
        return output
    label = "interrupted by the user" if call.interrupted else "error"
    head = f"{label}: {call.error}" if call.error else label
    rest = _as_text(output)
    if not rest.strip() or rest.strip() == (call.error or "").strip():
        return head
    return f"{head}\n{rest}"


#: Fields of a structured tool response that hold what the tool produced.
_OUTPUT_FIELDS = ("stdout", "stderr", "content", "output", "result", "error")


def salient(response: Any) -> Any:
    """What a tool produced, without the bookkeeping around it.

    Harnesses wrap output in flags and metadata (Claude Code's Bash gives
    ``{"stdout", "stderr", "interrupted", "isImage"}``, Read nests the text
    under ``file.content``). Room in a nudge is scarce, so the text fields
    are kept and the flags dropped; an unknown shape is kept whole, minus
    false and empty values.
    """
    if not isinstance(response, dict):
        return response
    nested = response.get("file")
    if isinstance(nested, dict) and isinstance(nested.get("content"), str):
        return nested["content"]
    texts = [
        response[key]
        for key in _OUTPUT_FIELDS
        if isinstance(response.get(key), str) and response[key].strip()
    ]
    if texts:
        return "\n".join(texts)
    return {key: value for key, value in response.items() if value not in (False, None, "", [], {})}


def _as_text(value: Any) -> str:
    """A tool's input or response as text: strings as they are, the rest as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _clean(value: Any, limit: int) -> str:
    """Redact and truncate ``value`` to at most ``limit`` characters."""
    text = _as_text(value)
    window = max(_PRECUT_MIN, limit * _PRECUT_FACTOR)
    if len(text) <= 2 * window:
        return truncate(redact(text).text, limit)
    # The windows are far wider than what is kept, so a secret split at a
    # window's inner edge (and so not recognised) lies far from the kept text.
    head = redact(text[:window]).text
    tail = redact(text[-window:]).text
    return truncate(head + tail, limit, hidden=len(text) - 2 * window)


def _cut_marker(count: int) -> str:
    return f"\n[... {count:,} characters cut ...]\n"


def truncate(text: str, limit: int, *, hidden: int = 0) -> str:
    """Shorten ``text`` to at most ``limit`` characters, keeping its head and tail.

    The middle is replaced by a marker saying how many characters were cut.
    Tracebacks and summaries tend to sit at the end of tool output, so the
    tail is kept as well as the head.

    :param hidden: characters already removed from the middle of ``text``
        by the caller, added to the marker's count.
    """
    if len(text) <= limit and not hidden:
        return text
    if limit <= 0:
        return ""
    # The marker is sized for the largest count it could show, so the
    # result never overshoots even when the count has fewer digits.
    widest = _cut_marker(len(text) + hidden)
    if len(widest) >= limit:
        return text[:limit]
    keep = min(limit - len(widest), len(text))
    tail = keep // 2
    head = keep - tail
    cut = len(text) - keep + hidden
    return text[:head] + _cut_marker(cut) + text[len(text) - tail :]


# ---------------------------------------------------------------------------
# The nudge.


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
