"""Handlers of the memory commands: remember, search, list, show, forget, archive, stores."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from thatch.api import Thatch
from thatch.api import open as open_thatch
from thatch.cli import output
from thatch.errors import InvalidInputError, ThatchError
from thatch.serialize import to_json_data


def connect(args: argparse.Namespace) -> Thatch:
    """The API object for the ``--home`` (or THATCH_HOME) the user chose."""
    return open_thatch(getattr(args, "home", None))


def remember(args: argparse.Namespace) -> int:
    content = sys.stdin.read() if args.content == "-" else args.content
    with connect(args) as th:
        result = th.remember(args.label, content, store=args.store, branch=args.branch)
    if args.json:
        output.print_json(result)
    else:
        output.describe_remember(result)
    return 0


def search(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InvalidInputError(f"--limit {args.limit} is below 1; ask for at least one result")
    with connect(args) as th:
        if args.query == "-":
            return _search_stdin(th, args)
        hits = th.recall(
            args.query,
            stores=args.store,
            limit=args.limit,
            mode=args.mode,
            min_cosine=args.min_cosine,
        )
        threshold = th.thresholds().recall
    if args.json:
        output.print_json([output.hit_data(hit, threshold) for hit in hits])
    else:
        output.print_hits(hits, threshold)
    return 0


def _search_stdin(th: Thatch, args: argparse.Namespace) -> int:
    """One JSON line out per query line in: plain text or {"query", "store", "limit"}."""
    failed = 0
    for number, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            query, store, limit = _parse_query_line(line, args)
            hits = th.recall(
                query, stores=store, limit=limit, mode=args.mode, min_cosine=args.min_cosine
            )
            answer: dict[str, Any] = {
                "query": query,
                "store": store or "default",
                "results": [output.hit_data(hit, th.thresholds().recall) for hit in hits],
            }
        except ThatchError as exc:
            failed += 1
            answer = {"line": number, "error": str(exc)}
        output.print_json_line(answer)
    return 1 if failed else 0


def _parse_query_line(line: str, args: argparse.Namespace) -> tuple[str, str | None, int]:
    text = line.strip()
    if not text.startswith("{"):
        return text, args.store, args.limit
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f'not JSON ({exc.msg}); send plain text or {{"query": "...", "store": "...", '
            '"limit": 5}'
        ) from None
    query, store, limit = (
        data.get("query"),
        data.get("store", args.store),
        data.get("limit", args.limit),
    )
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError('no "query" string in the JSON object; add one')
    if store is not None and not isinstance(store, str):
        raise InvalidInputError('"store" must be a store name or "all"')
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f'"limit" {limit!r} must be a whole number of at least 1')
    return query, store, limit


def list_memories(args: argparse.Namespace) -> int:
    with connect(args) as th:
        memories = th.list(args.store, include_archived=args.archived)
    if args.json:
        output.print_json(memories)
    else:
        output.print_memories(memories)
    return 0


def show(args: argparse.Namespace) -> int:
    with connect(args) as th:
        memory = th.show(args.label, args.store)
    if args.json:
        output.print_json(memory)
    else:
        output.print_memory(memory)
    return 0


def forget(args: argparse.Namespace) -> int:
    with connect(args) as th:
        memory = th.forget(args.label, args.store)
    _report(args, memory, f"forgot '{memory.label}' in {memory.store}")
    return 0


def archive(args: argparse.Namespace) -> int:
    with connect(args) as th:
        memory = th.archive(args.label, args.store)
    _report(args, memory, f"archived '{memory.label}' in {memory.store}")
    return 0


def unarchive(args: argparse.Namespace) -> int:
    with connect(args) as th:
        memory = th.unarchive(args.label, args.store)
    _report(args, memory, f"unarchived '{memory.label}' in {memory.store}")
    return 0


def _report(args: argparse.Namespace, record: object, message: str) -> None:
    if args.json:
        output.print_json(record)
    else:
        output.note(message)


def stores(args: argparse.Namespace) -> int:
    with connect(args) as th:
        infos = th.stores()
        current = th.repo_store
    if args.json:
        output.print_json([{**to_json_data(i), "current": i.name == current} for i in infos])
        return 0
    if not infos:
        output.note("no stores yet: save a memory with 'thatch remember LABEL CONTENT'")
    rows = [
        (info.name + (" *" if info.name == current else ""), str(info.memories), str(info.archived))
        for info in infos
    ]
    output.print_table(rows, ("STORE", "MEMORIES", "ARCHIVED"))
    return 0
