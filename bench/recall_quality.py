"""Recall quality of thatch on the hand-written evaluation set in bench/data.

Loads bench/data/memories.jsonl into a throw-away home through the normal write
path, then runs every query of bench/data/queries.jsonl that has relevant
memories in three modes (hybrid, vector, words), with the scope an agent
working in the query's repository would have: that store plus ``global``.

``--distractors N`` adds N generated off-topic memories (``distinct_texts`` of
bench/synthetic.py, the texts of bench/import_throughput.py) spread over the
stores, so each scope is larger than the candidate depth and a memory must be
found, not just kept.

``--data bench/data/conversations`` runs the conversational set instead (2,515
turns of multi-session conversations, 722 queries of four types; written by
bench/conversation_set.py, see bench/data/conversations/README.md).

Prints recall@1, recall@5 and MRR per mode, split by query kind, then the same
metrics for fusion variants computed from the raw scored lists of each query:
reciprocal-rank fusion (recall's fusion before), score fusion with fixed or
query-dependent words weights, min-max or z-score scaling, candidate depth,
stop words, a newer-first preference for near-identical memories, and recall's
rules changed one at a time (starting weights, lean strength, places kept for
a list's first hits, a verbatim-token boost, rank ties). Each variant's
"short" columns give the most queries' worth it falls below the better of
vector and words on any query kind, with the noise of that shortfall. The
variant that calls :func:`thatch.memory.fusion.fuse` as recall does must
reproduce the hybrid mode exactly; a live run checks that (a run from
``--cache`` re-ranks the cached lists with the current fusion instead).

``--postgres`` also runs the set on a home whose memories live in a schema of
a throw-away PostgreSQL server (bench/pg_home.py), holding the same memories
with the same vectors (copied, not embedded again), and prints the modes
table per backend, how alike their hybrid top results are, and the
PostgreSQL words search ranked other ways (bench/pg_words.py: ``ts_rank``
normalizations, ``ts_rank_cd``, all words, a bm25-like word rarity), each
fused with the same vector list as recall fuses.

    uv run python bench/recall_quality.py
    uv run python bench/recall_quality.py --cache /tmp/recall.pickle  # again: seconds
    uv run python bench/recall_quality.py --postgres
    uv run python bench/recall_quality.py --data bench/data/conversations --postgres
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import pickle
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import query_products
import thatch
from data_sets import DATA, read_jsonl
from pg_home import analyze, copy_memories, load_pg_cluster, open_home, postgres_config
from pg_words import Searches
from stop_words import without_stop_words
from synthetic import distinct_texts
from thatch.api import Thatch
from thatch.memory import fusion
from thatch.memory.recall import CANDIDATE_FACTOR, MIN_CANDIDATES, RecallMode
from thatch.memory.writer import MemoryInput
from thatch.plugin.records import GLOBAL_STORE, Scope, ScoredId
from thatch.plugin.storage import MemoryStorage
from thatch_sqlite import fts

if TYPE_CHECKING:
    from thatch.plugin import Vector

MODES: tuple[RecallMode, ...] = ("hybrid", "vector", "words")
#: Query kinds of bench/data, printed in this order; other sets print theirs as they come.
KINDS = ("meaning", "words", "mixed")
#: Candidates recall fetches from each list for a limit of 5; variants go up to twice that.
DEPTH = max(5 * CANDIDATE_FACTOR, MIN_CANDIDATES)
#: The schema of the PostgreSQL home (``--postgres``).
PG_SCHEMA = "bench_quality"


@dataclass(frozen=True)
class Query:
    """One evaluation query and the labels of the memories that answer it."""

    text: str
    store: str
    relevant: frozenset[str]
    kind: str

    @property
    def stores(self) -> tuple[str, str]:
        """The search scope: the repository's store and global."""
        return (self.store, GLOBAL_STORE)


@dataclass(frozen=True)
class Lists:
    """One query's raw candidates, best first, with their scores, as fetched 2 x DEPTH deep.

    ``vector`` holds (id, cosine), ``words``, ``content_words`` and
    ``pair_words`` (id, bm25) of the query, of the query without stop words
    and of the query with its neighbouring words also matched as phrases;
    ``cosine`` covers every candidate, ``vectors`` holds their embeddings.
    """

    query: str
    vector: list[tuple[int, float]]
    words: list[tuple[int, float]]
    content_words: list[tuple[int, float]]
    pair_words: list[tuple[int, float]]
    cosine: dict[int, float]
    vectors: dict[int, Vector]


@dataclass(frozen=True)
class Metrics:
    """Mean recall@1, recall@k and mean reciprocal rank over a set of queries."""

    recall_1: float
    recall_k: float
    mrr: float
    count: int


def load_queries(path: Path) -> list[Query]:
    """The queries of queries.jsonl (with and without relevant memories)."""
    return [
        Query(
            text=str(row["query"]),
            store=str(row["store"]),
            relevant=frozenset(str(label) for label in row["relevant"]),  # type: ignore[attr-defined]
            kind=str(row.get("kind", "")),
        )
        for row in read_jsonl(path)
    ]


def load_memories(th: Thatch, path: Path) -> int:
    """Save memories.jsonl through the normal write path; returns how many were saved."""
    items = [
        MemoryInput(label=str(row["label"]), content=str(row["content"]), store=str(row["store"]))
        for row in read_jsonl(path)
    ]
    results = th.remember_many(items)
    redacted = [r.memory.label for r in results if r.redactions]
    if redacted:
        raise SystemExit(f"bench data was redacted, fix the data: {redacted}")
    return len(results)


def add_distractors(th: Thatch, count: int, stores: Sequence[str]) -> None:
    """Save ``count`` generated off-topic memories, spread evenly over ``stores``."""
    items = [
        MemoryInput(label=f"distractor-{i}", content=text, store=stores[i % len(stores)])
        for i, text in enumerate(distinct_texts(count, seed=3))
    ]
    th.remember_many(items)


def score(ranked: Sequence[str], relevant: frozenset[str], k: int) -> tuple[float, float, float]:
    """recall@1, recall@k and reciprocal rank of one ranked list of labels."""
    recall_1 = len(relevant.intersection(ranked[:1])) / len(relevant)
    recall_k = len(relevant.intersection(ranked[:k])) / len(relevant)
    rank = next((i for i, label in enumerate(ranked[:k], 1) if label in relevant), None)
    return recall_1, recall_k, (1.0 / rank if rank else 0.0)


def mean_metrics(rows: Iterable[tuple[float, float, float]]) -> Metrics:
    """Average per-query scores."""
    rows = list(rows)
    if not rows:
        return Metrics(0.0, 0.0, 0.0, 0)
    n = len(rows)
    return Metrics(
        recall_1=sum(r[0] for r in rows) / n,
        recall_k=sum(r[1] for r in rows) / n,
        mrr=sum(r[2] for r in rows) / n,
        count=n,
    )


def mode_rankings(th: Thatch, queries: Sequence[Query], limit: int) -> dict[str, list[list[str]]]:
    """Labels returned by ``th.recall`` for every query, per mode."""
    return {
        mode: [
            [
                hit.memory.label
                for hit in th.recall(
                    q.text, stores=q.stores, limit=limit, mode=mode, min_cosine=-1, record=False
                )
            ]
            for q in queries
        ]
        for mode in MODES
    }


def query_kinds(queries: Sequence[Query]) -> tuple[str, ...]:
    """The kinds of ``queries``: those of KINDS first, then the rest in order of appearance."""
    present = dict.fromkeys(q.kind for q in queries)
    return tuple(k for k in KINDS if k in present) + tuple(k for k in present if k not in KINDS)


def evaluate(
    queries: Sequence[Query], rankings: Sequence[Sequence[str]], limit: int, kind: str | None
) -> Metrics:
    """Metrics over the queries of one kind (all kinds when None)."""
    return mean_metrics(
        score(ranked, q.relevant, limit)
        for q, ranked in zip(queries, rankings, strict=True)
        if kind is None or q.kind == kind
    )


def print_modes(queries: Sequence[Query], rankings: dict[str, list[list[str]]], limit: int) -> None:
    """The side-by-side table of the three modes, overall and per query kind."""
    header = f"{'queries':<18}" + "".join(f"| {mode:^22}" for mode in MODES)
    print(header)
    print(f"{'':<18}" + f"| {'R@1':>6} {'R@' + str(limit):>6} {'MRR':>7} " * len(MODES))
    print("-" * len(header))
    for kind in (None, *query_kinds(queries)):
        cells = []
        for mode in MODES:
            m = evaluate(queries, rankings[mode], limit, kind)
            cells.append(f"| {m.recall_1:6.3f} {m.recall_k:6.3f} {m.mrr:7.3f} ")
        n = evaluate(queries, rankings["hybrid"], limit, kind).count
        print(f"{(kind or 'all') + f' ({n})':<18}" + "".join(cells))


def candidate_depth(limit: int) -> int:
    """How deep recall searches each list for ``limit`` results."""
    return max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)


def raw_lists(
    th: Thatch, queries: Sequence[Query], limit: int, seconds: dict[str, float] | None = None
) -> list[Lists]:
    """Per query, scored candidates by meaning and by words (as is, no stop words, with pairs).

    ``seconds`` gathers the time of the words searches with and without
    pairs, taken one after the other for each query.
    """
    depth = 2 * candidate_depth(limit)
    model = th.embedder.model_id
    storage = th.memory_storage
    seconds = {} if seconds is None else seconds
    lists = []
    for q in queries:
        scope = Scope(stores=q.stores, branch=th.branch)
        vector = th.embedder.embed_query(q.text)
        by_meaning = storage.vector_search(vector, model, scope, depth)
        started = time.perf_counter()
        by_words = storage.text_search(q.text, scope, depth)
        middle = time.perf_counter()
        by_pairs = pair_search(storage, q.text, scope, depth)
        seconds["words"] = seconds.get("words", 0.0) + middle - started
        seconds["pairs"] = seconds.get("pairs", 0.0) + time.perf_counter() - middle
        by_content_words = storage.text_search(without_stop_words(q.text), scope, depth)
        hits = [*by_meaning, *by_words, *by_content_words, *by_pairs]
        vectors = storage.embeddings({h.id for h in hits}, model)
        lists.append(
            Lists(
                q.text,
                [(h.id, h.score) for h in by_meaning],
                [(h.id, h.score) for h in by_words],
                [(h.id, h.score) for h in by_content_words],
                [(h.id, h.score) for h in by_pairs],
                {memory_id: float(stored @ vector) for memory_id, stored in vectors.items()},
                vectors,
            )
        )
    return lists


def pair_search(storage: MemoryStorage, query: str, scope: Scope, depth: int) -> list[ScoredId]:
    """The SQLite words search with neighbouring query words also matched as phrases.

    The storage does not ask for the pairs yet: this runs its search with
    ``fts.match_expression`` given ``fts.adjacent_pairs`` of the query's words,
    the one-line change that variant measures.
    """
    words = fts.words(query)
    plain = fts.match_expression

    def with_pairs(chosen: Sequence[str], pairs: Sequence[str] = ()) -> str | None:
        return plain(chosen, fts.adjacent_pairs(words, chosen))

    fts.match_expression = with_pairs
    try:
        return storage.text_search(query, scope, depth)
    finally:
        fts.match_expression = plain


#: A variant ranks one query's candidates (ids, best first) from its lists and the candidate depth.
Ranker = Callable[[Lists, int], list[int]]


def rrf(k: int, words_weight: float) -> Ranker:
    """Reciprocal-rank fusion (recall's fusion before score fusion), meaning weight 1."""

    def rank(one: Lists, depth: int) -> list[int]:
        score: dict[int, float] = {}
        for weight, hits in ((1.0, one.vector[:depth]), (words_weight, one.words[:depth])):
            for position, (memory_id, _) in enumerate(hits, 1):
                score[memory_id] = score.get(memory_id, 0.0) + weight / (k + position)
        return [i for i in sorted(score, key=lambda i: -score[i]) if i in one.cosine]

    return rank


def blend(
    words_weight: float | None, *, z: bool = False, lean: bool = False, gap: bool = False
) -> Ranker:
    """Score fusion with a fixed words weight, or the query-shape one when None.

    ``lean`` moves the weight towards the list with the clearer peak, measured
    as recall measures it or, with ``gap``, as the lead of the best score over
    the second, as a share of the spread of the first ten.

    Min-max scaling with leaning and the query-shape weight is recall's
    fusion; ``z`` scales each score by its mean and spread over the candidates
    instead.
    """

    def rank(one: Lists, depth: int) -> list[int]:
        vector, words = one.vector[:depth], one.words[:depth]
        ids = [i for i in dict.fromkeys([i for i, _ in vector] + [i for i, _ in words])]
        ids = [i for i in ids if i in one.cosine]
        if not ids:
            return []
        base = fusion.words_weight(one.query) if words_weight is None else words_weight
        weight = base
        if lean:
            peak = gap_peak if gap else fusion.peak
            weight = fusion.leaning_weight(
                base, peak([s for _, s in vector]), peak([s for _, s in words], floor=0.0)
            )
        bm25 = dict(words)
        meaning = scaled([one.cosine[i] for i in ids], z=z, share=False)
        text = scaled([bm25.get(i, 0.0) for i in ids], z=z, share=True)
        score = {
            i: (1 - weight) * m + weight * t for i, m, t in zip(ids, meaning, text, strict=True)
        }
        return sorted(ids, key=lambda i: (-score[i], -one.cosine[i]))

    return rank


def gap_peak(scores: Sequence[float], floor: float | None = None) -> float:
    """The lead of the best of the first ten scores over the second, per unit of their spread."""
    head = list(scores[:10])
    if floor is not None:
        head += [floor] * (10 - len(head))
    if len(head) < 2 or head[0] == head[-1]:
        return 0.0
    return (head[0] - head[1]) / (head[0] - head[-1])


def scaled(scores: Sequence[float], *, z: bool, share: bool) -> list[float]:
    """Scores as z-scores, as a share of the best (``share``), or min-max scaled."""
    if z:
        mean = sum(scores) / len(scores)
        spread = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5 or 1.0
        return [(s - mean) / spread for s in scores]
    if share:
        best = max(scores) or 1.0
        return [s / best for s in scores]
    low = min(scores)
    span = max(scores) - low or 1.0
    return [(s - low) / span for s in scores]


def recall_fusion(one: Lists, depth: int) -> list[int]:
    """The fusion hybrid recall runs, called as recall calls it."""
    fused = fusion.fuse(
        one.vector[:depth],
        one.words[:depth],
        one.cosine,
        words_weight=fusion.words_weight(one.query),
    )
    return [item.id for item in fused]


def with_depth(ranker: Ranker, factor: float) -> Ranker:
    """``ranker`` run on ``factor`` times the candidate depth."""
    return lambda one, depth: ranker(one, max(1, round(depth * factor)))


def other_words(ranker: Ranker, search: str) -> Ranker:
    """``ranker`` on another words search: "content" (no stop words) or "pairs"."""

    def rank(one: Lists, depth: int) -> list[int]:
        words = one.content_words if search == "content" else one.pair_words
        return ranker(replace(one, words=words), depth)

    return rank


def newer_first(ranker: Ranker, alike: float, created: dict[int, tuple[datetime, int]]) -> Ranker:
    """``ranker``, then the newer of two near-identical memories (cosine >= ``alike``) goes first.

    Only pairs at most three places apart in the first ten are swapped, so the
    preference reorders near duplicates without lifting a weak match.
    """

    def rank(one: Lists, depth: int) -> list[int]:
        ranked = ranker(one, depth)
        head = ranked[:10]
        for a in range(len(head)):
            for b in range(a + 1, min(a + 4, len(head))):
                first, second = head[a], head[b]
                similar = float(one.vectors[first] @ one.vectors[second]) >= alike
                if similar and created[second] > created[first]:
                    head[a], head[b] = second, first
        return head + ranked[10:]

    return rank


#: Words of a query asking for the current state, or for the first one.
_NOW = re.compile(r"\b(now|currently|current|latest|these days|in the end|today)\b", re.IGNORECASE)
_FIRST = re.compile(r"\b(originally|original|initially|first)\b", re.IGNORECASE)


def time_cued(ranker: Ranker, created: dict[int, tuple[datetime, int]], strength: float) -> Ranker:
    """``ranker``, then its first ten reordered towards the newest (or oldest) on a query cue.

    A query with a "now" word lifts newer memories and one with an "originally"
    word older ones: each of the ten gets ``strength`` x (its age rank among
    them - 0.5) added to 1 - rank / 10.
    """

    def rank(one: Lists, depth: int) -> list[int]:
        ranked = ranker(one, depth)
        sign = 1 if _NOW.search(one.query) else -1 if _FIRST.search(one.query) else 0
        head = ranked[:10]
        if not sign or len(head) < 2:
            return ranked
        by_age = {
            i: n / (len(head) - 1) for n, i in enumerate(sorted(head, key=lambda i: created[i]))
        }
        lifted = {i: 1 - n / 10 + strength * sign * (by_age[i] - 0.5) for n, i in enumerate(head)}
        return sorted(head, key=lambda i: -lifted[i]) + ranked[10:]

    return rank


def text_pairs(text: str) -> set[tuple[str, str]]:
    """Neighbouring words of ``text``, case-folded, split as the full-text index splits them."""
    tokens = [t.casefold() for t in re.findall(r"[^\W_]+", text)]
    return set(itertools.pairwise(tokens))


def pair_reranked(weight: float, texts: dict[int, str]) -> Ranker:
    """Recall's fusion plus ``weight`` x the share of the query's word pairs found in the memory.

    The pairs are counted on the candidates' text after the search, the
    re-rank alternative to matching them as phrases in the words search.
    """

    def rank(one: Lists, depth: int) -> list[int]:
        fused = fusion.fuse(
            one.vector[:depth],
            one.words[:depth],
            one.cosine,
            words_weight=fusion.words_weight(one.query),
        )
        wanted = text_pairs(one.query)
        found = {item.id: len(wanted & text_pairs(texts[item.id])) for item in fused}
        most = max(found.values(), default=0) or 1
        score = {item.id: item.score + weight * found[item.id] / most for item in fused}
        return sorted(score, key=lambda i: (-score[i], -one.cosine[i]))

    return rank


#: Recall's code-like test before a hyphen between lower-case words became prose.
_CODE_BEFORE = re.compile(r"\w[_./:\-]\w|[a-z][A-Z]|\d|[`\"]")
#: A query token recall's code test calls code-like, for the verbatim test.
_CODE_TOKEN = re.compile(r"`([^`]+)`|\"([^\"]+)\"|(\S*(?:\w[_./:\-]\w|[a-z][A-Z]|\d)\S*)")


def code_tokens(query: str) -> list[str]:
    """The code-like tokens of ``query``, case-folded: quoted text, words with marks of code."""
    found = []
    for quoted, double, bare in _CODE_TOKEN.findall(query):
        token = (quoted or double or bare).strip(".,;:?!()[]{}'").casefold()
        if token:
            found.append(token)
    return found


def tuned(
    code: float = fusion.CODE_WORDS_WEIGHT,
    prose: float = fusion.PROSE_WORDS_WEIGHT,
    *,
    pattern: re.Pattern[str] | None = None,
    power: float = 1.0,
    reserve: int = 0,
    reserve_peak: float = 0.0,
    reserve_lists: str = "both",
    within: int = 5,
    reserve_agreed: bool = False,
    agreed_first: bool = False,
    agreed_rescale: bool = False,
    verbatim: float = 0.0,
    texts: dict[int, str] | None = None,
    rank_ties: bool = False,
) -> Ranker:
    """Recall's score fusion with one or more of its rules changed.

    ``code`` / ``prose`` are the starting words weights, ``pattern`` the
    code-like test (recall's when None; recall's runner-up rule is
    ``reserve=2, reserve_lists="words", reserve_agreed=True``); ``power`` raises both peaks before
    the lean (2 leans harder towards the clearer one). ``reserve`` keeps each
    list's first ``reserve`` hits within the first ``within`` fused places
    when that list's peak is at least ``reserve_peak`` (``reserve_lists``:
    "both", "words" or "vector"), or, with ``reserve_agreed``, when both lists
    have the same first hit. ``agreed_first`` puts a
    memory first in both lists first and fuses the rest again without it, so
    its towering score does not squash the others; ``agreed_rescale`` does the
    same but keeps the weight of the whole lists. ``verbatim`` adds that much
    to a candidate whose text holds a code-like token of the query as it is
    (the candidate texts would be one more storage read). ``rank_ties`` breaks
    ties by the better of the two ranks rather than by cosine.
    """

    def weight_of(
        one: Lists, vector: Sequence[tuple[int, float]], words: Sequence[tuple[int, float]]
    ) -> float:
        if pattern is None:
            code_like = fusion.words_weight(one.query) == fusion.CODE_WORDS_WEIGHT
        else:
            code_like = bool(pattern.search(one.query))
        base = code if code_like else prose
        vector_peak = fusion.peak([s for _, s in vector]) ** power
        words_peak = fusion.peak([s for _, s in words], floor=0.0) ** power
        return fusion.leaning_weight(base, vector_peak, words_peak)

    def scored(
        one: Lists,
        vector: Sequence[tuple[int, float]],
        words: Sequence[tuple[int, float]],
        weight: float | None = None,
    ) -> list[int]:
        ids = [
            i
            for i in dict.fromkeys([i for i, _ in vector] + [i for i, _ in words])
            if i in one.cosine
        ]
        if not ids:
            return []
        weight = weight_of(one, vector, words) if weight is None else weight
        bm25 = dict(words)
        meaning = scaled([one.cosine[i] for i in ids], z=False, share=False)
        text = scaled([bm25.get(i, 0.0) for i in ids], z=False, share=True)
        score = {
            i: (1 - weight) * m + weight * t for i, m, t in zip(ids, meaning, text, strict=True)
        }
        if verbatim and texts is not None:
            tokens = code_tokens(one.query)
            for i in ids:
                if tokens and any(t in texts[i].casefold() for t in tokens):
                    score[i] += verbatim
        ranks = {i: r for r, (i, _) in enumerate(vector, 1)}
        for r, (i, _) in enumerate(words, 1):
            ranks[i] = min(ranks.get(i, r), r)
        if rank_ties:
            return sorted(ids, key=lambda i: (-round(score[i], 3), ranks[i], -one.cosine[i]))
        return sorted(ids, key=lambda i: (-score[i], -one.cosine[i]))

    def rank(one: Lists, depth: int) -> list[int]:
        vector, words = one.vector[:depth], one.words[:depth]
        if (agreed_first or agreed_rescale) and vector and words and vector[0][0] == words[0][0]:
            top = vector[0][0]
            kept = weight_of(one, vector, words) if agreed_rescale else None
            rest = scored(one, vector[1:], words[1:], kept)
            ranked = [top, *[i for i in rest if i != top]]
        else:
            ranked = scored(one, vector, words)
        agreed = bool(vector and words and vector[0][0] == words[0][0])
        if reserve and (agreed or not reserve_agreed):
            for name, hits, floor in (("vector", vector, None), ("words", words, 0.0)):
                if reserve_lists not in ("both", name):
                    continue
                if (
                    not reserve_agreed
                    and fusion.peak([s for _, s in hits], floor=floor) < reserve_peak
                ):
                    continue
                for n, (memory_id, _) in enumerate(hits[:reserve]):
                    place = within - reserve + n
                    if memory_id in ranked and ranked.index(memory_id) > place:
                        ranked.remove(memory_id)
                        ranked.insert(place, memory_id)
        return ranked

    return rank


def variants(
    created: dict[int, tuple[datetime, int]], texts: dict[int, str]
) -> list[tuple[str, Ranker]]:
    """Every fusion variant the script measures, recall's first."""
    shaped = blend(None, lean=True)
    return [
        ("score, shape + lean (recall)", recall_fusion),
        ("rrf k=60 1:1 (before)", rrf(60, 1.0)),
        ("rrf k=10 1:1", rrf(10, 1.0)),
        ("rrf k=60 words 0.5", rrf(60, 0.5)),
        ("rrf k=60 words 2", rrf(60, 2.0)),
        *((f"score, words {w:g}", blend(w)) for w in (0.2, 0.3, 0.4, 0.5, 0.6)),
        *((f"score z, words {w:g}", blend(w, z=True)) for w in (0.3, 0.5)),
        *((f"score, words {w:g} + lean", blend(w, lean=True)) for w in (0.3, 0.5)),
        ("score, shape", blend(None)),
        ("score, shape + lean by gap", blend(None, lean=True, gap=True)),
        ("score z, shape + lean", blend(None, z=True, lean=True)),
        ("shape + lean, depth x0.5", with_depth(shaped, 0.5)),
        ("shape + lean, depth x2", with_depth(shaped, 2.0)),
        ("shape + lean, no stop words", other_words(shaped, "content")),
        ("rrf k=60 1:1, no stop words", other_words(rrf(60, 1.0), "content")),
        ("words only, pairs", other_words(lambda one, depth: [i for i, _ in one.words], "pairs")),
        ("shape + lean, pairs", other_words(shaped, "pairs")),
        ("score z, shape + lean, pairs", other_words(blend(None, z=True, lean=True), "pairs")),
        ("rrf k=60 1:1, pairs", other_words(rrf(60, 1.0), "pairs")),
        ("shape + lean, newer first 0.85", newer_first(shaped, 0.85, created)),
        ("shape + lean, newer first 0.95", newer_first(shaped, 0.95, created)),
        ("shape + lean, time cue 0.4", time_cued(shaped, created, 0.4)),
        (
            "shape + lean, pairs, time cue 0.4",
            time_cued(other_words(shaped, "pairs"), created, 0.4),
        ),
        ("shape + lean, pair re-rank 0.2", pair_reranked(0.2, texts)),
        # Recall's fusion before its last change, then one rule changed at a time.
        ("before: hyphen code, no runner-up", tuned(pattern=_CODE_BEFORE)),
        *((f"before, code weight {w:g}", tuned(w, pattern=_CODE_BEFORE)) for w in (0.8, 0.85, 0.9)),
        *(
            (f"before, prose weight {w:g}", tuned(prose=w, pattern=_CODE_BEFORE))
            for w in (0.25, 0.35)
        ),
        *((f"before, lean power {p:g}", tuned(pattern=_CODE_BEFORE, power=p)) for p in (2.0, 0.5)),
        ("before, agreed top first", tuned(pattern=_CODE_BEFORE, agreed_first=True)),
        ("before, agreed top, rescale rest", tuned(pattern=_CODE_BEFORE, agreed_rescale=True)),
        ("hyphen prose, agreed top, rescale rest", tuned(agreed_rescale=True)),
        *(
            (f"before, verbatim +{v:g}", tuned(pattern=_CODE_BEFORE, verbatim=v, texts=texts))
            for v in (0.2, 0.5)
        ),
        ("before, rank ties", tuned(pattern=_CODE_BEFORE, rank_ties=True)),
        ("before, reserve both top-1", tuned(pattern=_CODE_BEFORE, reserve=1)),
        (
            "before, reserve both top-1, peak 2.5",
            tuned(pattern=_CODE_BEFORE, reserve=1, reserve_peak=2.5),
        ),
        *(
            (
                f"before, reserve {lists} top-{n}, peak {p:g}",
                tuned(pattern=_CODE_BEFORE, reserve=n, reserve_peak=p, reserve_lists=lists),
            )
            for lists in ("both", "words")
            for n in (2, 3)
            for p in (0.0, 2.0, 2.5, 2.8)
        ),
        *(
            (
                f"before, words top-2 in {w}, peak 2.5",
                tuned(
                    pattern=_CODE_BEFORE,
                    reserve=2,
                    reserve_peak=2.5,
                    reserve_lists="words",
                    within=w,
                ),
            )
            for w in (3, 4)
        ),
        *(
            (
                f"before, {lists} top-{n} in {w} if agreed",
                tuned(
                    pattern=_CODE_BEFORE,
                    reserve=n,
                    reserve_lists=lists,
                    reserve_agreed=True,
                    within=w,
                ),
            )
            for lists, n, w in (("words", 2, 5), ("words", 3, 5), ("words", 2, 4), ("both", 2, 5))
        ),
        # The hyphen rule recall has now, alone and with the others.
        ("hyphen prose, no runner-up", tuned()),
        *((f"hyphen prose, code weight {w:g}", tuned(w)) for w in (0.8, 0.9)),
        (
            "hyphen prose, words top-2, peak 2.5",
            tuned(reserve=2, reserve_peak=2.5, reserve_lists="words"),
        ),
        (
            "hyphen prose, words top-2 if agreed",
            tuned(reserve=2, reserve_lists="words", reserve_agreed=True),
        ),
        *(
            (
                f"recall + {name}",
                tuned(
                    w, prose=p, power=power, reserve=2, reserve_lists="words", reserve_agreed=True
                ),
            )
            for name, w, p, power in (
                ("lean power 2", 0.7, 0.3, 2.0),
                ("prose weight 0.25", 0.7, 0.25, 1.0),
                ("code weight 0.8", 0.8, 0.3, 1.0),
            )
        ),
    ]


def fusion_microseconds(lists: Sequence[Lists], limit: int, rounds: int = 5) -> float:
    """Median time of one :func:`recall_fusion` call (recall's fusing), in microseconds."""
    depth = candidate_depth(limit)
    times = []
    for _ in range(rounds):
        for one in lists:
            started = time.perf_counter()
            recall_fusion(one, depth)
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def variant_rankings(
    lists: Sequence[Lists], labels: dict[int, str], ranker: Ranker, limit: int
) -> list[list[str]]:
    """Labels of the fused top ``limit`` for every query under one variant."""
    depth = candidate_depth(limit)
    return [[labels[i] for i in ranker(one, depth)[:limit]] for one in lists]


def shortfall(
    queries: Sequence[Query],
    rankings: Sequence[Sequence[str]],
    parts: dict[str, list[list[str]]],
    limit: int,
    kinds: Sequence[str],
) -> tuple[float, float, float]:
    """The most queries' worth a ranking falls below the better single list of any kind.

    Returns (recall@limit, MRR) shortfalls: the largest gap to
    max(vector, words), times the number of queries of that kind; then the
    noise of the recall shortfall of that kind: two standard errors of the
    paired per-query difference, 2 x sqrt(sum of squared differences), which
    for one relevant memory a query is 2 x sqrt(queries the two disagree on).
    """
    worst_recall = worst_mrr = noise = 0.0
    for kind in kinds:
        m = evaluate(queries, rankings, limit, kind)
        parts_m = {
            mode: evaluate(queries, parts[mode], limit, kind) for mode in ("vector", "words")
        }
        better = max(parts_m, key=lambda mode: parts_m[mode].recall_k)
        gap = (parts_m[better].recall_k - m.recall_k) * m.count
        if gap > worst_recall:
            differences = [
                score(theirs, q.relevant, limit)[1] - score(ours, q.relevant, limit)[1]
                for q, ours, theirs in zip(queries, rankings, parts[better], strict=True)
                if q.kind == kind
            ]
            worst_recall, noise = gap, 2 * sum(d * d for d in differences) ** 0.5
        worst_mrr = max(worst_mrr, (max(p.mrr for p in parts_m.values()) - m.mrr) * m.count)
    return worst_recall, worst_mrr, noise


def print_variants(
    queries: Sequence[Query],
    lists: Sequence[Lists],
    labels: dict[int, str],
    parts: dict[str, list[list[str]]],
    limit: int,
    created: dict[int, tuple[datetime, int]],
    texts: dict[int, str],
) -> None:
    """The variant table: overall, per kind, and the worst shortfall against the better part."""
    kinds = query_kinds(queries)
    rk = f"R@{limit}"
    columns = "".join(f"| {kind[:10] + ' ' + rk:>14} {'MRR':>5} " for kind in kinds)
    print(
        f"{'variant':<34} | {'R@1':>5} {rk:>5} {'MRR':>5} {columns}| {'short ' + rk:>8} {'MRR':>5}"
        f" {'noise':>5}"
    )
    print("-" * (72 + 23 * len(kinds)))
    rows = [("vector only", parts["vector"]), ("words only", parts["words"])]
    rows += [
        (name, variant_rankings(lists, labels, rank, limit))
        for name, rank in variants(created, texts)
    ]
    for name, rankings in rows:
        m = evaluate(queries, rankings, limit, None)
        per_kind = "".join(
            f"| {evaluate(queries, rankings, limit, kind).recall_k:>14.3f} "
            f"{evaluate(queries, rankings, limit, kind).mrr:>5.3f} "
            for kind in kinds
        )
        short_recall, short_mrr, noise = shortfall(queries, rankings, parts, limit, kinds)
        flag = "!" if short_recall > noise else ""
        print(
            f"{name:<34} | {m.recall_1:5.3f} {m.recall_k:5.3f} {m.mrr:5.3f} {per_kind}"
            f"| {short_recall:>8.1f} {short_mrr:>5.1f} {noise:>5.1f}{flag}"
        )
    print(f"recall's fusion: {fusion_microseconds(lists, limit):.0f} us a query (median)")
    print(
        "short: the most queries' worth (gap x queries of that kind) a variant is below the "
        "better of vector and words on any kind;\nnoise: 2 standard errors of that recall "
        "shortfall, paired per query (2 x sqrt(queries the two disagree on)); ! beyond it"
    )


def cut_rankings(
    lists: Sequence[Lists],
    labels: dict[int, str],
    threshold: float,
    limit: int,
    *,
    words_pass: str = "",
) -> list[list[str]]:
    """Default hybrid rankings after dropping hits whose cosine is below ``threshold``.

    ``words_pass`` keeps a hit whatever its cosine when the words search found
    it: "words" for the search recall runs, "content" for the search of the
    query without stop words; "" keeps none.
    """
    depth = candidate_depth(limit)
    ranked = []
    for one in lists:
        passing = {
            "words": {i for i, _ in one.words[:depth]},
            "content": {i for i, _ in one.content_words[:depth]},
        }.get(words_pass, set())
        kept = [
            memory_id
            for memory_id in recall_fusion(one, depth)
            if one.cosine[memory_id] >= threshold or memory_id in passing
        ]
        ranked.append([labels[i] for i in kept[:limit]])
    return ranked


def print_min_cosine(
    th: Thatch,
    queries: Sequence[Query],
    no_answer: Sequence[Query],
    labels: dict[int, str],
    limit: int,
) -> None:
    """Hybrid recall cut at a cosine floor, as recall applies its recall threshold."""
    calibrated = th.thresholds()
    kinds = query_kinds(queries)
    answered, unanswered = raw_lists(th, queries, limit), raw_lists(th, no_answer, limit)
    official = [
        [
            hit.memory.label
            for hit in th.recall(
                q.text, stores=q.stores, limit=limit, min_cosine=calibrated.recall, record=False
            )
        ]
        for q in queries
    ]
    if official != cut_rankings(answered, labels, calibrated.recall, limit):
        raise SystemExit("the simulated cosine floor does not reproduce recall's min_cosine")
    print(
        f"\nHybrid recall with a cosine floor (th.recall's min_cosine; the calibrated recall "
        f"threshold is {calibrated.recall:g}, source: {calibrated.source}):"
    )
    print(
        f"{'floor':>16} | {'R@1':>6} {'R@' + str(limit):>6} {'MRR':>7} "
        + "".join(f"| {kind + ' R@' + str(limit):>13} " for kind in kinds)
        + f"| {'no hit: unanswerable':>20} {'answerable':>10}"
    )
    print("-" * (80 + 16 * len(kinds)))
    floors = [(-1.0, ""), (0.2, ""), (0.3, ""), (calibrated.recall, "")]
    floors += [(calibrated.recall, "words"), (calibrated.recall, "content")]
    for threshold, words_pass in floors:
        ranked = cut_rankings(answered, labels, threshold, limit, words_pass=words_pass)
        empty = cut_rankings(unanswered, labels, threshold, limit, words_pass=words_pass)
        m = evaluate(queries, ranked, limit, None)
        per_kind = "".join(
            f"| {evaluate(queries, ranked, limit, kind).recall_k:>13.3f} " for kind in kinds
        )
        name = "none" if threshold < -0.99 else f"{threshold:g}"
        name += f" +{words_pass}" if words_pass else ""
        silent = f"{sum(not r for r in empty)}/{len(empty)}"
        blank = f"{sum(not r for r in ranked)}/{len(ranked)}"
        print(
            f"{name:>16} | {m.recall_1:6.3f} {m.recall_k:6.3f} {m.mrr:7.3f} {per_kind}"
            f"| {silent:>20} {blank:>10}"
        )
    print(
        "+words: hits the words search found are kept whatever their cosine; +content: the "
        "same for\nthe words search of the query without stop words; 'no hit': queries left "
        "with no result"
    )


def print_misses(
    queries: Sequence[Query], rankings: dict[str, list[list[str]]], limit: int
) -> None:
    """Queries whose relevant memories hybrid recall did not rank first, with the top hits."""
    print(f"Hybrid queries without a relevant memory at rank 1 (top {limit} shown):")
    for index, q in enumerate(queries):
        ranked = rankings["hybrid"][index]
        if not q.relevant.intersection(ranked[:1]):
            marks = ", ".join(f"{label}{'*' if label in q.relevant else ''}" for label in ranked)
            print(f"  [{q.kind}] {q.text!r} -> {marks}")


@dataclass(frozen=True)
class BackendRun:
    """The set on the PostgreSQL home: its modes, raw lists, and its words search ranked otherwise.

    ``variants`` maps a words ranking of bench/pg_words.py to its
    (words-only, hybrid) rankings, the hybrid one fused by recall's fusion
    with the backend's vector list.
    """

    rankings: dict[str, list[list[str]]]
    lists: list[Lists]
    labels: dict[int, str]
    variants: dict[str, tuple[list[list[str]], list[list[str]]]] = field(default_factory=dict)


def postgres_run(
    pg: Thatch, searches: Searches, queries: Sequence[Query], limit: int
) -> BackendRun:
    """Modes, raw lists and words variants of ``queries`` on the PostgreSQL home ``pg``."""
    labels = {m.id: m.label for m in pg.list("all")}
    rankings = mode_rankings(pg, queries, limit)
    lists = raw_lists(pg, queries, limit)
    if variant_rankings(lists, labels, recall_fusion, limit) != rankings["hybrid"]:
        raise SystemExit("the recall fusion variant does not reproduce hybrid recall on PostgreSQL")
    storage, model = pg.memory_storage, pg.embedder.model_id
    depth = 2 * candidate_depth(limit)
    query_vectors = [pg.embedder.embed_query(q.text) for q in queries]
    variants = {}
    for name, search in searches.all().items():
        alike = []
        words_only = []
        for q, one, vector in zip(queries, lists, query_vectors, strict=True):
            hits = search(q.text, Scope(stores=q.stores, branch=pg.branch), depth)
            words_only.append([labels[h.id] for h in hits[:limit]])
            # Fusion needs the cosine of every candidate; fetch the vectors of new ones.
            new = {h.id for h in hits} - set(one.cosine)
            cosine = dict(one.cosine)
            cosine.update({i: float(v @ vector) for i, v in storage.embeddings(new, model).items()})
            alike.append(replace(one, words=[(h.id, h.score) for h in hits], cosine=cosine))
        variants[name] = (words_only, variant_rankings(alike, labels, recall_fusion, limit))
    return BackendRun(rankings, lists, labels, variants)


def alike_share(first: Sequence[Sequence[str]], second: Sequence[Sequence[str]]) -> float:
    """Mean share of labels two rankings' top lists have in common."""
    shares = [
        len(set(a) & set(b)) / max(len(a), len(b), 1) for a, b in zip(first, second, strict=True)
    ]
    return statistics.mean(shares) if shares else 1.0


def print_backends(
    queries: Sequence[Query],
    sqlite: dict[str, list[list[str]]],
    sqlite_lists: Sequence[Lists],
    sqlite_labels: dict[int, str],
    pg: BackendRun,
    limit: int,
) -> None:
    """Both backends' modes tables, how alike they rank, and PostgreSQL's words variants.

    The variants' "words alone" is the order of the raw words list, SQLite's
    too, which is what fusion is given.
    """
    pg_hybrid = variant_rankings(pg.lists, pg.labels, recall_fusion, limit)
    postgres = {**pg.rankings, "hybrid": pg_hybrid}
    for name, rankings in (("SQLite", sqlite), ("PostgreSQL", postgres)):
        print(f"\n{name} backend:")
        print_modes(queries, rankings, limit)
    same = "  ".join(f"{m} {alike_share(sqlite[m], postgres[m]):.3f}" for m in MODES)
    print(f"top-{limit} labels alike (SQLite / PostgreSQL): {same}")
    kinds = query_kinds(queries)
    rk = f"R@{limit}"
    columns = "".join(f"| {kind[:10] + ' ' + rk:>14} {'MRR':>5} " for kind in kinds)
    print(
        f"\nPostgreSQL words search ranked otherwise (words alone | fused as hybrid recall):\n"
        f"{'words ranking':<32} | {'words ' + rk:>8} {'MRR':>5} | {'hybrid R@1':>10} "
        f"{rk:>5} {'MRR':>5} {columns}"
    )
    print("-" * (78 + 23 * len(kinds)))
    bm25 = [[sqlite_labels[i] for i, _ in one.words[:limit]] for one in sqlite_lists]
    rows = [("SQLite's bm25 (recall on SQLite)", bm25, sqlite["hybrid"])]
    rows += [(name, words, hybrid) for name, (words, hybrid) in pg.variants.items()]
    for name, words, hybrid in rows:
        w = evaluate(queries, words, limit, None)
        h = evaluate(queries, hybrid, limit, None)
        per_kind = "".join(
            f"| {evaluate(queries, hybrid, limit, kind).recall_k:>14.3f} "
            f"{evaluate(queries, hybrid, limit, kind).mrr:>5.3f} "
            for kind in kinds
        )
        print(
            f"{name:<32} | {w.recall_k:>8.3f} {w.mrr:5.3f} | {h.recall_1:>10.3f} "
            f"{h.recall_k:5.3f} {h.mrr:5.3f} {per_kind}"
        )


@dataclass(frozen=True)
class Run:
    """What the variant table needs of one live run, kept by ``--cache`` to re-rank without it."""

    key: tuple[object, ...]
    queries: list[Query]
    rankings: dict[str, list[list[str]]]
    lists: list[Lists]
    labels: dict[int, str]
    created: dict[int, tuple[datetime, int]]
    texts: dict[int, str]
    postgres: BackendRun | None = None


def load_run(path: Path | None, key: tuple[object, ...]) -> Run | None:
    """The run pickled at ``path`` for the same data, limit and distractors, if there is one."""
    if path is None or not path.exists():
        return None
    with path.open("rb") as file:
        run = pickle.load(file)  # a file this script wrote, trusted as such
    return run if isinstance(run, Run) and run.key == key else None


def print_cached(run: Run, limit: int) -> None:
    """The mode and variant tables from a cached run, hybrid re-ranked by the current fusion.

    The cached hybrid column came from the recall of the run that wrote the
    cache; ranking it again with :func:`recall_fusion` shows the fusion as it
    is now, which a live run checks against recall itself.
    """
    hybrid = variant_rankings(run.lists, run.labels, recall_fusion, limit)
    rankings = {**run.rankings, "hybrid": hybrid}
    print(f"cached run: {len(run.queries)} queries; hybrid = the current fusion on cached lists\n")
    print_modes(run.queries, rankings, limit)
    print("\nFusion variants of hybrid recall:")
    print_variants(run.queries, run.lists, run.labels, rankings, limit, run.created, run.texts)
    if run.postgres is not None:
        print_backends(run.queries, rankings, run.lists, run.labels, run.postgres, limit)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of the JSONL files")
    parser.add_argument("--limit", type=int, default=5, help="results per query (default 5)")
    parser.add_argument("--misses", action="store_true", help="list queries missed at rank 1")
    parser.add_argument(
        "--distractors",
        type=int,
        default=0,
        help="also save this many generated off-topic memories, spread over the stores",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        help="pickle the raw lists of each query here; when the file holds a run of the same "
        "data, limit and distractors, print only the mode and variant tables from it "
        "(seconds instead of minutes)",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="also run the set on a home whose memories live on a throw-away PostgreSQL server",
    )
    query_products.add_option(parser)
    args = parser.parse_args(argv)

    # The data files' sizes and times too, so that a rewritten set is run again.
    files = [args.data / name for name in ("memories.jsonl", "queries.jsonl")]
    stamps = tuple((f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    key = (
        str(args.data.resolve()),
        stamps,
        args.limit,
        args.distractors,
        args.postgres,
        args.query_products,
    )
    cached = load_run(args.cache, key)
    if cached is not None:
        print_cached(cached, args.limit)
        return 0
    every_query = load_queries(args.data / "queries.jsonl")
    queries = [q for q in every_query if q.relevant]
    no_answer = [q for q in every_query if not q.relevant]
    with contextlib.ExitStack() as stack:
        home = stack.enter_context(tempfile.TemporaryDirectory(prefix="thatch-bench-"))
        query_products.configure(Path(home, "sqlite"), args.query_products)
        th = stack.enter_context(thatch.open(home=Path(home, "sqlite")))
        started = time.perf_counter()
        count = load_memories(th, args.data / "memories.jsonl")
        saved = time.perf_counter() - started
        if args.distractors:
            add_distractors(
                th, args.distractors, sorted({q.store for q in queries} | {GLOBAL_STORE})
            )
        every_memory = th.list("all")
        labels = {m.id: m.label for m in every_memory}
        # Saved in one batch, many memories share a creation time; ids keep their order.
        created = {m.id: (m.created_at, m.id) for m in every_memory}
        texts = {m.id: f"{m.label} {m.content}" for m in every_memory}
        print(
            f"model {th.embedder.model_id}; {count} memories + {args.distractors} distractors; "
            f"{len(queries)} queries with an answer, {len(no_answer)} without"
        )
        print(f"scope: the query's store + global; limit {args.limit}; record=False\n")

        started = time.perf_counter()
        rankings = mode_rankings(th, queries, args.limit)
        searched = time.perf_counter() - started
        print_modes(queries, rankings, args.limit)
        print(
            f"saving (embedding included) took {saved:.1f} s; "
            f"{len(MODES)} x {len(queries)} recalls {searched:.1f} s"
        )

        seconds: dict[str, float] = {}
        lists = raw_lists(th, queries, args.limit, seconds)
        print(
            f"\nwords search, {len(queries)} queries at depth {2 * candidate_depth(args.limit)}: "
            f"{seconds['words']:.2f} s as recall runs it, {seconds['pairs']:.2f} s with pairs"
        )
        default = variant_rankings(lists, labels, recall_fusion, args.limit)
        if default != rankings["hybrid"]:
            raise SystemExit("the recall fusion variant does not reproduce hybrid recall")
        print("\nFusion variants of hybrid recall:")
        print_variants(queries, lists, labels, rankings, args.limit, created, texts)
        postgres = None
        if args.postgres:
            server = stack.enter_context(load_pg_cluster().running_server())
            pg = stack.enter_context(
                open_home(
                    Path(home, "postgres"), th.embedder, postgres_config(server.dsn(), PG_SCHEMA)
                )
            )
            started = time.perf_counter()
            copied = copy_memories(th.memory_storage, pg.memory_storage, th.embedder.model_id)
            analyze(server.dsn(), PG_SCHEMA)
            print(
                f"\n{copied} memories copied to PostgreSQL in {time.perf_counter() - started:.1f} s"
            )
            searches = Searches(server.dsn(), PG_SCHEMA)
            stack.callback(searches.close)
            started = time.perf_counter()
            postgres = postgres_run(pg, searches, queries, args.limit)
            print(f"PostgreSQL runs took {time.perf_counter() - started:.1f} s")
            print_backends(queries, rankings, lists, labels, postgres, args.limit)
        if args.cache is not None:
            run = Run(key, queries, rankings, lists, labels, created, texts, postgres)
            with args.cache.open("wb") as file:
                pickle.dump(run, file)
        print_min_cosine(th, queries, no_answer, labels, args.limit)
        if args.misses:
            print()
            print_misses(queries, rankings, args.limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
