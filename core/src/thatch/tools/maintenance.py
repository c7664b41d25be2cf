"""The upkeep tools: near-duplicates, the hygiene report, and acknowledging extraction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from thatch.hygiene import MAX_STALE_DAYS, STALE_DAYS
from thatch.names import MAX_LABEL, MAX_STORE
from thatch.tools.memory import LABEL, STORE_OF_MEMORY
from thatch.tools.schema import arguments, integer, string
from thatch.tools.spec import Tool, ToolContext

#: Longer than any session id a harness hands out (Claude's are UUIDs).
MAX_SESSION_ID = 200

STORE_OR_ALL = string(
    "A store name ('global' or 'owner/repo'), or 'all' (the default).", max_length=MAX_STORE
) | {"default": "all"}


def _duplicates(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    return ctx.thatch.duplicates(args["store"])


def _mark_checked(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    th = ctx.thatch
    th.mark_reviewed(args["label"], args["other"], args.get("store"))
    store = th.show(args["label"], args.get("store")).store
    return {"checked": True, "label": args["label"], "other": args["other"], "store": store}


def _hygiene(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    return ctx.thatch.hygiene(args["store"], stale_days=args["days"])


def _extraction_done(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    session_id = args["session_id"]
    drained = ctx.app.sessions.extraction_done(session_id)
    return {"session_id": session_id, "drained": drained}


FIND_DUPLICATES = Tool(
    name="find_duplicates",
    description=(
        "Find pairs of memories in one store that mean nearly the same and that nobody has "
        "reviewed yet, closest first, with their cosine. For each pair either merge them "
        "(memory_remember the combined fact under one label, then memory_forget the other) "
        "or, when both should stay, call dedup_mark_checked so the pair is not reported again."
    ),
    input_schema=arguments({"store": STORE_OR_ALL}),
    handler=_duplicates,
    read_only=True,
)

MARK_CHECKED = Tool(
    name="dedup_mark_checked",
    description=(
        "Record that two memories of one store were reviewed as near-duplicates and both "
        "stay, so find_duplicates and hygiene_report stop reporting the pair."
    ),
    input_schema=arguments(
        {
            "label": LABEL,
            "other": string("The other memory's label.", max_length=MAX_LABEL),
            "store": STORE_OF_MEMORY,
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
