"""The contract every storage backend must pass (see thatch.plugin.storage.Storage).

Each test runs once per backend registered in ``conftest.BACKENDS``. Vectors
are fake, seeded unit vectors: no embedding model is involved.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from thatch.plugin.errors import ArchivedMemoryError
from thatch.plugin.records import Memory, NewMemory, Scope, StoreInfo
from thatch.plugin.storage import Storage

APP = "acme/app"
OTHER = "acme/other"
GLOBAL = "global"
DIM = 16


def unit(seed: int, dim: int = DIM) -> np.ndarray:
    """A random unit float32 vector, the same for the same seed."""
    vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def toward(target: np.ndarray, cosine: float, seed: int) -> np.ndarray:
    """A unit vector whose cosine with unit ``target`` is ``cosine``."""
    target = target.astype(np.float64)
    other = unit(seed, len(target)).astype(np.float64)
    other -= other.dot(target) * target
    other /= np.linalg.norm(other)
    return (cosine * target + np.sqrt(1.0 - cosine**2) * other).astype(np.float32)


def new(
    label: str,
    content: str | None = None,
    *,
    store: str = APP,
    branch: str | None = None,
    model: str = "model-a",
    vector: np.ndarray | None = None,
) -> NewMemory:
    """A NewMemory; without ``vector``, one seeded from the label."""
    if vector is None:
        vector = unit(sum(map(ord, label)))
    return NewMemory(
        store=store,
        label=label,
        content=f"note about {label}" if content is None else content,
        branch=branch,
        model=model,
        embedding=vector,
    )


def write(storage: Storage, *items: NewMemory) -> list[Memory]:
    return [result.memory for result in storage.write_memories(items)]


def ids(hits: list) -> list[int]:
    return [hit.id for hit in hits]


def scope(*stores: str, branch: str | None = None) -> Scope:
    return Scope(stores=stores or (APP,), branch=branch)


# -- basics -------------------------------------------------------------------


def test_implements_the_protocol(storage: Storage) -> None:
    assert isinstance(storage, Storage)
    assert isinstance(storage.backend, str)
    assert storage.backend


def test_a_fresh_store_is_empty_and_sound(storage: Storage) -> None:
    assert storage.list_stores() == []
    assert storage.list_memories() == []
    assert storage.models_in_use() == {}
    assert storage.integrity_problems() == []
    assert storage.get_memory(APP, "nothing") is None
    assert storage.get_memories([1, 2, 3]) == {}


def test_write_creates_a_memory_with_every_field(storage: Storage) -> None:
    before = datetime.now(UTC)
    [result] = storage.write_memories([new("build", "run make", branch="main")])
    after = datetime.now(UTC)

    assert result.action == "created"
    memory = result.memory
    assert (memory.store, memory.label, memory.content) == (APP, "build", "run make")
    assert memory.branch == "main"
    assert memory.archived is False
    assert memory.model == "model-a"
    assert memory.recall_count == 0
    assert memory.last_recalled_at is None
    assert memory.created_at == memory.updated_at
    assert memory.created_at.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= memory.created_at <= after + timedelta(seconds=1)
    assert storage.get_memory(APP, "build") == memory
    assert storage.get_memories([memory.id]) == {memory.id: memory}


def test_the_same_label_in_two_stores_is_two_memories(storage: Storage) -> None:
    first, second = write(storage, new("x", "one"), new("x", "two", store=GLOBAL))
    assert first.id != second.id
    assert storage.get_memory(APP, "x").content == "one"
    assert storage.get_memory(GLOBAL, "x").content == "two"


def test_writing_the_same_memory_again_is_unchanged(storage: Storage) -> None:
    [created] = write(storage, new("a", "text", branch="dev"))
    [result] = storage.write_memories([new("a", "text", branch="dev", vector=unit(99))])
    assert result.action == "unchanged"
    assert result.memory == created
    assert storage.get_memory(APP, "a") == created


@pytest.mark.parametrize(
    "change", [{"content": "new text"}, {"branch": "feature/x"}, {"model": "model-b"}]
)
def test_a_change_of_content_branch_or_model_updates(storage: Storage, change: dict) -> None:
    base = {"content": "text", "branch": None, "model": "model-a"}
    [created] = write(storage, new("a", **base))
    [result] = storage.write_memories([new("a", **(base | change))])

    assert result.action == "updated"
    updated = result.memory
    assert updated.id == created.id
    for field, value in change.items():
        assert getattr(updated, field) == value
    assert updated.created_at == created.created_at
    assert updated.updated_at >= created.updated_at
    assert storage.get_memory(APP, "a") == updated


def test_an_update_keeps_recall_counts(storage: Storage) -> None:
    [memory] = write(storage, new("a", "old"))
    storage.record_recall([memory.id], datetime.now(UTC))
    [updated] = write(storage, new("a", "new"))
    assert updated.recall_count == 1
    assert storage.get_memory(APP, "a").recall_count == 1


def test_a_batch_reports_each_item_in_order(storage: Storage) -> None:
    write(storage, new("same", "x"), new("changed", "old"))
    results = storage.write_memories(
        [new("fresh"), new("same", "x"), new("changed", "new"), new("fresh", "again")]
    )
    assert [r.action for r in results] == ["created", "unchanged", "updated", "updated"]
    assert results[0].memory.id == results[3].memory.id
    assert storage.get_memory(APP, "fresh").content == "again"
    assert storage.write_memories([]) == []


def test_updating_an_archived_memory_is_refused_and_writes_nothing(storage: Storage) -> None:
    write(storage, new("old", "kept"), new("other", "before"))
    storage.set_archived(APP, "old", True)

    with pytest.raises(ArchivedMemoryError) as caught:
        storage.write_memories([new("brand-new"), new("other", "after"), new("old", "changed")])

    message = str(caught.value)
    assert "old" in message
    assert APP in message
    assert "unarchive it first" in message
    assert f"thatch unarchive old --store {APP}" in message
    assert storage.get_memory(APP, "brand-new") is None
    assert storage.get_memory(APP, "other").content == "before"
    assert storage.get_memory(APP, "old").content == "kept"
    assert storage.get_memory(APP, "old").archived


def test_delete(storage: Storage) -> None:
    [memory] = write(storage, new("a"))
    assert storage.delete_memory(APP, "a") is True
    assert storage.delete_memory(APP, "a") is False
    assert storage.get_memory(APP, "a") is None
    assert storage.get_memories([memory.id]) == {}
    assert storage.list_stores() == []
    assert storage.vector_search(unit(1), "model-a", scope(), 10) == []


def test_archive_and_unarchive(storage: Storage) -> None:
    [memory] = write(storage, new("a", "words here"))
    archived = storage.set_archived(APP, "a", True)
    assert archived is not None
    assert archived.archived is True
    assert archived.id == memory.id
    assert archived.content == memory.content
    assert storage.get_memory(APP, "a").archived is True
    assert storage.get_memories([memory.id])[memory.id].archived is True

    unarchived = storage.set_archived(APP, "a", False)
    assert unarchived is not None
    assert unarchived.archived is False
    assert storage.set_archived(APP, "missing", True) is None


def test_get_memories_leaves_out_unknown_ids(storage: Storage) -> None:
    a, b = write(storage, new("a"), new("b"))
    found = storage.get_memories([b.id, 10_000, a.id])
    assert found == {a.id: a, b.id: b}
    assert storage.get_memories([]) == {}
    assert storage.get_memories(iter([a.id])) == {a.id: a}


def test_list_memories_orders_by_store_then_label_and_filters(storage: Storage) -> None:
    write(
        storage,
        new("zeta"),
        new("alpha"),
        new("mid", store=GLOBAL),
        new("hidden", store=OTHER),
    )
    storage.set_archived(APP, "zeta", True)

    everything = storage.list_memories(include_archived=True)
    assert [(m.store, m.label) for m in everything] == [
        (APP, "alpha"),
        (APP, "zeta"),
        (OTHER, "hidden"),
        (GLOBAL, "mid"),
    ]
    assert [m.label for m in storage.list_memories()] == ["alpha", "hidden", "mid"]
    assert [m.label for m in storage.list_memories([APP, GLOBAL])] == ["alpha", "mid"]
    assert [m.label for m in storage.list_memories([APP], include_archived=True)] == [
        "alpha",
        "zeta",
    ]
    assert storage.list_memories([]) == []
    assert storage.list_memories(["nobody/here"]) == []


def test_list_stores_counts_live_and_archived(storage: Storage) -> None:
    write(
        storage,
        new("a"),
        new("b"),
        new("c"),
        new("g", store=GLOBAL),
        new("gone", store=OTHER),
    )
    storage.set_archived(APP, "c", True)
    storage.set_archived(OTHER, "gone", True)
    assert storage.list_stores() == [
        StoreInfo(APP, memories=2, archived=1),
        StoreInfo(OTHER, memories=0, archived=1),
        StoreInfo(GLOBAL, memories=1, archived=0),
    ]


# -- vector search ------------------------------------------------------------


def test_vector_search_ranks_by_cosine(storage: Storage) -> None:
    query = unit(7)
    cosines = {"far": 0.1, "close": 0.9, "mid": 0.5, "opposite": -0.8}
    made = write(
        storage,
        *(new(label, vector=toward(query, c, i)) for i, (label, c) in enumerate(cosines.items())),
    )
    by_label = {m.label: m.id for m in made}

    hits = storage.vector_search(query, "model-a", scope(), 10)

    assert ids(hits) == [by_label[x] for x in ("close", "mid", "far", "opposite")]
    for hit, expected in zip(hits, (0.9, 0.5, 0.1, -0.8), strict=True):
        assert hit.score == pytest.approx(expected, abs=1e-4)
    assert ids(storage.vector_search(query, "model-a", scope(), 2)) == ids(hits)[:2]
    assert storage.vector_search(query, "model-a", scope(), 0) == []


def test_vector_search_sees_only_stores_in_scope(storage: Storage) -> None:
    query = unit(3)
    app, glob, other = write(
        storage,
        new("a", vector=toward(query, 0.5, 1)),
        new("g", store=GLOBAL, vector=toward(query, 0.6, 2)),
        new("o", store=OTHER, vector=toward(query, 0.99, 3)),
    )
    assert ids(storage.vector_search(query, "model-a", scope(APP, GLOBAL), 10)) == [
        glob.id,
        app.id,
    ]
    assert ids(storage.vector_search(query, "model-a", scope(OTHER), 10)) == [other.id]
    assert storage.vector_search(query, "model-a", Scope(stores=()), 10) == []
    assert storage.vector_search(query, "model-a", scope("nobody/here"), 10) == []


def test_branch_rule_applies_to_both_searches(storage: Storage) -> None:
    query = unit(5)
    anywhere, on_main, on_dev = write(
        storage,
        new("anywhere", "shared deploy note", vector=toward(query, 0.5, 1)),
        new("on-main", "main deploy note", branch="main", vector=toward(query, 0.6, 2)),
        new("on-dev", "dev deploy note", branch="dev", vector=toward(query, 0.7, 3)),
    )

    def both(branch: str | None) -> tuple[set[int], set[int]]:
        where = scope(branch=branch)
        return (
            set(ids(storage.vector_search(query, "model-a", where, 10))),
            set(ids(storage.text_search("deploy", where, 10))),
        )

    assert both("main") == ({anywhere.id, on_main.id},) * 2
    assert both("dev") == ({anywhere.id, on_dev.id},) * 2
    assert both("unknown-branch") == ({anywhere.id},) * 2
    # No branch (not in a git repository): branch-scoped memories stay hidden.
    assert both(None) == ({anywhere.id},) * 2


def test_archived_memories_are_hidden_from_both_searches(storage: Storage) -> None:
    query = unit(11)
    kept, hidden = write(
        storage,
        new("kept", "release checklist", vector=toward(query, 0.3, 1)),
        new("hidden", "release checklist", vector=toward(query, 0.9, 2)),
    )
    storage.set_archived(APP, "hidden", True)
    assert ids(storage.vector_search(query, "model-a", scope(), 10)) == [kept.id]
    assert ids(storage.text_search("release", scope(), 10)) == [kept.id]

    storage.set_archived(APP, "hidden", False)
    assert ids(storage.vector_search(query, "model-a", scope(), 10)) == [hidden.id, kept.id]
    assert set(ids(storage.text_search("release", scope(), 10))) == {kept.id, hidden.id}


def test_vector_search_never_mixes_models(storage: Storage) -> None:
    query = unit(13)
    a, b = write(
        storage,
        new("a", vector=toward(query, 0.2, 1), model="model-a"),
        new("b", vector=toward(query, 0.95, 2), model="model-b"),
    )
    assert ids(storage.vector_search(query, "model-a", scope(), 10)) == [a.id]
    assert ids(storage.vector_search(query, "model-b", scope(), 10)) == [b.id]
    assert storage.vector_search(query, "model-c", scope(), 10) == []


def test_vector_search_follows_writes(storage: Storage) -> None:
    query = unit(17)
    assert storage.vector_search(query, "model-a", scope(), 10) == []
    [first] = write(storage, new("first", vector=toward(query, 0.4, 1)))
    assert ids(storage.vector_search(query, "model-a", scope(), 10)) == [first.id]

    [second] = write(storage, new("second", vector=toward(query, 0.8, 2)))
    assert ids(storage.vector_search(query, "model-a", scope(), 10)) == [second.id, first.id]

    # A content update with a new vector moves it in the ranking.
    write(storage, new("first", "changed", vector=toward(query, 0.9, 3)))
    hits = storage.vector_search(query, "model-a", scope(), 10)
    assert ids(hits) == [first.id, second.id]
    assert hits[0].score == pytest.approx(0.9, abs=1e-4)

    # Moving to another model takes it out of this model's results.
    write(storage, new("first", "changed", model="model-b", vector=query))
    assert ids(storage.vector_search(query, "model-a", scope(), 10)) == [second.id]
    storage.delete_memory(APP, "second")
    assert storage.vector_search(query, "model-a", scope(), 10) == []


# -- text search --------------------------------------------------------------


def test_text_search_matches_words_and_stems(storage: Storage) -> None:
    indent, tests, _other = write(
        storage,
        new("style", "Use four spaces for indentation in Python files"),
        new("testing", "Run the tests with pytest before pushing"),
        new("coffee", "The office coffee machine is on floor two"),
    )
    assert ids(storage.text_search("indents", scope(), 10)) == [indent.id]
    assert ids(storage.text_search("PYTEST", scope(), 10)) == [tests.id]
    assert set(ids(storage.text_search("indentation or pytest", scope(), 10))) == {
        indent.id,
        tests.id,
    }
    assert storage.text_search("kubernetes", scope(), 10) == []
    assert len(storage.text_search("spaces pytest coffee", scope(), 2)) == 2


def test_text_search_prefers_more_matching_words_and_labels(storage: Storage) -> None:
    one, two, label = write(
        storage,
        new("first", "deploy with the script"),
        new("second", "deploy to staging with the staging script"),
        new("staging", "unrelated words entirely"),
    )
    hits = storage.text_search("staging deploy", scope(), 10)
    assert set(ids(hits)) == {one.id, two.id, label.id}
    assert ids(hits).index(two.id) < ids(hits).index(one.id)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True), "scores must grow with quality"


def test_text_search_sees_only_stores_in_scope(storage: Storage) -> None:
    app, glob, _other = write(
        storage,
        new("a", "database migrations"),
        new("g", "database backups", store=GLOBAL),
        new("o", "database schema", store=OTHER),
    )
    assert set(ids(storage.text_search("database", scope(APP, GLOBAL), 10))) == {
        app.id,
        glob.id,
    }
    assert storage.text_search("database", Scope(stores=()), 10) == []


def test_text_search_follows_content_changes(storage: Storage) -> None:
    [memory] = write(storage, new("a", "alpha words"))
    write(storage, new("a", "beta words"))
    assert storage.text_search("alpha", scope(), 10) == []
    assert ids(storage.text_search("beta", scope(), 10)) == [memory.id]
    storage.delete_memory(APP, "a")
    assert storage.text_search("beta", scope(), 10) == []


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        "!!! ??? ...",
        '"',
        'say "hello',
        "it's",
        "foo*",
        "*",
        "-foo",
        "NOT foo",
        "foo AND",
        "OR",
        "a OR b AND c",
        "NEAR(foo bar)",
        "NEAR",
        "(unbalanced",
        "label:foo",
        "content : x",
        "^start",
        "a + b",
        "{col1 col2}: x",
        "___",
        "_ under_score",
        "naïve café Ünïcödé 日本語",
        "e\u0301t\u0301e\u0301",
        "\x00\x01 control",
        "x" * 5000,
        " ".join(f"word{i}" for i in range(500)),
    ],
)
def test_text_search_accepts_any_text(storage: Storage, query: str) -> None:
    write(storage, new("a", "foo bar NEAR hello café"))
    hits = storage.text_search(query, scope(), 10)
    assert all(hit.id > 0 for hit in hits)


def test_text_search_with_no_words_finds_nothing(storage: Storage) -> None:
    write(storage, new("a", "anything"))
    assert storage.text_search("", scope(), 10) == []
    assert storage.text_search("?! -- ()", scope(), 10) == []


def test_text_search_matches_accented_words_without_accents(storage: Storage) -> None:
    [memory] = write(storage, new("a", "the café serves crème brûlée"))
    assert ids(storage.text_search("cafe creme", scope(), 10)) == [memory.id]


# -- vectors by id and store --------------------------------------------------


def test_embeddings_by_id_and_model(storage: Storage) -> None:
    a, b, c = write(
        storage,
        new("a", vector=unit(1)),
        new("b", vector=unit(2), model="model-b"),
        new("c", vector=unit(3)),
    )
    storage.set_archived(APP, "c", True)
    found = storage.embeddings([a.id, b.id, c.id, 999], "model-a")
    assert set(found) == {a.id, c.id}
    np.testing.assert_allclose(found[a.id], unit(1), rtol=1e-6)
    assert found[a.id].dtype == np.float32
    assert storage.embeddings([], "model-a") == {}


def test_store_matrix_rows_match_ids(storage: Storage) -> None:
    a, _b, _c, _d, e = write(
        storage,
        new("a", vector=unit(1)),
        new("b", vector=unit(2), model="model-b"),
        new("c", vector=unit(3)),
        new("d", vector=unit(4), store=GLOBAL),
        new("e", vector=unit(5)),
    )
    storage.set_archived(APP, "c", True)
    matrix_ids, matrix = storage.store_matrix(APP, "model-a")
    assert sorted(matrix_ids) == [a.id, e.id]
    assert matrix.shape == (2, DIM)
    assert matrix.dtype == np.float32
    expected = {a.id: unit(1), e.id: unit(5)}
    for row, memory_id in enumerate(matrix_ids):
        np.testing.assert_allclose(matrix[row], expected[memory_id], rtol=1e-6)

    empty_ids, empty = storage.store_matrix("nobody/here", "model-a")
    assert empty_ids == []
    assert empty.shape[0] == 0


def test_set_embeddings_replaces_vector_and_model(storage: Storage) -> None:
    query = unit(21)
    a, b = write(
        storage,
        new("a", vector=toward(query, 0.3, 1)),
        new("b", vector=toward(query, 0.6, 2)),
    )
    before = storage.get_memory(APP, "a")
    storage.set_embeddings("model-b", [(a.id, toward(query, 0.9, 3)), (12345, query)])

    after = storage.get_memory(APP, "a")
    assert after.model == "model-b"
    assert after.content == before.content
    assert storage.models_in_use() == {"model-a": 1, "model-b": 1}
    assert storage.embeddings([a.id], "model-a") == {}
    np.testing.assert_allclose(
        storage.embeddings([a.id], "model-b")[a.id], toward(query, 0.9, 3), rtol=1e-5
    )
    assert ids(storage.vector_search(query, "model-a", scope(), 10)) == [b.id]
    hits = storage.vector_search(query, "model-b", scope(), 10)
    assert ids(hits) == [a.id]
    assert hits[0].score == pytest.approx(0.9, abs=1e-4)
    # The same content and new model is unchanged now.
    [result] = storage.write_memories([new("a", before.content, model="model-b")])
    assert result.action == "unchanged"


def test_models_in_use_counts_archived_too(storage: Storage) -> None:
    write(storage, new("a"), new("b"), new("c", model="model-b"))
    storage.set_archived(APP, "b", True)
    assert storage.models_in_use() == {"model-a": 2, "model-b": 1}


# -- reviews and recalls --------------------------------------------------------


def test_reviewed_pairs_lifecycle(storage: Storage) -> None:
    a, b, c, g1, g2 = write(
        storage,
        new("a", "alpha"),
        new("b", "beta"),
        new("c", "gamma"),
        new("g1", store=GLOBAL),
        new("g2", store=GLOBAL),
    )
    storage.mark_reviewed(b.id, a.id)
    storage.mark_reviewed(a.id, b.id)  # idempotent, either order
    storage.mark_reviewed(a.id, c.id)
    storage.mark_reviewed(b.id, c.id)
    storage.mark_reviewed(g2.id, g1.id)
    low, high = sorted((g1.id, g2.id))
    assert storage.reviewed_pairs(GLOBAL) == {(low, high)}
    assert storage.reviewed_pairs(APP) == {
        tuple(sorted(p)) for p in [(a.id, b.id), (a.id, c.id), (b.id, c.id)]
    }

    # Unchanged content and a branch-only change keep the reviews.
    write(storage, new("a", "alpha"), new("a", "alpha", branch="main"))
    assert len(storage.reviewed_pairs(APP)) == 3

    # New content forgets the pairs that involve it.
    write(storage, new("a", "alpha, rewritten"))
    assert storage.reviewed_pairs(APP) == {tuple(sorted((b.id, c.id)))}

    # Deleting a memory forgets its pairs.
    storage.delete_memory(APP, "c")
    assert storage.reviewed_pairs(APP) == set()
    assert storage.reviewed_pairs("nobody/here") == set()
    assert storage.integrity_problems() == []


def test_record_recall_counts_and_stamps(storage: Storage) -> None:
    a, b = write(storage, new("a"), new("b"))
    first = datetime(2030, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)
    storage.record_recall([a.id, b.id], first)
    later = first + timedelta(hours=1)
    storage.record_recall([a.id, 424242], later)
    storage.record_recall([], later)

    got_a, got_b = storage.get_memory(APP, "a"), storage.get_memory(APP, "b")
    assert got_a.recall_count == 2
    assert got_b.recall_count == 1
    assert abs(got_a.last_recalled_at - later) < timedelta(milliseconds=1)
    assert abs(got_b.last_recalled_at - first) < timedelta(milliseconds=1)
    assert got_a.last_recalled_at.utcoffset() == timedelta(0)
    # Recalling is not editing.
    assert got_a.updated_at == a.updated_at


# -- durability and sharing -----------------------------------------------------


def test_data_survives_reopening(open_storage) -> None:
    first = open_storage()
    query = unit(31)
    [memory] = write(first, new("kept", "persistent words", vector=toward(query, 0.7, 1)))
    first.mark_reviewed(memory.id, write(first, new("other"))[0].id)
    open_storage.close(first)

    again = open_storage()
    assert again.get_memory(APP, "kept") == memory
    assert ids(again.vector_search(query, "model-a", scope(), 1)) == [memory.id]
    assert ids(again.text_search("persistent", scope(), 10)) == [memory.id]
    assert len(again.reviewed_pairs(APP)) == 1
    assert again.integrity_problems() == []


def test_two_handles_see_each_others_writes(open_storage) -> None:
    one, two = open_storage(), open_storage()
    query = unit(41)
    # Warm both handles' caches before the other one writes.
    assert one.vector_search(query, "model-a", scope(), 10) == []
    assert two.vector_search(query, "model-a", scope(), 10) == []

    [memory] = write(one, new("shared", "visible words", vector=toward(query, 0.8, 1)))
    assert ids(two.vector_search(query, "model-a", scope(), 10)) == [memory.id]
    assert ids(two.text_search("visible", scope(), 10)) == [memory.id]
    assert two.get_memory(APP, "shared") == memory

    two.set_archived(APP, "shared", True)
    assert one.vector_search(query, "model-a", scope(), 10) == []
    with pytest.raises(ArchivedMemoryError):
        write(one, new("shared", "edited"))


def test_integrity_check_passes_after_mixed_work(storage: Storage) -> None:
    write(storage, *(new(f"m{i}", f"content number {i}") for i in range(30)))
    for i in range(0, 30, 3):
        storage.delete_memory(APP, f"m{i}")
    for i in range(1, 30, 3):
        write(storage, new(f"m{i}", f"rewritten {i}"))
    storage.set_archived(APP, "m2", True)
    assert storage.integrity_problems() == []
