"""The store router over two real SQLite files: a personal one and a "shared" one.

The router passes the memory contract itself, under two routings (a whole
owner's stores shared; one store shared, its neighbour personal), and keeps
each row in the file that owns its store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from thatch.memory.routing import ID_BITS, StoreRouter
from thatch.plugin.errors import ArchivedMemoryError, InvalidInputError
from thatch.plugin.records import Scope, StoreInfo
from thatch.testing.contracts import (
    APP,
    GLOBAL,
    OTHER,
    MemoryStorageContract,
    new,
    toward,
    unit,
    write,
)
from thatch_sqlite.storage import SQLiteStorage


def owner(routes: dict[str, str], default: str = "personal") -> Callable[[str], str]:
    """The first pattern that matches a store names its place, as [storage.stores] does."""

    def place(store: str) -> str:
        return next((p for pattern, p in routes.items() if fnmatchcase(store, pattern)), default)

    return place


def router(directory: Path, routes: dict[str, str]) -> StoreRouter:
    return StoreRouter(
        {
            "personal": SQLiteStorage(directory / "personal.db"),
            "shared": SQLiteStorage(directory / "shared.db"),
        },
        owner(routes),
    )


class TestRouterWithAnOwnerShared(MemoryStorageContract):
    def open_backend(self, directory: Path) -> Any:
        return router(directory, {"acme/*": "shared"})


class TestRouterWithOneStoreShared(MemoryStorageContract):
    """acme/app shared, acme/other and global personal: one owner's stores in two files."""

    def open_backend(self, directory: Path) -> Any:
        return router(directory, {"acme/app": "shared"})


class _OtherKind(SQLiteStorage):
    """A SQLite file that calls itself another kind of backend (its words scores differ)."""

    backend = "other"


@pytest.fixture
def routed(tmp_path: Path) -> Iterator[StoreRouter]:
    storage = router(tmp_path, {"acme/*": "shared"})
    yield storage
    storage.close()


def labels_in(path: Path) -> list[tuple[str, str]]:
    with SQLiteStorage(path) as storage:
        return [(m.store, m.label) for m in storage.list_memories(include_archived=True)]


def test_each_row_lands_in_the_file_that_owns_its_store(
    routed: StoreRouter, tmp_path: Path
) -> None:
    write(routed, new("mine", store=GLOBAL), new("ours"), new("theirs", store=OTHER))
    routed.close()
    assert labels_in(tmp_path / "personal.db") == [(GLOBAL, "mine")]
    assert labels_in(tmp_path / "shared.db") == [(APP, "ours"), (OTHER, "theirs")]


def test_the_default_places_ids_are_the_backends_own(routed: StoreRouter, tmp_path: Path) -> None:
    mine, ours = write(routed, new("mine", store=GLOBAL), new("ours"))
    personal, shared = routed.places["personal"], routed.places["shared"]
    assert personal.get_memory(GLOBAL, "mine").id == mine.id  # type: ignore[union-attr]
    assert ours.id == (1 << ID_BITS) | shared.get_memory(APP, "ours").id  # type: ignore[union-attr]
    # Tagged ids stay whole numbers a browser reads exactly.
    assert ours.id < 2**53
    assert routed.get_memories([mine.id, ours.id, (5 << ID_BITS) | 1, -1]) == {
        mine.id: mine,
        ours.id: ours,
    }


def test_a_search_across_both_files_merges_by_cosine(routed: StoreRouter) -> None:
    query = unit(30)
    near, far = write(
        routed,
        new("near", store=GLOBAL, vector=toward(query, 0.9, 1)),
        new("far", vector=toward(query, 0.4, 2)),
    )
    [mid] = write(routed, new("mid", store=OTHER, vector=toward(query, 0.6, 3)))
    hits = routed.vector_search(query, "model-a", Scope((APP, OTHER, GLOBAL)), 10)
    assert [hit.id for hit in hits] == [near.id, mid.id, far.id]
    assert [round(hit.score, 3) for hit in hits] == [0.9, 0.6, 0.4]
    assert [hit.id for hit in routed.vector_search(query, "model-a", Scope((APP, GLOBAL)), 1)] == [
        near.id
    ]


def test_words_scores_of_different_kinds_are_each_a_share_of_their_best(tmp_path: Path) -> None:
    places = {
        "personal": SQLiteStorage(tmp_path / "personal.db"),
        "shared": _OtherKind(tmp_path / "shared.db"),
    }
    storage = StoreRouter(places, owner({"acme/*": "shared"}))
    try:
        write(
            storage,
            new("a", "deploy deploy deploy script", store=GLOBAL),
            new("b", "deploy notes", store=GLOBAL),
            new("c", "deploy with care"),
        )
        hits = storage.text_search("deploy", Scope((APP, GLOBAL)), 10)
        by_id = {hit.id: hit.score for hit in hits}
        assert len(hits) == 3
        # Each file's best match scores 1.0; the rest keep their share of it.
        assert sorted(by_id.values(), reverse=True)[:2] == [1.0, 1.0]
        assert all(0 < score <= 1.0 for score in by_id.values())
    finally:
        storage.close()


def test_words_scores_of_one_kind_merge_as_they_are(routed: StoreRouter) -> None:
    write(routed, new("a", "deploy the app", store=GLOBAL), new("b", "deploy"))
    merged = routed.text_search("deploy", Scope((APP, GLOBAL)), 10)
    alone = [
        hit.score
        for store in (APP, GLOBAL)
        for hit in routed.text_search("deploy", Scope((store,)), 10)
    ]
    assert sorted(hit.score for hit in merged) == sorted(alone)


def test_a_duplicate_pair_never_crosses_files(routed: StoreRouter) -> None:
    mine, ours = write(routed, new("mine", store=GLOBAL), new("ours"))
    with pytest.raises(InvalidInputError, match="kept apart, in personal and shared"):
        routed.mark_reviewed(mine.id, ours.id)


def test_a_reviewed_pair_in_the_shared_file_keeps_its_tagged_ids(routed: StoreRouter) -> None:
    one, two = write(routed, new("one"), new("two"))
    routed.mark_reviewed(two.id, one.id, "same")
    pair = (min(one.id, two.id), max(one.id, two.id))
    assert routed.reviewed_pairs(APP) == {pair}
    assert routed.review_verdicts(APP) == {pair: "same"}
    ids, matrix = routed.store_matrix(APP, "model-a")
    assert sorted(ids) == sorted([one.id, two.id])
    assert matrix.shape[0] == 2


def test_an_archived_memory_in_one_file_refuses_a_batch_across_both(
    routed: StoreRouter, tmp_path: Path
) -> None:
    write(routed, new("old"))
    routed.set_archived(APP, "old", True)
    with pytest.raises(ArchivedMemoryError, match=f"thatch unarchive old {APP}"):
        routed.write_memories([new("fresh", store=GLOBAL), new("old", "changed")])
    assert routed.get_memory(GLOBAL, "fresh") is None


def test_recalls_and_new_vectors_reach_each_file(routed: StoreRouter) -> None:
    mine, ours = write(routed, new("mine", store=GLOBAL), new("ours"))
    routed.record_recall([mine.id, ours.id], mine.created_at)
    assert [m.recall_count for m in routed.get_memories([mine.id, ours.id]).values()] == [1, 1]
    routed.set_embeddings("model-b", [(mine.id, unit(1)), (ours.id, unit(2))])
    assert routed.models_in_use() == {"model-b": 2}
    found = routed.embeddings([mine.id, ours.id], "model-b")
    np.testing.assert_allclose(found[ours.id], unit(2), rtol=1e-6)


def test_a_store_left_in_a_file_that_no_longer_owns_it_is_reported_not_read(
    tmp_path: Path,
) -> None:
    with SQLiteStorage(tmp_path / "personal.db") as personal:
        write(personal, new("stranded"), new("mine", store=GLOBAL))
    storage = router(tmp_path, {"acme/*": "shared"})
    try:
        assert storage.list_stores() == [StoreInfo(GLOBAL, memories=1, archived=0)]
        assert [m.label for m in storage.list_memories()] == ["mine"]
        [problem] = storage.integrity_problems()
        assert f"store {APP} has 1 memories in personal" in problem
        assert "sends it to shared" in problem
        assert f"thatch export --store {APP}" in problem
    finally:
        storage.close()


def test_a_store_routed_to_a_place_not_open_is_a_clear_error(tmp_path: Path) -> None:
    storage = StoreRouter({"personal": SQLiteStorage(tmp_path / "p.db")}, lambda store: "team")
    try:
        with pytest.raises(InvalidInputError, match="routed to 'team', which is not open"):
            storage.get_memory(GLOBAL, "x")
    finally:
        storage.close()
