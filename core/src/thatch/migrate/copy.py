"""Copying a home's data from one set of storage parts to another, through the contracts only.

Every read and write goes through :class:`~thatch.plugin.storage.MemoryStorage`,
:class:`~thatch.plugin.decision_storage.DecisionStorage` and
:class:`~thatch.plugin.prediction_log.PredictionStorage`, so any backend a
plugin offers can be either end. Ids are each backend's own: rows are matched
across the two ends by keys that do not depend on them, and running the copy
again adds nothing.

The keys:

- a memory: its store and label (what makes a memory unique anywhere);
- a reviewed pair: the (store, label) of both memories;
- a matcher: store, description and creation time; a prediction: store,
  statement and creation time (with a count among equal keys, so two rows
  alike in all three still match one to one);
- an edge: its matcher's and prediction's keys;
- a provenance entry: copied with its prediction, which is written whole;
- a fire: its prediction's key, session, time, confidence and score;
- a prediction-log row: its id and session, as the log itself keys it.

What the target already holds under a key stays as it is there. Every part
is counted at the end: each source row's key must be found in the target.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from thatch.plugin.errors import StorageError

if TYPE_CHECKING:
    from thatch.plugin.decision_storage import DecisionKind, DecisionStorage
    from thatch.plugin.decisions import Fire, Matcher, Prediction, Provenance
    from thatch.plugin.prediction_log import PredictionStorage
    from thatch.plugin.storage import MemoryStorage, Verdict

#: Rows written per call (one transaction each).
BATCH = 500
#: Progress is told every this many rows of a part.
PROGRESS_EVERY = 1000

#: The parts, in the order they are copied and reported.
PARTS = (
    "memories",
    "reviewed pairs",
    "matchers",
    "predictions",
    "provenance",
    "edges",
    "fires",
    "prediction log",
)

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


class Progress(Protocol):
    """Told how far a part has gone: ``(part, rows done, rows in the source)``."""

    def __call__(self, part: str, done: int, total: int) -> None: ...


class Parts(Protocol):
    """The three storage parts of one end of a migration."""

    @property
    def memories(self) -> MemoryStorage: ...
    @property
    def decisions(self) -> DecisionStorage: ...
    @property
    def predictions(self) -> PredictionStorage: ...


@attrs.frozen
class PartCount:
    """One part of a migration: rows in the source, added to the target, found there after."""

    part: str
    source: int
    added: int
    #: Source rows whose key the target holds after the copy: ``source`` when all went well.
    found: int

    @property
    def complete(self) -> bool:
        return self.found == self.source


def migrate(source: Parts, target: Parts, progress: Progress | None = None) -> list[PartCount]:
    """Copy every part of ``source`` that ``target`` lacks; the counts, each part checked.

    :raises StorageError: a part's count does not match after the copy
        (the error names each such part and both counts).
    """
    tell: Progress = progress or (lambda part, done, total: None)
    counts = _Copy(source, target, tell).run()
    short = [count for count in counts if not count.complete]
    if short:
        listed = "; ".join(
            f"{count.part}: {count.source} in the source, {count.found} found in the target"
            for count in short
        )
        raise StorageError(
            f"the target lacks rows of the source ({listed}); a row the target already held "
            "under the same key was kept as it was there. Run thatch migrate again to add "
            "what a failed write left out; if the counts still differ, check the target "
            "with thatch doctor"
        )
    return counts


class _Copy:
    """One run: the two ends, and the source-to-target id maps the later parts need."""

    def __init__(self, source: Parts, target: Parts, tell: Progress) -> None:
        self.source = source
        self.target = target
        self.tell = tell
        self.memory_ids: dict[int, int] = {}
        self.matcher_ids: dict[int, int] = {}
        self.prediction_ids: dict[int, int] = {}
        #: Each prediction's key by its id at either end, to match the fires.
        self.source_keys: dict[int, Hashable] = {}
        self.target_keys: dict[int, Hashable] = {}

    def run(self) -> list[PartCount]:
        counts = [self.memories(), self.reviewed_pairs(), self.matchers()]
        counts += self.predictions()
        counts += [self.edges(), self.fires(), self.prediction_log()]
        return counts

    # -- memories ------------------------------------------------------------
    def memories(self) -> PartCount:
        source, target = self.source.memories, self.target.memories
        wanted = source.list_memories(None, include_archived=True)
        there = {(m.store, m.label) for m in target.list_memories(None, include_archived=True)}
        missing = [m for m in wanted if (m.store, m.label) not in there]
        added = 0
        for done, batch in _batches("memories", missing, self.tell, len(wanted) - len(missing)):
            vectors = _vectors(batch, lambda ids, model: source.embeddings(ids, model))
            written = target.restore_memories([(m, vectors[m.id]) for m in batch])
            added += sum(written)
            self.tell("memories", done, len(wanted))
        after = {
            (m.store, m.label): m.id for m in target.list_memories(None, include_archived=True)
        }
        for memory in wanted:
            found = after.get((memory.store, memory.label))
            if found is not None:
                self.memory_ids[memory.id] = found
        return PartCount("memories", len(wanted), added, len(self.memory_ids))

    def reviewed_pairs(self) -> PartCount:
        source, target = self.source.memories, self.target.memories
        stores = sorted({m.store for m in source.list_memories(None, include_archived=True)})
        wanted: list[tuple[int, int, Verdict]] = []
        there: set[tuple[int, int]] = set()
        for store in stores:
            for (first, second), verdict in source.review_verdicts(store).items():
                wanted.append((first, second, verdict))
            there |= set(target.review_verdicts(store))
        added = 0
        for first, second, verdict in wanted:
            pair = self._mapped_pair(first, second)
            if pair is not None and pair not in there:
                target.mark_reviewed(*pair, verdict)
                added += 1
        after: set[tuple[int, int]] = set()
        for store in stores:
            after |= set(target.review_verdicts(store))
        found = sum(1 for first, second, _ in wanted if self._mapped_pair(first, second) in after)
        self.tell("reviewed pairs", len(wanted), len(wanted))
        return PartCount("reviewed pairs", len(wanted), added, found)

    def _mapped_pair(self, first: int, second: int) -> tuple[int, int] | None:
        low, high = self.memory_ids.get(first), self.memory_ids.get(second)
        if low is None or high is None:
            return None
        return (min(low, high), max(low, high))

    # -- the decision model ----------------------------------------------------
    def matchers(self) -> PartCount:
        source, target = self.source.decisions, self.target.decisions
        wanted = _keyed(source.list_matchers(), _matcher_key)
        there = _keyed(target.list_matchers(), _matcher_key)
        missing = [m for key, m in wanted.items() if key not in there]
        added = 0
        for done, batch in _batches("matchers", missing, self.tell, len(wanted) - len(missing)):
            vectors = _vectors(batch, _decision_vectors(source, "matcher"))
            added += len(target.restore_matchers([(m, vectors[m.id]) for m in batch]))
            self.tell("matchers", done, len(wanted))
        after = _keyed(target.list_matchers(), _matcher_key)
        self.matcher_ids = {m.id: after[key].id for key, m in wanted.items() if key in after}
        return PartCount("matchers", len(wanted), added, len(self.matcher_ids))

    def predictions(self) -> list[PartCount]:
        """The predictions, and their provenance written with them."""
        source, target = self.source.decisions, self.target.decisions
        wanted = _keyed(source.list_predictions(), _prediction_key)
        there = _keyed(target.list_predictions(), _prediction_key)
        missing = [p for key, p in wanted.items() if key not in there]
        trails = _by_prediction(source.signals())
        added = entries_added = 0
        for done, batch in _batches("predictions", missing, self.tell, len(wanted) - len(missing)):
            vectors = _vectors(batch, _decision_vectors(source, "prediction"))
            items = [(p, vectors[p.id], trails.get(p.id, [])) for p in batch]
            added += len(target.restore_predictions(items))
            entries_added += sum(len(trail) for _, _, trail in items)
            self.tell("predictions", done, len(wanted))
        after = _keyed(target.list_predictions(), _prediction_key)
        self.prediction_ids = {p.id: after[key].id for key, p in wanted.items() if key in after}
        self.source_keys = {p.id: key for key, p in wanted.items()}
        self.target_keys = {p.id: key for key, p in after.items()}
        target_trails = _by_prediction(target.signals())
        entries = sum(len(trail) for trail in trails.values())
        found = 0
        for source_id, trail in trails.items():
            copied = target_trails.get(self.prediction_ids.get(source_id, -1), [])
            found += sum(
                (Counter(map(_entry_key, trail)) & Counter(map(_entry_key, copied))).values()
            )
        self.tell("provenance", entries, entries)
        return [
            PartCount("predictions", len(wanted), added, len(self.prediction_ids)),
            PartCount("provenance", entries, entries_added, found),
        ]

    def edges(self) -> PartCount:
        source, target = self.source.decisions, self.target.decisions
        wanted = source.edges_from([m.id for m in source.list_matchers()])
        added = 0
        for done, edge in enumerate(wanted, 1):
            ends = self._mapped_edge(edge.matcher_id, edge.prediction_id)
            if ends is not None and target.link(*ends, edge.weight):
                added += 1
            self.tell("edges", done, len(wanted))
        after = {
            (e.matcher_id, e.prediction_id) for e in target.edges_from(self.matcher_ids.values())
        }
        found = sum(1 for e in wanted if self._mapped_edge(e.matcher_id, e.prediction_id) in after)
        return PartCount("edges", len(wanted), added, found)

    def _mapped_edge(self, matcher_id: int, prediction_id: int) -> tuple[int, int] | None:
        matcher = self.matcher_ids.get(matcher_id)
        prediction = self.prediction_ids.get(prediction_id)
        return None if matcher is None or prediction is None else (matcher, prediction)

    def fires(self) -> PartCount:
        source, target = self.source.decisions, self.target.decisions
        wanted = _keyed(source.fires(), lambda f: _fire_key(f, self.source_keys))
        there = _keyed(target.fires(), lambda f: _fire_key(f, self.target_keys))
        # One call logs the fires of one showing: a session's, at one time.
        shown: dict[tuple[str | None, datetime], list[tuple[int, float, float]]] = defaultdict(list)
        for key, fire in wanted.items():
            prediction = self.prediction_ids.get(fire.prediction_id)
            if key not in there and prediction is not None:
                shown[(fire.session, fire.fired_at)].append(
                    (prediction, fire.confidence, fire.score)
                )
        added = 0
        already = len(wanted) - sum(map(len, shown.values()))
        for (session, when), fires in shown.items():
            target.record_fires(session, fires, when)
            added += len(fires)
            self.tell("fires", already + added, len(wanted))
        after = _keyed(target.fires(), lambda f: _fire_key(f, self.target_keys))
        found = sum(1 for key in wanted if key in after)
        self.tell("fires", len(wanted), len(wanted))
        return PartCount("fires", len(wanted), added, found)

    # -- the prediction log ----------------------------------------------------
    def prediction_log(self) -> PartCount:
        source, target = self.source.predictions, self.target.predictions
        wanted = source.list_prediction_entries()
        there = {(e.id, e.session_id) for e in target.list_prediction_entries()}
        missing = [e for e in wanted if (e.id, e.session_id) not in there]
        added = 0
        for done, batch in _batches(
            "prediction log", missing, self.tell, len(wanted) - len(missing)
        ):
            added += sum(target.record_predictions(batch))
            self.tell("prediction log", done, len(wanted))
        after = {(e.id, e.session_id) for e in target.list_prediction_entries()}
        found = sum(1 for e in wanted if (e.id, e.session_id) in after)
        return PartCount("prediction log", len(wanted), added, found)


def _batches(
    part: str, rows: Sequence[T], tell: Progress, skipped: int
) -> Iterator[tuple[int, Sequence[T]]]:
    """``rows`` :data:`BATCH` at a time, each with the rows done once it is written."""
    tell(part, skipped, skipped + len(rows))
    for start in range(0, len(rows), BATCH):
        yield skipped + min(start + BATCH, len(rows)), rows[start : start + BATCH]


def _vectors(
    rows: Sequence[Any], read: Callable[[list[int], str], dict[int, Any]]
) -> dict[int, Any]:
    """Each row's stored vector (of the row's own model), read one model at a time."""
    by_model: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        by_model[row.model].append(row.id)
    found: dict[int, Any] = {}
    for model, ids in by_model.items():
        found |= read(ids, model)
    lost = [row for row in rows if row.id not in found]
    if lost:
        raise StorageError(
            f"the source has no vector of model {lost[0].model!r} for {type(lost[0]).__name__} "
            f"{lost[0].id}; run thatch reembed on the source, then migrate again"
        )
    return found


def _decision_vectors(
    storage: DecisionStorage, kind: DecisionKind
) -> Callable[[list[int], str], dict[int, Any]]:
    return lambda ids, model: storage.decision_embeddings(kind, ids, model)


def _keyed(rows: Iterable[T], key: Callable[[T], K]) -> dict[tuple[K, int], T]:
    """Rows by key, each numbered among the rows of an equal key (in the order given)."""
    seen: Counter[K] = Counter()
    keyed: dict[tuple[K, int], T] = {}
    for row in rows:
        k = key(row)
        keyed[(k, seen[k])] = row
        seen[k] += 1
    return keyed


def _matcher_key(m: Matcher) -> Hashable:
    return (m.store, m.description, m.created_at)


def _prediction_key(p: Prediction) -> Hashable:
    return (p.store, p.statement, p.created_at)


def _fire_key(fire: Fire, prediction_keys: dict[int, Hashable]) -> Hashable:
    return (
        prediction_keys.get(fire.prediction_id),
        fire.session,
        fire.fired_at,
        fire.confidence,
        fire.score,
    )


def _entry_key(entry: Provenance) -> Hashable:
    return (entry.signal, entry.detail, entry.session, entry.created_at)


def _by_prediction(entries: Iterable[Provenance]) -> dict[int, list[Provenance]]:
    """Provenance entries grouped by their prediction's id, in the order given."""
    grouped: dict[int, list[Provenance]] = defaultdict(list)
    for entry in entries:
        grouped[entry.prediction_id].append(entry)
    return grouped
