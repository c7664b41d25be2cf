"""The upkeep tools: near-duplicates, the hygiene report, and acknowledging extraction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from thatch.memory.duplicates import pair_key
from thatch.memory.hygiene import MAX_STALE_DAYS, STALE_DAYS
from thatch.memory.names import MAX_LABEL, MAX_STORE
from thatch.plugin.records import DuplicatePair
from thatch.plugin.storage import VERDICTS
from thatch.plugin.tool import Tool, ToolContext
from thatch.serialize import to_json_data
from thatch.tools.memory import LABEL, STORE_OF_MEMORY
from thatch.tools.schema import arguments, integer, string

if TYPE_CHECKING:
    from thatch.api import Thatch

#: Longer than any session id a harness hands out (Claude's are UUIDs).
MAX_SESSION_ID = 200

STORE_OR_ALL = string(
    "A store name ('global' or 'owner/repo'), or 'all' (the default).", max_length=MAX_STORE
) | {"default": "all"}


def _with_verdicts(th: Thatch, pairs: list[DuplicatePair], stores: str) -> list[dict[str, Any]]:
    """Pairs as JSON with their verdict: 'same' (confirmed, merge it) or None (unreviewed)."""
    verdicts = th.review_verdicts(stores)
    return [{**to_json_data(pair), "verdict": verdicts.get(pair_key(pair))} for pair in pairs]


def _duplicates(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    th = ctx.thatch
    return _with_verdicts(th, th.duplicates(args["store"]), args["store"])


def _mark_checked(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    verdict = args["verdict"]
    store = ctx.thatch.mark_reviewed(args["label"], args["other"], args.get("store"), verdict)
    return {
        "checked": True,
        "verdict": verdict,
        "label": args["label"],
        "other": args["other"],
        "store": store,
    }


def _hygiene(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    th = ctx.thatch
    report = th.hygiene(args["store"], stale_days=args["days"])
    return {
        **to_json_data(report),
        "duplicates": _with_verdicts(th, list(report.duplicates), args["store"]),
    }


def _extraction_done(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    session_id = args["session_id"]
    drained = ctx.app.sessions.extraction_done(session_id)
    return {"session_id": session_id, "drained": drained}


FIND_DUPLICATES = Tool(
    name="find_duplicates",
    description=(
        "Find pairs of memories in one store that mean nearly the same, closest first, with "
        "their cosine and verdict: null for a pair nobody has reviewed yet, 'same' for one "
        "confirmed as a duplicate that still waits to be merged. Merge a duplicate "
        "(memory_remember the combined fact under one label with overwrite: true, then "
        "memory_forget the other); when both should stay, call dedup_mark_checked with "
        "verdict 'different' so the pair is not reported again."
    ),
    input_schema=arguments({"store": STORE_OR_ALL}),
    handler=_duplicates,
    read_only=True,
)

MARK_CHECKED = Tool(
    name="dedup_mark_checked",
    description=(
        "Record your verdict on two memories of one store that find_duplicates reported: "
        "'different' (two facts, both stay: the pair is not reported again) or 'same' (one "
        "fact twice: the pair stays listed as a confirmed duplicate until you merge it). A "
        "new verdict replaces the old one."
    ),
    input_schema=arguments(
        {
            "label": LABEL,
            "other": string("The other memory's label.", max_length=MAX_LABEL),
            "store": STORE_OF_MEMORY,
            "verdict": string("Whether the two say the same thing.", enum=VERDICTS)
            | {"default": "different"},
        },
        "label",
        "other",
    ),
    handler=_mark_checked,
    idempotent=True,
)

HYGIENE = Tool(
    name="hygiene_report",
    description=(
        "Memories that may need attention: stale ones (neither updated nor recalled for "
        f"'days' days, default {STALE_DAYS}), ones tied to a git branch that no longer "
        "exists, and unreviewed near-duplicate pairs. Use it when the session-start reminder "
        "reports hygiene problems or the user asks to tidy memory; then update, archive or "
        "forget what is outdated and merge or mark the duplicates."
    ),
    input_schema=arguments(
        {
            "store": STORE_OR_ALL,
            "days": integer(
                "A memory is stale after this many days.",
                minimum=1,
                maximum=MAX_STALE_DAYS,
                default=STALE_DAYS,
            ),
        }
    ),
    handler=_hygiene,
    read_only=True,
)

EXTRACTION_DONE = Tool(
    name="extraction_done",
    description=(
        "Acknowledge an extraction nudge: call it after you have saved (with "
        "memory_remember) whatever was worth keeping from the tool activity the nudge listed, "
        "or decided nothing was. Pass the session id the nudge gave you. It empties that "
        "session's queue of pending tool interactions and stops the nudge from escalating. "
        "Returns how many interactions were drained (0 when the queue was already empty)."
    ),
    input_schema=arguments(
        {
            "session_id": string(
                "The session id quoted in the extraction nudge.", max_length=MAX_SESSION_ID
            )
        },
        "session_id",
    ),
    handler=_extraction_done,
    idempotent=True,
)

TOOLS = (FIND_DUPLICATES, MARK_CHECKED, HYGIENE, EXTRACTION_DONE)
