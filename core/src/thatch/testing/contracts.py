"""The storage contract suites, as test classes a backend subclasses.

A backend proves itself by passing them unchanged. Write one subclass with a
factory, in a module pytest collects::

    from thatch.testing.contracts import StorageContract

    from my_backend import MyStorage


    class TestMyStorage(StorageContract):
        def open_backend(self, directory):
            return MyStorage(directory / "data")

:class:`StorageContract` is the whole suite, for a backend that keeps every
part; a backend that keeps only some subclasses :class:`MemoryStorageContract`,
:class:`DecisionStorageContract` or :class:`PredictionStorageContract` alone.
The fixtures ``storage`` and ``open_storage`` come from thatch's pytest
plugin (:mod:`thatch.testing.pytest_plugin`, loaded through the ``pytest11``
entry point). Vectors are fake, seeded unit vectors: no embedding model is
involved; the confidence rule is passed in, as core does.

This module imports pytest: import it from tests only.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import pytest

from thatch.plugin.decision_storage import DecisionKind, DecisionStorage
from thatch.plugin.decisions import Edge, Matcher, Prediction, Provenance
from thatch.plugin.errors import (
    ArchivedMemoryError,
    InvalidInputError,
    LabelTakenError,
    NotFoundError,
)
from thatch.plugin.prediction_log import LoggedPrediction, PredictionStorage
from thatch.plugin.records import Memory, NewMemory, Scope, ScoredId, StoreInfo
from thatch.plugin.storage import MemoryStorage

if TYPE_CHECKING:
    from thatch.plugin.storage import Vector
    from thatch.testing.pytest_plugin import Opener

APP = "acme/app"
OTHER = "acme/other"
GLOBAL = "global"
DIM = 16


def unit(seed: int, dim: int = DIM) -> Vector:
    """A random unit float32 vector, the same for the same seed."""
    vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return np.asarray(vector / np.linalg.norm(vector), dtype=np.float32)


def toward(target: Vector, cosine: float, seed: int) -> Vector:
    """A unit vector whose cosine with unit ``target`` is ``cosine``."""
    wide = target.astype(np.float64)
    other = unit(seed, len(wide)).astype(np.float64)
    other -= other.dot(wide) * wide
    other /= np.linalg.norm(other)
    return np.asarray(cosine * wide + np.sqrt(1.0 - cosine**2) * other, dtype=np.float32)


def new(
    label: str,
    content: str | None = None,
    *,
    store: str = APP,
    branch: str | None = None,
    model: str = "model-a",
    vector: np.ndarray | None = None,
    overwrite: bool = True,
    created_at: datetime | None = None,
    updated_at: datetime | None = None,
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
        overwrite=overwrite,
        created_at=created_at,
        updated_at=updated_at,
    )


def write(storage: MemoryStorage, *items: NewMemory) -> list[Memory]:
    return [result.memory for result in storage.write_memories(items)]


def stored(storage: MemoryStorage, label: str, store: str = APP) -> Memory:
    """The memory the test expects to find under ``label`` in ``store``."""
    memory = storage.get_memory(store, label)
    assert memory is not None, f"no memory {label!r} in store {store}"
    return memory


def ids(hits: Sequence[ScoredId]) -> list[int]:
    return [hit.id for hit in hits]


def scope(*stores: str, branch: str | None = None) -> Scope:
    return Scope(stores=stores or (APP,), branch=branch)


MODEL = "model-a"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def beta(confirm: float, disconfirm: float, prior: float) -> float:
    """The rule core uses: a Beta prior worth five observations."""
    return (confirm + 5 * prior) / (confirm + disconfirm + 5)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def matcher(
    storage: DecisionStorage,
    seed: int = 1,
    *,
    store: str = APP,
    model: str = MODEL,
    vector: Vector | None = None,
) -> Matcher:
    description = f"situation {seed}"
    return storage.add_matcher(store, description, model, unit(seed) if vector is None else vector)


def prediction(
    storage: DecisionStorage,
    seed: int = 1,
    *,
    store: str = APP,
    model: str = MODEL,
    prior: float = 0.5,
    vector: Vector | None = None,
) -> Prediction:
    return storage.add_prediction(
        store,
        f"the user prefers {seed}",
        f"because {seed}",
        model,
        unit(seed + 500) if vector is None else vector,
        prior,
    )


def evidence(
    storage: DecisionStorage,
    prediction_id: int,
    signal: str = "confirm",
    *,
    when: datetime = T0,
    session: str | None = None,
    detail: str = "",
    rule: Callable[[float, float, float], float] = beta,
) -> Prediction:
    """Apply one signal with the evidence core gives it."""
    confirm, disconfirm = {
        "create": (0.0, 0.0),
        "confirm": (1.0, 0.0),
        "disconfirm": (0.0, 1.0),
        "soft": (0.0, 0.25),
    }[signal]
    return storage.add_evidence(
        prediction_id,
        signal=signal,  # type: ignore[arg-type]
        confirm=confirm,
        disconfirm=disconfirm,
        detail=detail,
        session=session,
        when=when,
        rule=rule,
    )


def recent(moment: datetime) -> bool:
    return moment.utcoffset() == timedelta(0) and abs(datetime.now(UTC) - moment) < timedelta(
        minutes=1
    )


# The two vector searches behave alike; tests of either run on both.
if TYPE_CHECKING:
    Adder = Callable[..., Matcher | Prediction]
    Search = Callable[[Vector, str, Sequence[str], int], list[ScoredId]]
KINDS: dict[DecisionKind, tuple[Adder, Callable[[DecisionStorage], Search]]] = {
    "matcher": (matcher, lambda storage: storage.nearest_matchers),
    "prediction": (prediction, lambda storage: storage.nearest_predictions),
}


class BackendContract:
    """What every contract suite needs: a way to open the backend under test."""

    def open_backend(self, directory: Path) -> Any:
        """Open the backend whose data lives under ``directory`` (an empty folder at first).

        Called again with the same directory, it must open the same data:
        the durability and sharing tests open two handles at once.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define open_backend(self, directory) "
            "returning the backend under test"
        )


class MemoryStorageContract(BackendContract):
    """The contract of :class:`thatch.plugin.MemoryStorage`."""

    # -- basics -------------------------------------------------------------------

    def test_implements_the_protocol(self, storage: MemoryStorage) -> None:
        assert isinstance(storage, MemoryStorage)
        assert isinstance(storage.backend, str)
        assert storage.backend

    def test_a_fresh_store_is_empty_and_sound(self, storage: MemoryStorage) -> None:
        assert storage.list_stores() == []
        assert storage.list_memories() == []
        assert storage.models_in_use() == {}
        assert storage.integrity_problems() == []
        assert storage.get_memory(APP, "nothing") is None
        assert storage.get_memories([1, 2, 3]) == {}

    def test_write_creates_a_memory_with_every_field(self, storage: MemoryStorage) -> None:
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

    def test_the_same_label_in_two_stores_is_two_memories(self, storage: MemoryStorage) -> None:
        first, second = write(storage, new("x", "one"), new("x", "two", store=GLOBAL))
        assert first.id != second.id
        assert stored(storage, "x").content == "one"
        assert stored(storage, "x", GLOBAL).content == "two"

    def test_writing_the_same_memory_again_is_unchanged(self, storage: MemoryStorage) -> None:
        [created] = write(storage, new("a", "text", branch="dev"))
        [result] = storage.write_memories([new("a", "text", branch="dev", vector=unit(99))])
        assert result.action == "unchanged"
        assert result.memory == created
        assert storage.get_memory(APP, "a") == created

    @pytest.mark.parametrize(
        "change", [{"content": "new text"}, {"branch": "feature/x"}, {"model": "model-b"}]
    )
    def test_a_change_of_content_branch_or_model_updates(
        self, storage: MemoryStorage, change: dict[str, Any]
    ) -> None:
        base: dict[str, Any] = {"content": "text", "branch": None, "model": "model-a"}
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

    def test_an_update_keeps_recall_counts(self, storage: MemoryStorage) -> None:
        [memory] = write(storage, new("a", "old"))
        storage.record_recall([memory.id], datetime.now(UTC))
        [updated] = write(storage, new("a", "new"))
        assert updated.recall_count == 1
        assert stored(storage, "a").recall_count == 1

    def test_a_batch_reports_each_item_in_order(self, storage: MemoryStorage) -> None:
        write(storage, new("same", "x"), new("changed", "old"))
        results = storage.write_memories(
            [new("fresh"), new("same", "x"), new("changed", "new"), new("fresh", "again")]
        )
        assert [r.action for r in results] == ["created", "unchanged", "updated", "updated"]
        assert results[0].memory.id == results[3].memory.id
        assert stored(storage, "fresh").content == "again"
        assert storage.write_memories([]) == []

    def test_updating_an_archived_memory_is_refused_and_writes_nothing(
        self, storage: MemoryStorage
    ) -> None:
        write(storage, new("old", "kept"), new("other", "before"))
        storage.set_archived(APP, "old", True)

        with pytest.raises(ArchivedMemoryError) as caught:
            storage.write_memories([new("brand-new"), new("other", "after"), new("old", "changed")])

        message = str(caught.value)
        assert "old" in message
        assert APP in message
        assert "unarchive it first" in message
        assert f"thatch unarchive old {APP}" in message
        assert storage.get_memory(APP, "brand-new") is None
        assert stored(storage, "other").content == "before"
        assert stored(storage, "old").content == "kept"
        assert stored(storage, "old").archived

    def test_without_overwrite_a_taken_label_is_refused_inside_the_write(
        self, open_storage: Opener
    ) -> None:
        first, second = open_storage(), open_storage()
        write(first, new("deploy", "alpha", overwrite=False))

        # The second handle never looked the label up: the backend alone refuses.
        with pytest.raises(LabelTakenError) as caught:
            second.write_memories(
                [new("fresh", overwrite=False), new("deploy", "beta", overwrite=False)]
            )

        assert caught.value.current.content == "alpha"
        assert "'deploy' already exists" in str(caught.value)
        assert second.get_memory(APP, "fresh") is None  # the whole batch rolled back
        assert stored(second, "deploy").content == "alpha"
        with pytest.raises(LabelTakenError):
            second.write_memories([new("deploy", "alpha", branch="dev", overwrite=False)])
        # The same text again replaces nothing: unchanged, or re-embedded for another model.
        [same] = second.write_memories([new("deploy", "alpha", overwrite=False)])
        assert same.action == "unchanged"
        [moved] = second.write_memories([new("deploy", "alpha", model="model-b", overwrite=False)])
        assert (moved.action, moved.memory.model) == ("updated", "model-b")

    def test_racing_saves_of_a_new_label_leave_exactly_one(self, open_storage: Opener) -> None:
        writers = 6
        handles = [open_storage() for _ in range(writers)]
        start = threading.Barrier(writers)
        outcomes: list[str] = [""] * writers

        def save(index: int) -> None:
            start.wait()
            try:
                [result] = handles[index].write_memories(
                    [new("race", f"written by {index}", overwrite=False)]
                )
                outcomes[index] = result.action
            except LabelTakenError:
                outcomes[index] = "refused"
            except Exception as exc:  # shown in the assertion below
                outcomes[index] = repr(exc)

        threads = [threading.Thread(target=save, args=(index,)) for index in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert sorted(outcomes) == ["created"] + ["refused"] * (writers - 1)
        winner = outcomes.index("created")
        assert stored(handles[0], "race").content == f"written by {winner}"

    def test_a_write_keeps_the_times_it_is_given(self, storage: MemoryStorage) -> None:
        made, changed = T0, T0 + timedelta(days=3)
        [created] = write(storage, new("a", "old", created_at=made, updated_at=made))
        assert (created.created_at, created.updated_at) == (made, made)
        assert stored(storage, "a") == created

        # An update keeps when the memory was made, whatever the item says.
        [updated] = write(storage, new("a", "new", created_at=changed, updated_at=changed))
        assert (updated.created_at, updated.updated_at) == (made, changed)
        assert stored(storage, "a") == updated

        [fresh] = write(storage, new("b", "now"))
        assert recent(fresh.created_at)
        assert fresh.updated_at == fresh.created_at

    def test_delete(self, storage: MemoryStorage) -> None:
        [memory] = write(storage, new("a"))
        assert storage.delete_memory(APP, "a") is True
        assert storage.delete_memory(APP, "a") is False
        assert storage.get_memory(APP, "a") is None
        assert storage.get_memories([memory.id]) == {}
        assert storage.list_stores() == []
        assert storage.vector_search(unit(1), "model-a", scope(), 10) == []

    def test_archive_and_unarchive(self, storage: MemoryStorage) -> None:
        [memory] = write(storage, new("a", "words here"))
        archived = storage.set_archived(APP, "a", True)
        assert archived is not None
        assert archived.archived is True
        assert archived.id == memory.id
        assert archived.content == memory.content
        assert stored(storage, "a").archived is True
        assert storage.get_memories([memory.id])[memory.id].archived is True

        unarchived = storage.set_archived(APP, "a", False)
        assert unarchived is not None
        assert unarchived.archived is False
        assert storage.set_archived(APP, "missing", True) is None

    def test_get_memories_leaves_out_unknown_ids(self, storage: MemoryStorage) -> None:
        a, b = write(storage, new("a"), new("b"))
        found = storage.get_memories([b.id, 10_000, a.id])
        assert found == {a.id: a, b.id: b}
        assert storage.get_memories([]) == {}
        assert storage.get_memories(iter([a.id])) == {a.id: a}

    def test_list_memories_orders_by_store_then_label_and_filters(
        self, storage: MemoryStorage
    ) -> None:
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

    def test_list_stores_counts_live_and_archived(self, storage: MemoryStorage) -> None:
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

    def test_vector_search_ranks_by_cosine(self, storage: MemoryStorage) -> None:
        query = unit(7)
        cosines = {"far": 0.1, "close": 0.9, "mid": 0.5, "opposite": -0.8}
        made = write(
            storage,
            *(
                new(label, vector=toward(query, c, i))
                for i, (label, c) in enumerate(cosines.items())
            ),
        )
        by_label = {m.label: m.id for m in made}

        hits = storage.vector_search(query, "model-a", scope(), 10)

        assert ids(hits) == [by_label[x] for x in ("close", "mid", "far", "opposite")]
        for hit, expected in zip(hits, (0.9, 0.5, 0.1, -0.8), strict=True):
            assert hit.score == pytest.approx(expected, abs=1e-4)
        assert ids(storage.vector_search(query, "model-a", scope(), 2)) == ids(hits)[:2]
        assert storage.vector_search(query, "model-a", scope(), 0) == []

    def test_vector_search_sees_only_stores_in_scope(self, storage: MemoryStorage) -> None:
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

    def test_branch_rule_applies_to_both_searches(self, storage: MemoryStorage) -> None:
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

    def test_archived_memories_are_hidden_from_both_searches(self, storage: MemoryStorage) -> None:
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

    def test_vector_search_never_mixes_models(self, storage: MemoryStorage) -> None:
        query = unit(13)
        a, b = write(
            storage,
            new("a", vector=toward(query, 0.2, 1), model="model-a"),
            new("b", vector=toward(query, 0.95, 2), model="model-b"),
        )
        assert ids(storage.vector_search(query, "model-a", scope(), 10)) == [a.id]
        assert ids(storage.vector_search(query, "model-b", scope(), 10)) == [b.id]
        assert storage.vector_search(query, "model-c", scope(), 10) == []

    def test_vector_search_follows_writes(self, storage: MemoryStorage) -> None:
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

    def test_text_search_matches_words_and_stems(self, storage: MemoryStorage) -> None:
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

    def test_text_search_prefers_more_matching_words_and_labels(
        self, storage: MemoryStorage
    ) -> None:
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

    def test_text_search_sees_only_stores_in_scope(self, storage: MemoryStorage) -> None:
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

    def test_text_search_follows_content_changes(self, storage: MemoryStorage) -> None:
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
    def test_text_search_accepts_any_text(self, storage: MemoryStorage, query: str) -> None:
        write(storage, new("a", "foo bar NEAR hello café"))
        hits = storage.text_search(query, scope(), 10)
        assert all(hit.id > 0 for hit in hits)

    def test_text_search_with_no_words_finds_nothing(self, storage: MemoryStorage) -> None:
        write(storage, new("a", "anything"))
        assert storage.text_search("", scope(), 10) == []
        assert storage.text_search("?! -- ()", scope(), 10) == []

    def test_text_search_matches_accented_words_without_accents(
        self, storage: MemoryStorage
    ) -> None:
        [memory] = write(storage, new("a", "the café serves crème brûlée"))
        assert ids(storage.text_search("cafe creme", scope(), 10)) == [memory.id]

    # -- vectors by id and store --------------------------------------------------

    def test_embeddings_by_id_and_model(self, storage: MemoryStorage) -> None:
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

    def test_restore_keeps_every_field_and_skips_labels_already_there(
        self, storage: MemoryStorage
    ) -> None:
        (kept,) = write(storage, new("kept", "as first written"))
        restored = Memory(
            id=999,
            store=OTHER,
            label="moved",
            content="café, moved as it was",
            branch="feature",
            archived=True,
            model="model-b",
            created_at=at(1),
            updated_at=at(2),
            recall_count=7,
            last_recalled_at=at(3),
        )
        fresh = attrs.evolve(restored, store=APP, label="fresh", archived=False)
        fresh = attrs.evolve(fresh, recall_count=0, last_recalled_at=None, branch=None)
        again = attrs.evolve(kept, content="another text")
        created = storage.restore_memories(
            [(restored, unit(1)), (again, unit(2)), (fresh, unit(3))]
        )
        assert created == [True, False, True]
        moved = stored(storage, "moved", OTHER)
        assert attrs.evolve(moved, id=999) == restored
        assert attrs.evolve(stored(storage, "fresh"), id=999) == fresh
        assert stored(storage, "kept") == kept
        np.testing.assert_allclose(
            storage.embeddings([moved.id], "model-b")[moved.id], unit(1), rtol=1e-6
        )
        assert moved.id != kept.id
        assert ids(storage.text_search("cafe", scope(APP), 5)) == [stored(storage, "fresh").id]
        assert storage.restore_memories([]) == []
        assert storage.integrity_problems() == []

    def test_store_matrix_rows_match_ids(self, storage: MemoryStorage) -> None:
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

    def test_set_embeddings_replaces_vector_and_model(self, storage: MemoryStorage) -> None:
        query = unit(21)
        a, b = write(
            storage,
            new("a", vector=toward(query, 0.3, 1)),
            new("b", vector=toward(query, 0.6, 2)),
        )
        before = stored(storage, "a")
        storage.set_embeddings("model-b", [(a.id, toward(query, 0.9, 3)), (12345, query)])

        after = stored(storage, "a")
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

    def test_models_in_use_counts_archived_too(self, storage: MemoryStorage) -> None:
        write(storage, new("a"), new("b"), new("c", model="model-b"))
        storage.set_archived(APP, "b", True)
        assert storage.models_in_use() == {"model-a": 2, "model-b": 1}

    # -- reviews and recalls --------------------------------------------------------

    def test_reviewed_pairs_lifecycle(self, storage: MemoryStorage) -> None:
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

    def test_record_recall_counts_and_stamps(self, storage: MemoryStorage) -> None:
        a, b = write(storage, new("a"), new("b"))
        first = datetime(2030, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)
        storage.record_recall([a.id, b.id], first)
        later = first + timedelta(hours=1)
        storage.record_recall([a.id, 424242], later)
        storage.record_recall([], later)

        got_a, got_b = stored(storage, "a"), stored(storage, "b")
        assert got_a.recall_count == 2
        assert got_b.recall_count == 1
        assert got_a.last_recalled_at is not None
        assert got_b.last_recalled_at is not None
        assert abs(got_a.last_recalled_at - later) < timedelta(milliseconds=1)
        assert abs(got_b.last_recalled_at - first) < timedelta(milliseconds=1)
        assert got_a.last_recalled_at.utcoffset() == timedelta(0)
        # Recalling is not editing.
        assert got_a.updated_at == a.updated_at

    # -- durability and sharing -----------------------------------------------------

    def test_data_survives_reopening(self, open_storage: Opener) -> None:
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

    def test_two_handles_see_each_others_writes(self, open_storage: Opener) -> None:
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

    def test_integrity_check_passes_after_mixed_work(self, storage: MemoryStorage) -> None:
        write(storage, *(new(f"m{i}", f"content number {i}") for i in range(30)))
        for i in range(0, 30, 3):
            storage.delete_memory(APP, f"m{i}")
        for i in range(1, 30, 3):
            write(storage, new(f"m{i}", f"rewritten {i}"))
        storage.set_archived(APP, "m2", True)
        assert storage.integrity_problems() == []


class DecisionStorageContract(BackendContract):
    """The contract of :class:`thatch.plugin.DecisionStorage`."""

    # -- creating ---------------------------------------------------------------------

    def test_implements_the_protocol(self, storage: DecisionStorage) -> None:
        assert isinstance(storage, DecisionStorage)

    def test_a_fresh_store_has_no_decision_model(self, storage: DecisionStorage) -> None:
        assert storage.integrity_problems() == []
        assert storage.list_matchers() == []
        assert storage.list_predictions() == []
        assert storage.fires() == []
        assert storage.signals() == []
        assert storage.evidence_totals(APP) == (0.0, 0.0)
        assert not storage.has_matchers([APP])
        assert storage.nearest_matchers(unit(1), MODEL, [APP], 5) == []
        assert storage.nearest_predictions(unit(1), MODEL, [APP], 5) == []

    def test_add_matcher_keeps_every_field(self, storage: DecisionStorage) -> None:
        created = storage.add_matcher(APP, "choosing a test runner", MODEL, unit(3))
        assert created.id > 0
        assert (created.store, created.description, created.model) == (
            APP,
            "choosing a test runner",
            MODEL,
        )
        assert recent(created.created_at)
        assert created.updated_at == created.created_at
        assert storage.get_matchers([created.id]) == {created.id: created}
        assert storage.list_matchers() == [created]

    def test_a_new_prediction_starts_at_its_prior(self, storage: DecisionStorage) -> None:
        created = storage.add_prediction(APP, "uses pytest", "said so", MODEL, unit(4), 0.8)
        assert (created.store, created.statement, created.rationale, created.model) == (
            APP,
            "uses pytest",
            "said so",
            MODEL,
        )
        assert created.prior == created.confidence == 0.8
        assert created.confirm_count == created.disconfirm_count == 0.0
        assert created.evidence == 0.0
        assert recent(created.created_at)
        assert created.updated_at == created.created_at
        assert storage.get_predictions([created.id]) == {created.id: created}
        assert storage.provenance(created.id) == []

    def test_ids_are_distinct_and_get_leaves_out_missing_ones(
        self, storage: DecisionStorage
    ) -> None:
        m1, m2 = matcher(storage, 1), matcher(storage, 2)
        p1, p2 = prediction(storage, 1), prediction(storage, 2)
        assert m1.id != m2.id
        assert p1.id != p2.id
        assert storage.get_matchers([m2.id, 9999]) == {m2.id: m2}
        assert storage.get_predictions([p1.id, 9999]) == {p1.id: p1}
        assert storage.get_matchers([]) == {}
        assert storage.get_predictions([]) == {}

    def test_lists_filter_by_store_and_order_by_id(self, storage: DecisionStorage) -> None:
        m1 = matcher(storage, 1, store=OTHER)
        m2 = matcher(storage, 2)
        m3 = matcher(storage, 3, store="global")
        p1 = prediction(storage, 1)
        p2 = prediction(storage, 2, store=OTHER)
        assert storage.list_matchers() == [m1, m2, m3]
        assert storage.list_matchers([APP, "global"]) == [m2, m3]
        assert storage.list_matchers([]) == []
        assert storage.list_predictions() == [p1, p2]
        assert storage.list_predictions([OTHER]) == [p2]
        assert storage.list_predictions(["nowhere"]) == []

    def test_has_matchers_looks_only_at_the_stores_given(self, storage: DecisionStorage) -> None:
        prediction(storage, 1)
        assert not storage.has_matchers([APP])
        matcher(storage, 1, store=OTHER)
        assert not storage.has_matchers([APP])
        assert storage.has_matchers([APP, OTHER])
        assert not storage.has_matchers([])
        matcher(storage, 2, model="model-b")
        assert storage.has_matchers([APP])

    # -- evidence -----------------------------------------------------------------------

    def test_counts_are_real_and_survive_reopening(self, open_storage: Opener) -> None:
        first = open_storage()
        created = prediction(first, 1, prior=0.5)
        for minute in range(3):
            evidence(first, created.id, "confirm", when=at(minute))
        updated = evidence(first, created.id, "soft", when=at(3))
        # (3 + 2.5) / (3 + 0.25 + 5)
        assert round(updated.confidence, 4) == 0.6667
        assert (updated.confirm_count, updated.disconfirm_count) == (3.0, 0.25)
        assert updated.evidence == 3.25

        second = open_storage()
        [again] = second.get_predictions([created.id]).values()
        assert again == updated
        assert (again.confirm_count, again.disconfirm_count) == (3.0, 0.25)
        open_storage.close(first)
        open_storage.close(second)
        assert open_storage().get_predictions([created.id])[created.id] == updated

    def test_the_rule_gets_the_new_counts_and_the_prior(self, storage: DecisionStorage) -> None:
        created = prediction(storage, 1, prior=0.3)
        evidence(storage, created.id, "confirm")
        calls = []

        def rule(confirm: float, disconfirm: float, prior: float) -> float:
            calls.append((confirm, disconfirm, prior))
            return 0.123

        updated = evidence(storage, created.id, "disconfirm", when=at(1), rule=rule)
        assert calls == [(1.0, 1.0, 0.3)]
        assert updated.confidence == 0.123
        assert updated.prior == 0.3
        assert storage.get_predictions([created.id])[created.id] == updated

    def test_evidence_writes_provenance_in_order(self, storage: DecisionStorage) -> None:
        created = prediction(storage, 1)
        other = prediction(storage, 2)
        steps = [
            ("create", "s1", "asked for pytest"),
            ("confirm", "s1", "kept pytest"),
            ("soft", None, "hesitated"),
            ("disconfirm", "s2", "chose unittest"),
        ]
        for minute, (signal, session, detail) in enumerate(steps):
            last = evidence(
                storage, created.id, signal, when=at(minute), session=session, detail=detail
            )
        evidence(storage, other.id, "confirm", when=at(1.5))

        trail = storage.provenance(created.id)
        assert [(e.signal, e.session, e.detail) for e in trail] == steps
        assert [e.created_at for e in trail] == [at(minute) for minute in range(4)]
        assert all(e.prediction_id == created.id for e in trail)
        assert len({e.id for e in trail}) == 4
        assert (last.confirm_count, last.disconfirm_count) == (1.0, 1.25)
        assert last.updated_at == at(3)
        assert last.created_at == created.created_at
        assert [e.prediction_id for e in storage.provenance(other.id)] == [other.id]

    def test_a_create_signal_moves_nothing_but_is_recorded(self, storage: DecisionStorage) -> None:
        created = prediction(storage, 1, prior=0.7)
        updated = evidence(storage, created.id, "create", detail="new preference")
        assert updated.confidence == pytest.approx(0.7)
        assert updated.evidence == 0.0
        assert [e.signal for e in storage.provenance(created.id)] == ["create"]

    def test_evidence_for_a_missing_prediction_raises_and_writes_nothing(
        self, storage: DecisionStorage
    ) -> None:
        created = prediction(storage, 1)
        with pytest.raises(NotFoundError, match="9999"):
            evidence(storage, 9999, "confirm")
        assert storage.signals() == []
        assert storage.get_predictions([created.id])[created.id] == created

    def test_a_failing_rule_writes_nothing(self, storage: DecisionStorage) -> None:
        created = prediction(storage, 1)

        def broken(confirm: float, disconfirm: float, prior: float) -> float:
            raise ZeroDivisionError

        with pytest.raises(ZeroDivisionError):
            evidence(storage, created.id, "confirm", rule=broken)
        assert storage.provenance(created.id) == []
        assert storage.get_predictions([created.id])[created.id] == created

    def test_evidence_totals_are_per_store(self, storage: DecisionStorage) -> None:
        a, b = prediction(storage, 1), prediction(storage, 2)
        c = prediction(storage, 3, store=OTHER)
        evidence(storage, a.id, "confirm")
        evidence(storage, a.id, "soft")
        evidence(storage, b.id, "confirm")
        evidence(storage, b.id, "disconfirm")
        evidence(storage, c.id, "disconfirm")
        assert storage.evidence_totals(APP) == (2.0, 1.25)
        assert storage.evidence_totals(OTHER) == (0.0, 1.0)
        assert storage.evidence_totals("nowhere") == (0.0, 0.0)

    # -- edges ------------------------------------------------------------------------

    def test_link_is_idempotent_and_keeps_the_first_weight(self, storage: DecisionStorage) -> None:
        m, p = matcher(storage), prediction(storage)
        assert storage.link(m.id, p.id, 0.8)
        assert not storage.link(m.id, p.id, 0.3)
        assert not storage.link(m.id, p.id)
        assert storage.edges_to(p.id) == [Edge(m.id, p.id, 0.8)]
        assert storage.edges_from([m.id]) == [Edge(m.id, p.id, 0.8)]

    def test_the_default_weight_is_one(self, storage: DecisionStorage) -> None:
        m, p = matcher(storage), prediction(storage)
        assert storage.link(m.id, p.id)
        assert storage.edges_to(p.id) == [Edge(m.id, p.id, 1.0)]

    def test_edges_from_and_to(self, storage: DecisionStorage) -> None:
        m1, m2, m3 = (matcher(storage, seed) for seed in (1, 2, 3))
        p1, p2 = prediction(storage, 1), prediction(storage, 2)
        storage.link(m1.id, p1.id, 0.9)
        storage.link(m1.id, p2.id, 0.7)
        storage.link(m2.id, p1.id, 0.5)
        storage.link(m3.id, p2.id)

        def pairs(edges: list[Edge]) -> set[tuple[int, int, float]]:
            return {(e.matcher_id, e.prediction_id, e.weight) for e in edges}

        assert pairs(storage.edges_from([m1.id, m2.id])) == {
            (m1.id, p1.id, 0.9),
            (m1.id, p2.id, 0.7),
            (m2.id, p1.id, 0.5),
        }
        assert pairs(storage.edges_from({m3.id: 0.5})) == {(m3.id, p2.id, 1.0)}
        assert storage.edges_from([]) == []
        assert storage.edges_from([9999]) == []
        assert pairs(storage.edges_to(p1.id)) == {(m1.id, p1.id, 0.9), (m2.id, p1.id, 0.5)}
        assert storage.edges_to(9999) == []

    def test_linking_a_missing_row_raises_and_writes_nothing(
        self, storage: DecisionStorage
    ) -> None:
        m, p = matcher(storage), prediction(storage)
        with pytest.raises(NotFoundError, match="9999"):
            storage.link(9999, p.id)
        with pytest.raises(NotFoundError, match="9999"):
            storage.link(m.id, 9999)
        assert storage.edges_to(p.id) == []
        assert storage.edges_from([m.id]) == []

    # -- vector search ------------------------------------------------------------------

    @pytest.mark.parametrize("kind", sorted(KINDS))
    def test_nearest_ranks_by_cosine(self, storage: DecisionStorage, kind: DecisionKind) -> None:
        add, nearest = KINDS[kind]
        query = unit(77)
        rows = {
            cosine: add(storage, i, vector=toward(query, cosine, i))
            for i, cosine in enumerate((0.2, 0.95, -0.4, 0.6), start=1)
        }
        hits = nearest(storage)(query, MODEL, [APP], 10)
        assert ids(hits) == [rows[c].id for c in (0.95, 0.6, 0.2, -0.4)]
        assert [hit.score for hit in hits] == pytest.approx([0.95, 0.6, 0.2, -0.4], abs=1e-5)
        assert ids(nearest(storage)(query, MODEL, [APP], 2)) == [rows[0.95].id, rows[0.6].id]
        assert nearest(storage)(query, MODEL, [APP], 0) == []
        assert nearest(storage)(query, MODEL, [], 10) == []

    @pytest.mark.parametrize("kind", sorted(KINDS))
    def test_nearest_sees_only_the_stores_given(
        self, storage: DecisionStorage, kind: DecisionKind
    ) -> None:
        add, nearest = KINDS[kind]
        query = unit(78)
        here = add(storage, 1, vector=toward(query, 0.5, 1))
        there = add(storage, 2, store=OTHER, vector=toward(query, 0.9, 2))
        add(storage, 3, store="global", vector=toward(query, 0.99, 3))
        assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [here.id]
        assert ids(nearest(storage)(query, MODEL, [APP, OTHER], 10)) == [there.id, here.id]
        assert nearest(storage)(query, MODEL, ["nowhere"], 10) == []

    @pytest.mark.parametrize("kind", sorted(KINDS))
    def test_nearest_never_mixes_models(self, storage: DecisionStorage, kind: DecisionKind) -> None:
        add, nearest = KINDS[kind]
        query = unit(79)
        a = add(storage, 1, vector=toward(query, 0.3, 1))
        b = add(storage, 2, model="model-b", vector=toward(query, 0.9, 2))
        add(storage, 3, model="model-c", vector=unit(3, 8))  # another dimension too
        assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [a.id]
        assert ids(nearest(storage)(query, "model-b", [APP], 10)) == [b.id]
        assert nearest(storage)(query, "model-z", [APP], 10) == []

    @pytest.mark.parametrize("kind", sorted(KINDS))
    def test_nearest_follows_adds_and_deletes(
        self, storage: DecisionStorage, kind: DecisionKind
    ) -> None:
        add, nearest = KINDS[kind]
        query = unit(80)
        first = add(storage, 1, vector=toward(query, 0.4, 1))
        assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [first.id]  # warm
        second = add(storage, 2, vector=toward(query, 0.8, 2))
        assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [second.id, first.id]
        delete = storage.delete_matcher if isinstance(first, Matcher) else storage.delete_prediction
        assert delete(second.id)
        assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [first.id]

    def test_evidence_links_and_fires_leave_the_search_alone(
        self, storage: DecisionStorage
    ) -> None:
        query = unit(81)
        m = matcher(storage, 1, vector=toward(query, 0.7, 1))
        p = prediction(storage, 1, vector=toward(query, 0.6, 2))
        assert ids(storage.nearest_predictions(query, MODEL, [APP], 5)) == [p.id]
        storage.link(m.id, p.id)
        evidence(storage, p.id, "disconfirm")
        storage.record_fires("s", [(p.id, 0.4, 0.3)], T0)
        [hit] = storage.nearest_predictions(query, MODEL, [APP], 5)
        assert (hit.id, round(hit.score, 4)) == (p.id, 0.6)
        assert ids(storage.nearest_matchers(query, MODEL, [APP], 5)) == [m.id]

    def test_a_second_handle_sees_the_first_ones_vectors(self, open_storage: Opener) -> None:
        one, two = open_storage(), open_storage()
        query = unit(82)
        # Warm both handles' caches before the other one writes.
        for handle in (one, two):
            assert handle.nearest_matchers(query, MODEL, [APP], 5) == []
            assert handle.nearest_predictions(query, MODEL, [APP], 5) == []

        m = matcher(one, 1, vector=toward(query, 0.9, 1))
        p = prediction(one, 1, vector=toward(query, 0.8, 2))
        assert ids(two.nearest_matchers(query, MODEL, [APP], 5)) == [m.id]
        assert ids(two.nearest_predictions(query, MODEL, [APP], 5)) == [p.id]
        assert two.has_matchers([APP])

        assert two.delete_matcher(m.id)
        assert two.delete_prediction(p.id)
        assert one.nearest_matchers(query, MODEL, [APP], 5) == []
        assert one.nearest_predictions(query, MODEL, [APP], 5) == []

    # -- deleting ---------------------------------------------------------------------

    def test_deleting_a_prediction_takes_its_edges_provenance_and_fires(
        self, storage: DecisionStorage
    ) -> None:
        m = matcher(storage)
        gone, kept = prediction(storage, 1), prediction(storage, 2)
        for p in (gone, kept):
            storage.link(m.id, p.id)
            evidence(storage, p.id, "confirm", session="s")
        storage.record_fires("s", [(gone.id, 0.6, 0.5), (kept.id, 0.6, 0.4)], T0)

        assert storage.delete_prediction(gone.id)
        assert storage.get_predictions([gone.id]) == {}
        assert storage.edges_from([m.id]) == [Edge(m.id, kept.id, 1.0)]
        assert storage.provenance(gone.id) == []
        assert [e.prediction_id for e in storage.signals()] == [kept.id]
        assert [f.prediction_id for f in storage.fires()] == [kept.id]
        assert storage.get_matchers([m.id]) == {m.id: m}
        assert not storage.delete_prediction(gone.id)
        assert storage.integrity_problems() == []

    def test_deleting_a_matcher_takes_its_edges_only(self, storage: DecisionStorage) -> None:
        gone, kept = matcher(storage, 1), matcher(storage, 2)
        p = prediction(storage)
        storage.link(gone.id, p.id)
        storage.link(kept.id, p.id)
        evidence(storage, p.id, "confirm")

        assert storage.delete_matcher(gone.id)
        assert storage.list_matchers() == [kept]
        assert storage.edges_to(p.id) == [Edge(kept.id, p.id, 1.0)]
        assert len(storage.provenance(p.id)) == 1
        assert not storage.delete_matcher(gone.id)
        assert storage.integrity_problems() == []

    def test_deleting_a_missing_row_changes_nothing(self, storage: DecisionStorage) -> None:
        m, p = matcher(storage), prediction(storage)
        storage.link(m.id, p.id)
        assert not storage.delete_matcher(9999)
        assert not storage.delete_prediction(9999)
        assert storage.list_matchers() == [m]
        assert storage.list_predictions() == [p]
        assert storage.edges_to(p.id) == [Edge(m.id, p.id, 1.0)]

    # -- fires and signals ------------------------------------------------------------

    def test_fires_are_logged_and_filtered_by_store(self, storage: DecisionStorage) -> None:
        a, b = prediction(storage, 1), prediction(storage, 2)
        c = prediction(storage, 3, store=OTHER)
        storage.record_fires("s1", [(a.id, 0.6, 0.5), (c.id, 0.7, 0.2)], at(2))
        storage.record_fires(None, [(b.id, 0.55, 0.45)], at(1))
        storage.record_fires("s2", [], at(3))

        every = storage.fires()
        assert [(f.prediction_id, f.session, f.confidence, f.score) for f in every] == [
            (b.id, None, 0.55, 0.45),
            (a.id, "s1", 0.6, 0.5),
            (c.id, "s1", 0.7, 0.2),
        ]
        assert [f.fired_at for f in every] == [at(1), at(2), at(2)]
        assert every[0].fired_at.utcoffset() == timedelta(0)
        assert len({f.id for f in every}) == 3
        assert [f.prediction_id for f in storage.fires([APP])] == [b.id, a.id]
        assert [f.prediction_id for f in storage.fires([OTHER])] == [c.id]
        assert storage.fires([]) == []

    def test_a_fire_of_a_deleted_prediction_is_dropped(self, storage: DecisionStorage) -> None:
        kept, gone = prediction(storage, 1), prediction(storage, 2)
        storage.delete_prediction(gone.id)
        storage.record_fires("s", [(kept.id, 0.6, 0.5), (gone.id, 0.6, 0.5)], T0)
        assert [f.prediction_id for f in storage.fires()] == [kept.id]

    def test_signals_are_filtered_by_store_oldest_first(self, storage: DecisionStorage) -> None:
        a = prediction(storage, 1)
        b = prediction(storage, 2, store=OTHER)
        evidence(storage, a.id, "confirm", when=at(5), session="s1")
        evidence(storage, b.id, "disconfirm", when=at(1), session="s2")
        evidence(storage, a.id, "soft", when=at(3))
        every = storage.signals()
        assert [(e.prediction_id, e.signal, e.created_at) for e in every] == [
            (b.id, "disconfirm", at(1)),
            (a.id, "soft", at(3)),
            (a.id, "confirm", at(5)),
        ]
        assert every == storage.signals([APP, OTHER])
        assert [e.signal for e in storage.signals([APP])] == ["soft", "confirm"]
        assert [e.session for e in storage.signals([OTHER])] == ["s2"]
        assert storage.signals(["nowhere"]) == []

    def test_integrity_check_passes_after_decision_work(self, storage: DecisionStorage) -> None:
        rng = np.random.default_rng(5)
        matchers = [matcher(storage, i) for i in range(10)]
        predictions = [prediction(storage, i, store=(APP, OTHER)[i % 2]) for i in range(10)]
        for m in matchers:
            for index in rng.choice(len(predictions), 3, replace=False):
                p = predictions[index]
                storage.link(m.id, p.id, float(rng.random()))
        for i, p in enumerate(predictions):
            evidence(storage, p.id, ("confirm", "soft", "disconfirm")[i % 3], when=at(i))
        storage.record_fires("s", [(p.id, p.confidence, 0.5) for p in predictions], at(20))
        for m in matchers[::3]:
            storage.delete_matcher(m.id)
        for p in predictions[::4]:
            storage.delete_prediction(p.id)
        assert storage.integrity_problems() == []

    def test_restored_rows_keep_every_field(self, storage: DecisionStorage) -> None:
        first = matcher(storage, 1)
        old_m = Matcher(77, OTHER, "moved situation", "model-b", at(1), at(2))
        old_p = Prediction(
            id=88,
            store=OTHER,
            statement="prefers tabs",
            rationale="said so twice",
            model="model-b",
            confirm_count=2.0,
            disconfirm_count=0.25,
            prior=0.4,
            confidence=0.61,
            created_at=at(1),
            updated_at=at(5),
        )
        trail = [
            Provenance(5, 88, "create", "asked", "s1", at(1)),
            Provenance(6, 88, "soft", "hesitated", None, at(4)),
            Provenance(7, 88, "confirm", "kept it", "s2", at(3)),
        ]
        (m,) = storage.restore_matchers([(old_m, unit(3))])
        (p,) = storage.restore_predictions([(old_p, unit(4), trail)])
        assert m.id != first.id
        assert attrs.evolve(m, id=77) == old_m
        assert attrs.evolve(p, id=88) == old_p
        assert storage.get_matchers([m.id]) == {m.id: m}
        assert storage.get_predictions([p.id]) == {p.id: p}
        entries = storage.provenance(p.id)
        assert [(e.signal, e.detail, e.session, e.created_at) for e in entries] == sorted(
            [(e.signal, e.detail, e.session, e.created_at) for e in trail], key=lambda e: e[3]
        )
        assert {e.prediction_id for e in entries} == {p.id}
        assert ids(storage.nearest_matchers(unit(3), "model-b", [OTHER], 5)) == [m.id]
        assert ids(storage.nearest_predictions(unit(4), "model-b", [OTHER], 5)) == [p.id]
        assert storage.restore_matchers([]) == []
        assert storage.restore_predictions([]) == []
        assert storage.integrity_problems() == []

    def test_decision_embeddings_by_id_and_model(self, storage: DecisionStorage) -> None:
        a = matcher(storage, 1)
        b = matcher(storage, 2, model="model-b")
        p = prediction(storage, 3)
        found = storage.decision_embeddings("matcher", [a.id, b.id, 999], MODEL)
        assert set(found) == {a.id}
        np.testing.assert_allclose(found[a.id], unit(1), rtol=1e-6)
        assert found[a.id].dtype == np.float32
        vectors = storage.decision_embeddings("prediction", [p.id], MODEL)
        np.testing.assert_allclose(vectors[p.id], unit(503), rtol=1e-6)
        assert storage.decision_embeddings("prediction", [], MODEL) == {}

    @pytest.mark.parametrize("name", sorted(KINDS))
    def test_new_embeddings_move_rows_to_another_model(
        self, storage: DecisionStorage, name: DecisionKind
    ) -> None:
        add, nearest = KINDS[name]
        query = unit(81)
        row = add(storage, 1, vector=toward(query, 0.3, 1))
        assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [row.id]  # warm the cache
        storage.set_decision_embeddings(name, "model-b", [(row.id, query), (9999, query)])
        assert nearest(storage)(query, MODEL, [APP], 10) == []
        hits = nearest(storage)(query, "model-b", [APP], 10)
        assert ids(hits) == [row.id]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
        listed = storage.list_matchers() if name == "matcher" else storage.list_predictions()
        assert [item.model for item in listed] == ["model-b"]
        storage.set_decision_embeddings(name, "model-c", [])


def logged(
    number: int = 1,
    session: str = "s1",
    *,
    minutes: float = 0,
    confidence: int = 70,
    toward: str | None = None,
    **changes: Any,
) -> LoggedPrediction:
    """The ``number``-th Prediction of ``session`` as a row, recorded ``minutes`` after T0."""
    row: dict[str, Any] = {
        "id": f"{session}:1" if number == 1 else f"{session}:{number}:1",
        "session_id": session,
        "action": "accept",
        "toward": f"the user takes option {number}" if toward is None else toward,
        "confidence": confidence,
        "source": "assistant",
        "recorded_at": at(minutes),
    }
    return LoggedPrediction(**(row | changes))


def scored(entry: LoggedPrediction, actual: str | None, when: datetime | None) -> LoggedPrediction:
    """``entry`` with this score (``None, None``: unscored)."""
    return attrs.evolve(entry, actual=actual, scored_at=when)


class PredictionStorageContract(BackendContract):
    """The contract of :class:`thatch.plugin.PredictionStorage`."""

    def test_implements_the_protocol(self, storage: PredictionStorage) -> None:
        assert isinstance(storage, PredictionStorage)

    def test_a_fresh_log_is_empty_and_sound(self, storage: PredictionStorage) -> None:
        assert storage.list_prediction_entries() == []
        assert storage.list_prediction_entries("s1") == []
        assert storage.get_prediction_entry("s1:1") is None
        assert storage.get_prediction_entry("s1:1", "s1") is None
        assert storage.record_predictions([]) == []
        assert storage.integrity_problems() == []

    def test_recording_keeps_every_field(self, storage: PredictionStorage) -> None:
        entry = logged(
            2,
            minutes=3,
            toward='keep the parser strict — «ünïcode» and "quotes"\nover two lines',
            confidence=0,
            action="correct",
            source="task-notification",
            store=OTHER,
            fields={"triggers": ["a", "b"], "levers": {"depth": 2, "ok": True, "none": None}},
        )
        assert storage.record_predictions([entry]) == [True]
        stored = storage.get_prediction_entry(entry.id, entry.session_id)
        assert stored is not None
        assert stored == entry
        assert stored.to_json() == entry.to_json()
        assert (stored.actual, stored.scored_at) == (None, None)
        assert storage.get_prediction_entry(entry.id) == entry
        assert storage.list_prediction_entries() == [entry]

    def test_a_time_comes_back_as_the_same_moment(self, storage: PredictionStorage) -> None:
        east = timezone(timedelta(hours=2))
        entry = logged(recorded_at=datetime(2025, 3, 1, 14, 0, 0, 123456, tzinfo=east))
        storage.record_predictions([entry])
        [stored] = storage.list_prediction_entries()
        assert stored.recorded_at == entry.recorded_at
        assert stored.recorded_at.utcoffset() is not None

    def test_an_entry_recorded_with_its_score_keeps_it(self, storage: PredictionStorage) -> None:
        # An exported log read back in: rows come scored.
        entry = logged(actual="correct", scored_at=at(30), confidence=100)
        assert storage.record_predictions([entry]) == [True]
        assert storage.get_prediction_entry(entry.id) == entry

    def test_a_batch_reports_each_entry_in_order(self, storage: PredictionStorage) -> None:
        first, second, third = logged(1), logged(2), logged(3)
        assert storage.record_predictions([first, second]) == [True, True]
        assert storage.record_predictions([second, third, first]) == [False, True, False]
        assert storage.list_prediction_entries() == [first, second, third]

    def test_an_entry_already_logged_is_kept_as_stored(self, storage: PredictionStorage) -> None:
        first = logged(minutes=1, fields={"triggers": ["tabs"]})
        storage.record_predictions([first])
        storage.score_prediction(first.id, "accept", at(5))
        kept = scored(first, "accept", at(5))
        again = logged(
            minutes=9, toward="other words", confidence=10, store=OTHER, action="correct"
        )
        assert storage.record_predictions([again]) == [False]
        assert storage.list_prediction_entries() == [kept]

    def test_within_one_batch_the_first_of_a_key_wins(self, storage: PredictionStorage) -> None:
        first, copy, other = logged(1), logged(1, confidence=5, minutes=2), logged(2)
        assert storage.record_predictions([first, copy, other, copy]) == [
            True,
            False,
            True,
            False,
        ]
        assert storage.list_prediction_entries() == [first, other]

    def test_the_key_is_the_id_and_the_session(self, storage: PredictionStorage) -> None:
        mine = logged(id="shared:1", session_id="s1", minutes=1)
        theirs = logged(id="shared:1", session_id="s2", minutes=2)
        assert storage.record_predictions([mine, theirs]) == [True, True]
        assert storage.get_prediction_entry("shared:1", "s1") == mine
        assert storage.get_prediction_entry("shared:1", "s2") == theirs
        assert storage.get_prediction_entry("shared:1", "s3") is None
        # Without a session: the first recorded.
        assert storage.get_prediction_entry("shared:1") == mine
        assert storage.score_prediction("shared:1", "correct", at(4), "s2")
        assert storage.get_prediction_entry("shared:1", "s2") == scored(theirs, "correct", at(4))
        assert storage.get_prediction_entry("shared:1", "s1") == mine
        assert storage.score_prediction("shared:1", "accept", at(6))
        assert storage.get_prediction_entry("shared:1", "s1") == scored(mine, "accept", at(6))

    def test_entries_list_oldest_first_by_session(self, storage: PredictionStorage) -> None:
        late = logged(1, "s1", minutes=5)
        early = logged(1, "s2", minutes=1)
        tie_first = logged(2, "s1", minutes=3)
        tie_second = logged(3, "s1", minutes=3)
        tie_third = logged(2, "s2", minutes=3)
        storage.record_predictions([late, early, tie_first])
        storage.record_predictions([tie_second, tie_third])
        assert storage.list_prediction_entries() == [
            early,
            tie_first,
            tie_second,
            tie_third,
            late,
        ]
        assert storage.list_prediction_entries("s1") == [tie_first, tie_second, late]
        assert storage.list_prediction_entries("s2") == [early, tie_third]
        assert storage.list_prediction_entries("nobody") == []

    def test_a_new_score_replaces_the_old_one(self, storage: PredictionStorage) -> None:
        entry = logged(1, fields={"levers": ["speed"]})
        other = logged(1, "s2")
        storage.record_predictions([entry, other])

        assert storage.score_prediction(entry.id, "accept", at(10))
        assert storage.get_prediction_entry(entry.id) == scored(entry, "accept", at(10))
        assert storage.score_prediction(entry.id, "correct", at(20), "s1")
        assert storage.get_prediction_entry(entry.id) == scored(entry, "correct", at(20))
        assert storage.get_prediction_entry(other.id) == other
        # Recording a scored entry again keeps its score.
        assert storage.record_predictions([entry]) == [False]
        assert storage.get_prediction_entry(entry.id) == scored(entry, "correct", at(20))

    def test_scoring_a_missing_entry_is_false(self, storage: PredictionStorage) -> None:
        entry = logged()
        storage.record_predictions([entry])
        assert not storage.score_prediction("missing", "accept", at(30))
        assert not storage.score_prediction(entry.id, "accept", at(30), "s2")
        assert storage.list_prediction_entries() == [entry]

    @pytest.mark.parametrize(
        ("actual", "when"),
        [("maybe", at(1)), ("", at(1)), ("accept", datetime(2025, 3, 1, 12, 0))],
    )
    def test_a_bad_score_is_refused_and_writes_nothing(
        self, storage: PredictionStorage, actual: str, when: datetime
    ) -> None:
        entry = logged()
        storage.record_predictions([entry])
        with pytest.raises(InvalidInputError):
            storage.score_prediction(entry.id, actual, when)
        assert storage.list_prediction_entries() == [entry]

    def test_the_log_survives_reopening(self, open_storage: Opener) -> None:
        first = open_storage()
        entry = logged(fields={"triggers": ["kept"]})
        first.record_predictions([entry, logged(2)])
        first.score_prediction(entry.id, "accept", at(4))
        open_storage.close(first)

        again = open_storage()
        assert again.list_prediction_entries() == [scored(entry, "accept", at(4)), logged(2)]
        assert again.record_predictions([entry, logged(3)]) == [False, True]
        assert again.integrity_problems() == []

    def test_two_handles_see_each_others_entries(self, open_storage: Opener) -> None:
        one, two = open_storage(), open_storage()
        entry = logged()
        assert two.list_prediction_entries() == []
        assert one.record_predictions([entry]) == [True]
        assert two.get_prediction_entry(entry.id) == entry
        assert two.record_predictions([entry]) == [False]
        assert two.score_prediction(entry.id, "correct", at(1))
        assert one.list_prediction_entries() == [scored(entry, "correct", at(1))]

    def test_two_writers_at_once_leave_each_row_once(self, open_storage: Opener) -> None:
        # Two Stop hooks of one session at once, each recording the transcript
        # so far as it grows: the same rows, in the same order, again and again.
        rows = [logged(number, minutes=number % 7) for number in range(1, 41)]
        handles = [open_storage(), open_storage()]
        start = threading.Barrier(len(handles))
        new: dict[str, int] = {row.id: 0 for row in rows}
        finished: list[int] = []

        def record(index: int) -> None:
            start.wait()
            for end in range(4, len(rows) + 1, 4):
                flags = handles[index].record_predictions(rows[:end])
                for row, flag in zip(rows, flags, strict=False):
                    new[row.id] += flag
            finished.append(index)

        threads = [threading.Thread(target=record, args=(index,)) for index in (0, 1)]
        # Switch threads often, so that a read and its write seldom run together.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-5)
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
        finally:
            sys.setswitchinterval(interval)
        assert sorted(finished) == [0, 1], "a writer failed or did not finish"
        assert new == {row.id: 1 for row in rows}
        expected = sorted(rows, key=lambda row: row.recorded_at)
        assert [row.id for row in handles[0].list_prediction_entries()] == [
            row.id for row in expected
        ]
        assert handles[1].integrity_problems() == []

    def test_integrity_check_passes_after_log_work(self, storage: PredictionStorage) -> None:
        rows = [logged(number, ("s1", "s2")[number % 2], minutes=number) for number in range(30)]
        storage.record_predictions(rows)
        storage.record_predictions(rows[::2])
        for entry in rows[::3]:
            storage.score_prediction(entry.id, "accept", at(50), entry.session_id)
            storage.score_prediction(entry.id, "correct", at(60), entry.session_id)
        assert storage.integrity_problems() == []


class StorageContract(MemoryStorageContract, DecisionStorageContract, PredictionStorageContract):
    """The whole storage contract, for a backend whose one object keeps every part."""

    def test_implements_the_protocol(self, storage: Any) -> None:
        assert isinstance(storage, MemoryStorage)
        assert isinstance(storage, DecisionStorage)
        assert isinstance(storage, PredictionStorage)
        assert storage.backend
