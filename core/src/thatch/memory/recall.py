"""Recall: memories found by meaning and by words, fused into one ranking."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Literal

from thatch.memory.fusion import fuse, words_weight
from thatch.plugin.embedder import Embedder
from thatch.plugin.records import RecallHit, Scope
from thatch.plugin.storage import MemoryStorage

RecallMode = Literal["hybrid", "vector", "words"]
#: The words weight of the single-list modes; hybrid takes it from the query.
_MODE_WORDS_WEIGHT: dict[str, float] = {"vector": 0.0, "words": 1.0}
#: Each list is searched this many times deeper than the results asked for,
#: so a memory ranked low by one signal can still be lifted by the other.
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 20
#: Threads that run words searches beside the embedding; a daemon serves a
#: few recalls at once at most, and a busy pool only queues the search.
_WORKERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="thatch-words")


def recall(
    storage: MemoryStorage,
    embedder: Embedder,
    query: str,
    scope: Scope,
    *,
    limit: int = 5,
    mode: RecallMode = "hybrid",
    min_cosine: float | None = None,
    record_threshold: float | None = None,
    include_archived: bool = False,
) -> list[RecallHit]:
    """The ``limit`` best memories in ``scope`` for ``query``.

    ``min_cosine`` drops hits whose meaning is further than that from the
    query, whatever their words. ``record_threshold``, the recall threshold,
    counts the hits relevant by it as recalled (see :func:`recorded`); None
    counts none. ``include_archived`` also searches the archived memories.
    """
    if not query.strip() or limit <= 0:
        return []
    depth = max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)
    model = embedder.model_id
    # The words search needs no embedding: in hybrid mode it runs on a worker
    # thread while this one embeds the query and searches by meaning (the
    # model run, SQLite and a PostgreSQL round trip all release the GIL).
    words = (
        _WORKERS.submit(storage.text_search, query, scope, depth, include_archived=include_archived)
        if mode == "hybrid"
        else None
    )
    vector = embedder.embed_query(query)
    by_meaning = (
        storage.vector_search(vector, model, scope, depth, include_archived=include_archived)
        if mode != "words"
        else []
    )
    if words is not None:
        by_words = words.result()
    elif mode == "words":
        by_words = storage.text_search(query, scope, depth, include_archived=include_archived)
    else:
        by_words = []

    cosine = {hit.id: hit.score for hit in by_meaning}
    missing = [hit.id for hit in by_words if hit.id not in cosine]
    if missing:
        for memory_id, stored in storage.embeddings(missing, model).items():
            cosine[memory_id] = float(stored @ vector)

    # A memory without a vector of this model cannot be compared: fuse leaves
    # it out, so it waits for `thatch reembed` rather than being ranked on
    # words alone.
    fused = fuse(
        [(hit.id, hit.score) for hit in by_meaning],
        [(hit.id, hit.score) for hit in by_words],
        cosine,
        words_weight=_MODE_WORDS_WEIGHT.get(mode, words_weight(query)),
    )
    if min_cosine is not None:
        fused = [item for item in fused if cosine[item.id] >= min_cosine]
    fused = fused[:limit]
    memories = storage.get_memories(item.id for item in fused)
    hits = [
        RecallHit(
            memory=memories[item.id],
            score=round(item.score, 4),
            cosine=round(cosine[item.id], 4),
            text_rank=item.text_rank,
        )
        for item in fused
        if item.id in memories
    ]
    if record_threshold is not None:
        counted = recorded(hits, record_threshold)
        if counted:
            storage.record_recall(counted, datetime.now(UTC))
    return hits


def is_relevant(hit: RecallHit, recall_threshold: float) -> bool:
    """Whether ``hit`` clears the calibrated recall threshold: what automatic recall shows."""
    return hit.cosine >= recall_threshold


def recorded(hits: Iterable[RecallHit], recall_threshold: float) -> list[int]:
    """Ids of the hits a search counts as recalled: the relevant ones, unarchived.

    A weak match was not what the search was after, and an archived memory
    is out of use: counting either would keep it from ever looking stale to
    ``thatch hygiene``.
    """
    return [
        hit.memory.id
        for hit in hits
        if is_relevant(hit, recall_threshold) and not hit.memory.archived
    ]
