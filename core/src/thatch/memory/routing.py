"""Memories of some stores in one backend, of others in another: personal and shared side by side.

:class:`StoreRouter` is itself a :class:`~thatch.plugin.storage.MemoryStorage`.
It holds one storage per *place* (a backend, with the settings a
``[storage.stores]`` route gives it: see
:class:`thatch.plugin.config.StoreRoute`) and sends each call to the place
that owns the store; a read of several stores asks each place for its own and
merges the answers.

Ids. Each backend numbers its memories on its own, so the router tags them:
the id a caller sees is ``place index << 48 | the backend's id``. The first
place (the memories' own backend) has index 0, so its ids are the backend's
unchanged; the others' stay below 2**53, whole numbers a browser reads
exactly. An id whose tag names no place is one that does not exist.

Scores. A cosine is a cosine whichever backend computed it, so meaning
searches merge by score. Words scores are each backend's own scale (bm25,
ts_rank): lists of one kind of backend merge as they are, lists of different
kinds are first divided by their own best score, so that each list's best
match is 1.0 and the merged list stays positive and best first, which is all
:mod:`thatch.memory.fusion` asks of it. Recall fuses the merged lists, one per
ranker, as it fuses one backend's.

What does not cross places: a batch write is one transaction per place (an
archived memory anywhere refuses the whole batch before anything is written),
and a duplicate pair is always within one store, so within one place.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

import attrs

from thatch.plugin import sql_rows
from thatch.plugin.errors import InvalidInputError, NotFoundError, StorageError
from thatch.plugin.records import Memory, NewMemory, Scope, ScoredId, StoreInfo, WriteResult
from thatch.plugin.storage import MemoryStorage, Verdict

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]

#: Bits of a tagged id that hold the backend's own id.
ID_BITS = 48
_LOCAL = (1 << ID_BITS) - 1
#: Tags stay below 2**53 (JavaScript's exact integers): at most 32 places.
MAX_PLACES = 1 << (53 - ID_BITS)

_Item = TypeVar("_Item")


class StoreRouter:
    """A :class:`MemoryStorage` that keeps each store's memories in the place that owns it."""

    def __init__(self, places: Mapping[str, MemoryStorage], owner: Callable[[str], str]) -> None:
        """``places``: name → storage, the default first (its ids stay as they are).

        ``owner``: the name of the place that keeps a store's memories.
        """
        if not places:
            raise ValueError("a store router needs at least one place")
        if len(places) > MAX_PLACES:
            raise ValueError(f"a store router holds at most {MAX_PLACES} places, not {len(places)}")
        self._names = list(places)
        self._storages = list(places.values())
        self._index = {name: index for index, name in enumerate(self._names)}
        self._owner = owner
        self._place_of_store: dict[str, int] = {}
        #: One name per kind of backend, in place order: ``sqlite+postgres``.
        self.backend = "+".join(dict.fromkeys(storage.backend for storage in self._storages))

    @property
    def places(self) -> dict[str, MemoryStorage]:
        """Each place's storage by name, the default first."""
        return dict(zip(self._names, self._storages, strict=True))

    # -- ids ---------------------------------------------------------------
    def _place(self, store: str) -> int:
        found = self._place_of_store.get(store)
        if found is not None:
            return found
        name = self._owner(store)
        try:
            found = self._index[name]
        except KeyError:
            raise InvalidInputError(
                f"store {store!r} is routed to {name!r}, which is not open here; "
                f"the places are: {', '.join(self._names)}"
            ) from None
        # The routes never change while the router is open, and a listing
        # asks for the place of every row's store.
        self._place_of_store[store] = found
        return found

    def _tag(self, place: int, local: int) -> int:
        if not 0 <= local <= _LOCAL:
            raise StorageError(
                f"backend {self._names[place]!r} gave memory id {local}, outside 0..2**{ID_BITS}; "
                "a routed store needs ids below that"
            )
        return place << ID_BITS | local

    def _untag(self, memory_id: int) -> tuple[int, int] | None:
        """(place index, backend id), or None for an id no place handed out."""
        place = memory_id >> ID_BITS
        if memory_id < 0 or place >= len(self._storages):
            return None
        return place, memory_id & _LOCAL

    def _tagged(self, place: int, memory: Memory) -> Memory:
        if place == 0 and 0 <= memory.id <= _LOCAL:
            return memory  # the default place's ids are the backend's own
        return attrs.evolve(memory, id=self._tag(place, memory.id))

    def _by_place(self, items: Iterable[tuple[int, _Item]]) -> dict[int, list[tuple[int, _Item]]]:
        """Untagged (backend id, item) pairs grouped by place; unknown ids are dropped."""
        grouped: dict[int, list[tuple[int, _Item]]] = defaultdict(list)
        for memory_id, item in items:
            found = self._untag(memory_id)
            if found is not None:
                grouped[found[0]].append((found[1], item))
        return grouped

    def _stores_by_place(self, stores: Iterable[str]) -> dict[int, list[str]]:
        grouped: dict[int, list[str]] = defaultdict(list)
        for store in stores:
            grouped[self._place(store)].append(store)
        return grouped

    # -- lifecycle -----------------------------------------------------------
    def close(self) -> None:
        for storage in {id(storage): storage for storage in self._storages}.values():
            storage.close()

    def integrity_problems(self) -> list[str]:
        """Each place's problems, named by place, then :meth:`routing_problems`."""
        problems = [
            f"{name}: {problem}"
            for name, storage in self.places.items()
            for problem in storage.integrity_problems()
        ]
        return problems + self.routing_problems()

    def routing_problems(self) -> list[str]:
        """Stores with memories in a place that does not own them: no read sees those."""
        problems = []
        for index, storage in enumerate(self._storages):
            for info in storage.list_stores():
                owner = self._place(info.name)
                if owner != index:
                    count = info.memories + info.archived
                    problems.append(
                        f"store {info.name} has {count} memories in {self._names[index]}, "
                        f"but [storage.stores] sends it to {self._names[owner]}, so they are "
                        "not read; route the store back to export them ('thatch export --store "
                        f"{info.name}'), then import them under the new route"
                    )
        return problems

    # -- writes --------------------------------------------------------------
    def write_memories(self, items: Sequence[NewMemory]) -> list[WriteResult]:
        grouped = self._positions_by_place(item.store for item in items)
        if len(grouped) > 1:
            # Each place commits its share alone: refuse an archived memory or
            # a taken label before any place writes, as one backend refuses
            # the whole batch (each place checks again inside its transaction).
            self._refuse_before_writing(items)
        results: dict[int, WriteResult] = {}
        for place, positions in grouped.items():
            written = self._storages[place].write_memories([items[p] for p in positions])
            for position, result in zip(positions, written, strict=True):
                tagged = self._tagged(place, result.memory)
                results[position] = attrs.evolve(result, memory=tagged)
        return [results[position] for position in range(len(items))]

    def restore_memories(self, items: Sequence[tuple[Memory, Vector]]) -> list[bool]:
        """Each place restores its stores' memories (one transaction per place)."""
        created: dict[int, bool] = {}
        for place, positions in self._positions_by_place(m.store for m, _ in items).items():
            done = self._storages[place].restore_memories([items[p] for p in positions])
            created.update(zip(positions, done, strict=True))
        return [created[position] for position in range(len(items))]

    def _positions_by_place(self, stores: Iterable[str]) -> dict[int, list[int]]:
        """The positions of a batch's items, grouped by the place of each one's store."""
        grouped: dict[int, list[int]] = defaultdict(list)
        for position, store in enumerate(stores):
            grouped[self._place(store)].append(position)
        return grouped

    def _refuse_before_writing(self, items: Sequence[NewMemory]) -> None:
        for item in items:
            stored = self._storages[self._place(item.store)].get_memory(item.store, item.label)
            if stored is not None:
                sql_rows.changes_stored(stored, item)  # raises what a backend would

    def delete_memory(self, store: str, label: str) -> bool:
        return self._storages[self._place(store)].delete_memory(store, label)

    def set_archived(self, store: str, label: str, archived: bool) -> Memory | None:
        place = self._place(store)
        memory = self._storages[place].set_archived(store, label, archived)
        return None if memory is None else self._tagged(place, memory)

    def record_recall(self, ids: Sequence[int], when: datetime) -> None:
        for place, pairs in self._by_place((i, None) for i in ids).items():
            self._storages[place].record_recall([local for local, _ in pairs], when)

    def set_embeddings(self, model: str, vectors: Sequence[tuple[int, Vector]]) -> None:
        for place, pairs in self._by_place(vectors).items():
            self._storages[place].set_embeddings(model, pairs)

    def mark_reviewed(self, first_id: int, second_id: int, verdict: Verdict = "different") -> None:
        first, second = self._found(first_id), self._found(second_id)
        if first[0] != second[0]:
            raise InvalidInputError(
                f"memories {first_id} and {second_id} are kept apart, in "
                f"{self._names[first[0]]} and {self._names[second[0]]}; "
                "a duplicate pair is two memories of one store"
            )
        self._storages[first[0]].mark_reviewed(first[1], second[1], verdict)

    def _found(self, memory_id: int) -> tuple[int, int]:
        found = self._untag(memory_id)
        if found is None:
            raise NotFoundError(f"no memory with id {memory_id}")
        return found

    # -- reads ---------------------------------------------------------------
    def get_memory(self, store: str, label: str) -> Memory | None:
        place = self._place(store)
        memory = self._storages[place].get_memory(store, label)
        return None if memory is None else self._tagged(place, memory)

    def get_memories(self, ids: Iterable[int]) -> dict[int, Memory]:
        found: dict[int, Memory] = {}
        for place, pairs in self._by_place((i, None) for i in ids).items():
            for memory in self._storages[place].get_memories(local for local, _ in pairs).values():
                tagged = self._tagged(place, memory)
                found[tagged.id] = tagged
        return found

    def list_memories(
        self, stores: Sequence[str] | None = None, *, include_archived: bool = False
    ) -> list[Memory]:
        if stores is None:
            asked: dict[int, list[str] | None] = dict.fromkeys(range(len(self._storages)))
        else:
            asked = dict(self._stores_by_place(stores))
        rows = [
            self._tagged(place, memory)
            for place, names in asked.items()
            for memory in self._storages[place].list_memories(
                names, include_archived=include_archived
            )
            if names is not None or self._place(memory.store) == place
        ]
        # Each place orders by store, then label, and a store lives in one
        # place: a stable sort by store keeps each store's labels in order.
        return sorted(rows, key=lambda memory: memory.store)

    def list_stores(self) -> list[StoreInfo]:
        found = [
            info
            for place, storage in enumerate(self._storages)
            for info in storage.list_stores()
            if self._place(info.name) == place
        ]
        return sorted(found, key=lambda info: info.name)

    def vector_search(
        self, query: Vector, model: str, scope: Scope, limit: int, *, include_archived: bool = False
    ) -> list[ScoredId]:
        lists = {
            place: self._storages[place].vector_search(
                query,
                model,
                attrs.evolve(scope, stores=tuple(names)),
                limit,
                include_archived=include_archived,
            )
            for place, names in self._stores_by_place(scope.stores).items()
        }
        # Cosines compare across backends as they are.
        return self._merged(lists, limit)

    def text_search(
        self, query: str, scope: Scope, limit: int, *, include_archived: bool = False
    ) -> list[ScoredId]:
        lists = {
            place: self._storages[place].text_search(
                query,
                attrs.evolve(scope, stores=tuple(names)),
                limit,
                include_archived=include_archived,
            )
            for place, names in self._stores_by_place(scope.stores).items()
        }
        found = {place: hits for place, hits in lists.items() if hits}
        kinds = {self._storages[place].backend for place in found}
        if len(kinds) > 1:
            found = {place: _share_of_best(hits) for place, hits in found.items()}
        return self._merged(found, limit)

    def _merged(self, lists: Mapping[int, list[ScoredId]], limit: int) -> list[ScoredId]:
        hits = [
            ScoredId(id=self._tag(place, hit.id), score=hit.score)
            for place, found in lists.items()
            for hit in found
        ]
        return sorted(hits, key=lambda hit: -hit.score)[: max(limit, 0)]

    def embeddings(self, ids: Iterable[int], model: str) -> dict[int, Vector]:
        return {
            self._tag(place, local): vector
            for place, pairs in self._by_place((i, None) for i in ids).items()
            for local, vector in self._storages[place]
            .embeddings([local for local, _ in pairs], model)
            .items()
        }

    def store_matrix(self, store: str, model: str) -> tuple[list[int], Matrix]:
        place = self._place(store)
        ids, matrix = self._storages[place].store_matrix(store, model)
        return [self._tag(place, local) for local in ids], matrix

    def reviewed_pairs(self, store: str) -> set[tuple[int, int]]:
        place = self._place(store)
        # One tag for both ids keeps each pair (smaller, larger).
        return {
            (self._tag(place, low), self._tag(place, high))
            for low, high in self._storages[place].reviewed_pairs(store)
        }

    def review_verdicts(self, store: str) -> dict[tuple[int, int], Verdict]:
        place = self._place(store)
        return {
            (self._tag(place, low), self._tag(place, high)): verdict
            for (low, high), verdict in self._storages[place].review_verdicts(store).items()
        }

    def models_in_use(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for storage in self._storages:
            for model, count in storage.models_in_use().items():
                counts[model] += count
        return dict(counts)


def _share_of_best(hits: list[ScoredId]) -> list[ScoredId]:
    """``hits`` (best first, positive) scaled so that the best scores 1.0."""
    best = hits[0].score
    if best <= 0:  # outside the contract; left as it is rather than turned over
        return hits
    return [ScoredId(id=hit.id, score=hit.score / best) for hit in hits]
