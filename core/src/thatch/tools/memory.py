"""The memory tools: remember, recall, list, show, forget, archive, and the stores.

Results have the shapes of the matching ``thatch ... --json`` commands, so a
script and an agent read the same data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from thatch.memory.names import MAX_BRANCH, MAX_LABEL, MAX_STORE
from thatch.memory.writer import MAX_CONTENT
from thatch.plugin.tool import Tool, ToolContext
from thatch.result_json import memory_hit_data
from thatch.serialize import to_json_data
from thatch.tools.schema import arguments, boolean, integer, string

#: The most results one recall may ask for: more floods the agent's context.
MAX_RECALL = 50

STORE_SCOPE = string(
    "Which stores to search: a store name ('global' or 'owner/repo'), or 'all'. "
    "Default: this project's store and global.",
    max_length=MAX_STORE,
)
STORE_OF_MEMORY = string(
    "The memory's store ('global' or 'owner/repo'). Default: this project's store, then global.",
    max_length=MAX_STORE,
)
LABEL = string("The memory's label, e.g. 'test-command'.", max_length=MAX_LABEL)


def _remember(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    return ctx.thatch.remember(
        args["label"],
        args["content"],
        store=args.get("store"),
        branch=args.get("branch"),
        overwrite=args["overwrite"],
    )


def _recall(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    th = ctx.thatch
    hits = th.recall(
        args["query"],
        stores=args.get("store"),
        limit=args["limit"],
        include_archived=args["include_archived"],
    )
    threshold = th.thresholds().recall
    return [{**memory_hit_data(hit, threshold), "archived": hit.memory.archived} for hit in hits]


def _list(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    return ctx.thatch.list(args.get("store"), include_archived=args["include_archived"])


def _show(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    return ctx.thatch.show(args["label"], args.get("store"))


def _forget(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    memory = ctx.thatch.forget(args["label"], args.get("store"))
    return {"action": "forgotten", "memory": to_json_data(memory)}


def _archive(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    if args["unarchive"]:
        memory, action = ctx.thatch.unarchive(args["label"], args.get("store")), "unarchived"
    else:
        memory, action = ctx.thatch.archive(args["label"], args.get("store")), "archived"
    return {"action": action, "memory": to_json_data(memory)}


def _stores(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    th = ctx.thatch
    current = th.repo_store
    return [{**to_json_data(info), "current": info.name == current} for info in th.stores()]


REMEMBER = Tool(
    name="memory_remember",
    description=(
        "Save a durable fact so that future sessions know it: a decision and its reason, a "
        "convention of this codebase, how to build, test or deploy, a pitfall that cost time, "
        "or a preference the user stated. Write the content as a self-contained statement "
        "that can be acted on without this conversation, with the why. Give it a short, "
        "stable label naming the topic, e.g. 'test-command' or 'error-style'. Saving under "
        "an existing label is refused (the error quotes the stored memory) unless overwrite "
        "is true: to correct a fact, reuse its label with overwrite: true rather than adding "
        "a near-copy. Skip transient task state and what the code already says. "
        "Secrets are redacted before saving. Returns the memory, the action (created, "
        "updated, unchanged), the number of redacted secrets, and similar memories already "
        "saved (consider merging with them)."
    ),
    input_schema=arguments(
        {
            "label": LABEL,
            "content": string("The fact, in one to a few sentences.", max_length=MAX_CONTENT),
            "store": string(
                "Where to save: 'global' for facts about the user that hold in every project, "
                "or 'owner/repo'. Default: this project's store (global outside a git "
                "repository).",
                max_length=MAX_STORE,
            ),
            "branch": string(
                "Recall this memory only on this git branch (for facts about unmerged work). "
                "Default: every branch.",
                max_length=MAX_BRANCH,
            ),
            "overwrite": boolean(
                "Replace the memory already saved under this label. Without it, an existing "
                "label is refused."
            ),
        },
        "label",
        "content",
    ),
    handler=_remember,
    idempotent=True,
)

RECALL = Tool(
    name="memory_recall",
    description=(
        "Search saved memories by meaning and by words. Call it before answering a question "
        "about this project or this user, before a decision the user may already have made, "
        "and whenever something seems to have been settled earlier (conventions, commands, "
        "past decisions, preferences). Searches this project's store and global unless "
        "'store' says otherwise, and archived memories only with include_archived. Returns "
        "matches best first, each with label, store, content, score, cosine, archived and "
        "'relevant' (true when the match clears the model's calibrated threshold; other "
        "matches may be unrelated)."
    ),
    input_schema=arguments(
        {
            "query": string(
                "What you want to know, in words: a question or a topic.", max_length=MAX_CONTENT
            ),
            "store": STORE_SCOPE,
            "limit": integer(
                "How many memories at most.", minimum=1, maximum=MAX_RECALL, default=5
            ),
            "include_archived": boolean(
                "Also search archived memories (outdated ones kept for reference)."
            ),
        },
        "query",
    ),
    handler=_recall,
    read_only=True,
)

LIST = Tool(
    name="memory_list",
    description=(
        "List saved memories (store, label, content, branch, dates), by store and label: "
        "this project's store and global, one store, or 'all'. Use it to review what is "
        "known or to find a label; to find memories about a topic use memory_recall."
    ),
    input_schema=arguments(
        {
            "store": STORE_SCOPE,
            "include_archived": boolean("Also list archived memories."),
        }
    ),
    handler=_list,
    read_only=True,
)

SHOW = Tool(
    name="memory_show",
    description=(
        "Show one memory in full by its label: content, store, branch, model, dates and how "
        "often it was recalled. Looks in 'store' if given, else this project's store, then "
        "global."
    ),
    input_schema=arguments({"label": LABEL, "store": STORE_OF_MEMORY}, "label"),
    handler=_show,
    read_only=True,
)

FORGET = Tool(
    name="memory_forget",
    description=(
        "Delete a memory for good; it cannot be restored. Use it when a memory is wrong or "
        "the user asks to forget it. To stop a memory being recalled while keeping it, use "
        "memory_archive instead. Returns the deleted memory."
    ),
    input_schema=arguments({"label": LABEL, "store": STORE_OF_MEMORY}, "label"),
    handler=_forget,
    destructive=True,
    idempotent=True,
)

ARCHIVE = Tool(
    name="memory_archive",
    description=(
        "Hide a memory from recall and from default listings without deleting it (outdated, "
        "but worth keeping), or bring it back with unarchive: true. Returns the memory with "
        "its new state."
    ),
    input_schema=arguments(
        {
            "label": LABEL,
            "store": STORE_OF_MEMORY,
            "unarchive": boolean("Bring an archived memory back into recall instead."),
        },
        "label",
    ),
    handler=_archive,
    idempotent=True,
)

STORES = Tool(
    name="store_list",
    description=(
        "List the memory stores (global, and one per git repository named 'owner/repo') "
        "with how many active and archived memories each holds; 'current' marks this "
        "project's store."
    ),
    input_schema=arguments({}),
    handler=_stores,
    read_only=True,
)

TOOLS = (REMEMBER, RECALL, LIST, SHOW, FORGET, ARCHIVE, STORES)
