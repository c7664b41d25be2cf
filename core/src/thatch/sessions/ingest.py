"""Which tool calls a session queues for extraction, redacted and cut to size.

Every tool call a session makes (thatch's own tools and workflows excepted,
see :func:`is_thatch_workflow`) becomes a queued interaction through
:func:`interactions_from`: redacted, and cut to its head and tail. On the
next prompt :mod:`thatch.nudges.extraction` shows the queue to the agent.

Core knows no harness: how a harness's events name thatch's tools, how its
agents find them and which workflow it has are the harness's to say
(:class:`thatch.plugin.harness.Harness`); the daemon passes the event's
harness in (None for a harness no plugin serves: bare names).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from thatch.instructions.workflows import NAMES as WORKFLOW_NAMES
from thatch.plugin.events import Event, ToolCall
from thatch.redact import redact
from thatch.sessions.records import NewInteraction

if TYPE_CHECKING:
    from thatch.plugin.harness import Harness


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
#: rules, agents; see :mod:`thatch.instructions.workflows`).
THATCH_WORKFLOWS: tuple[str, ...] = tuple(sorted(WORKFLOW_NAMES))

# A text longer than this many times its limit is cut before it is
# redacted: redacting megabytes of output on every tool call would stall the
# daemon, and only the head and tail are kept anyway.
_PRECUT_FACTOR = 16
_PRECUT_MIN = 65_536


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

    Tool names are redacted. Inputs and responses become text (JSON for
    structured values), are redacted, and are cut to ``max_input`` /
    ``max_response`` characters, keeping the head and the tail. A failed
    call's response starts with its error (see :func:`outcome`).
    """
    return [
        NewInteraction(
            # A tool's name is the harness's or an MCP server's to choose: redacted as well.
            tool_name=redact(call.name).text,
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
