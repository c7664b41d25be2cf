"""Handlers of the memory commands: remember, search, list, show, forget, archive, stores."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from thatch.api import ALL, Thatch
from thatch.api import open as open_thatch
from thatch.cli import output
from thatch.cli.inputs import answer_stdin_queries, read_stdin
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.records import GLOBAL_STORE, Memory
from thatch.result_json import memory_hit_data
from thatch.serialize import to_json_data

#: A subcommand handler: parsed arguments in, exit status out.
Handler = Callable[[argparse.Namespace], int]


def connect(args: argparse.Namespace) -> Thatch:
    """The API object for the ``--home`` (or THATCH_HOME) the user chose."""
    return open_thatch(getattr(args, "home", None))


def remember(args: argparse.Namespace) -> int:
    content = read_stdin() if args.content == "-" else args.content
    with connect(args) as th:
        result = th.remember(
            args.label, content, store=args.store, branch=args.branch, overwrite=args.overwrite
        )
    if args.json:
        output.print_json(result)
    else:
        output.describe_remember(result)
    return 0


def search(args: argparse.Namespace) -> int:
    with connect(args) as th:
        if args.query == "-":
            return _search_stdin(th, args)
        _refuse_query_word_as_store(th, args.query, args.store)
        hits = th.recall(
            args.query,
            stores=args.store,
            limit=args.limit,
            mode=args.mode,
            min_cosine=args.min_cosine,
            include_archived=args.archived,
        )
        threshold = th.thresholds().recall
    if args.json:
        output.print_json([memory_hit_data(hit, threshold) for hit in hits])
    else:
        output.print_hits(hits, threshold)
    return 0


def _refuse_query_word_as_store(th: Thatch, query: str, store: str | None) -> None:
    """A one-part word is never a store: it is most likely the rest of an unquoted query."""
    if store is None or "/" in store or store in (GLOBAL_STORE, ALL):
        return
    raise InvalidInputError(
        f"{store!r} is not a store name (stores are 'global' or 'owner/name'); to search for "
        f"several words, quote them: thatch search {shlex.quote(f'{query} {store}')}; "
        f"{th.stores_listed()}"
    )


def _search_stdin(th: Thatch, args: argparse.Namespace) -> int:
    threshold = th.thresholds().recall

    def answer(query: str, store: str | None, limit: int) -> tuple[Sequence[str], list[Any]]:
        hits = th.recall(
            query,
            stores=store,
            limit=limit,
            mode=args.mode,
            min_cosine=args.min_cosine,
            include_archived=args.archived,
        )
        return th.stores_for(store), [memory_hit_data(hit, threshold) for hit in hits]

    return answer_stdin_queries(answer, args.store, args.limit)


def list_memories(args: argparse.Namespace) -> int:
    with connect(args) as th:
        memories = th.list(args.store, include_archived=args.archived)
    return output.emit(args.json, memories, output.print_memories)


def show(args: argparse.Namespace) -> int:
    with connect(args) as th:
        memory = th.show(args.label, args.store)
    return output.emit(args.json, memory, output.print_memory)


def _change(verb: str, change: Callable[[Thatch, str, str | None], Memory]) -> Handler:
    """A handler that applies ``change`` to one memory and says what it did."""

    def handler(args: argparse.Namespace) -> int:
        with connect(args) as th:
            memory = change(th, args.label, args.store)
        return output.emit(
            args.json, memory, lambda m: output.say(f"{verb} '{m.label}' in {m.store}")
        )

    return handler


forget = _change("forgot", Thatch.forget)
archive = _change("archived", Thatch.archive)
unarchive = _change("unarchived", Thatch.unarchive)


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
