"""The decision model's part of the storage contract (thatch.plugin.decision_storage).

Each test runs once per backend registered in ``conftest.BACKENDS``. Vectors
are fake, seeded unit vectors; the confidence rule is passed in, as core does.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from test_storage_contract import toward, unit
from thatch.plugin.decisions import Edge, Matcher, Prediction
from thatch.plugin.errors import NotFoundError
from thatch.plugin.records import ScoredId
from thatch.plugin.storage import Storage

APP = "acme/app"
OTHER = "acme/other"
MODEL = "model-a"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def beta(confirm: float, disconfirm: float, prior: float) -> float:
    """The rule core uses: a Beta prior worth five observations."""
    return (confirm + 5 * prior) / (confirm + disconfirm + 5)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def matcher(
    storage: Storage, seed: int = 1, *, store: str = APP, model: str = MODEL, vector=None
) -> Matcher:
    description = f"situation {seed}"
    return storage.add_matcher(store, description, model, unit(seed) if vector is None else vector)


def prediction(
    storage: Storage,
    seed: int = 1,
    *,
    store: str = APP,
    model: str = MODEL,
    prior: float = 0.5,
    vector=None,
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
    storage: Storage,
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


def ids(hits: list[ScoredId]) -> list[int]:
    return [hit.id for hit in hits]


def recent(moment: datetime) -> bool:
    return moment.utcoffset() == timedelta(0) and abs(datetime.now(UTC) - moment) < timedelta(
        minutes=1
    )


# The two vector searches behave alike; tests of either run on both.
Adder = Callable[..., Matcher | Prediction]
KINDS = {
    "matcher": (matcher, lambda storage: storage.nearest_matchers),
    "prediction": (prediction, lambda storage: storage.nearest_predictions),
}


@pytest.fixture(params=sorted(KINDS))
def kind(request: pytest.FixtureRequest) -> tuple[Adder, Callable]:
    return KINDS[request.param]


# -- creating ---------------------------------------------------------------------


def test_a_fresh_store_has_no_decision_model(storage: Storage) -> None:
    assert storage.list_matchers() == []
    assert storage.list_predictions() == []
    assert storage.fires() == []
    assert storage.signals() == []
    assert storage.evidence_totals(APP) == (0.0, 0.0)
    assert not storage.has_matchers([APP])
    assert storage.nearest_matchers(unit(1), MODEL, [APP], 5) == []
    assert storage.nearest_predictions(unit(1), MODEL, [APP], 5) == []


def test_add_matcher_keeps_every_field(storage: Storage) -> None:
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


def test_a_new_prediction_starts_at_its_prior(storage: Storage) -> None:
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


def test_ids_are_distinct_and_get_leaves_out_missing_ones(storage: Storage) -> None:
    m1, m2 = matcher(storage, 1), matcher(storage, 2)
    p1, p2 = prediction(storage, 1), prediction(storage, 2)
    assert m1.id != m2.id
    assert p1.id != p2.id
    assert storage.get_matchers([m2.id, 9999]) == {m2.id: m2}
    assert storage.get_predictions([p1.id, 9999]) == {p1.id: p1}
    assert storage.get_matchers([]) == {}
    assert storage.get_predictions([]) == {}


def test_lists_filter_by_store_and_order_by_id(storage: Storage) -> None:
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


def test_has_matchers_looks_only_at_the_stores_given(storage: Storage) -> None:
    prediction(storage, 1)
    assert not storage.has_matchers([APP])
    matcher(storage, 1, store=OTHER)
    assert not storage.has_matchers([APP])
    assert storage.has_matchers([APP, OTHER])
    assert not storage.has_matchers([])
    matcher(storage, 2, model="model-b")
    assert storage.has_matchers([APP])


# -- evidence -----------------------------------------------------------------------


def test_counts_are_real_and_survive_reopening(open_storage) -> None:
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


def test_the_rule_gets_the_new_counts_and_the_prior(storage: Storage) -> None:
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


def test_evidence_writes_provenance_in_order(storage: Storage) -> None:
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


def test_a_create_signal_moves_nothing_but_is_recorded(storage: Storage) -> None:
    created = prediction(storage, 1, prior=0.7)
    updated = evidence(storage, created.id, "create", detail="new preference")
    assert updated.confidence == pytest.approx(0.7)
    assert updated.evidence == 0.0
    assert [e.signal for e in storage.provenance(created.id)] == ["create"]


def test_evidence_for_a_missing_prediction_raises_and_writes_nothing(storage: Storage) -> None:
    created = prediction(storage, 1)
    with pytest.raises(NotFoundError, match="9999"):
        evidence(storage, 9999, "confirm")
    assert storage.signals() == []
    assert storage.get_predictions([created.id])[created.id] == created


def test_a_failing_rule_writes_nothing(storage: Storage) -> None:
    created = prediction(storage, 1)

    def broken(confirm: float, disconfirm: float, prior: float) -> float:
        raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        evidence(storage, created.id, "confirm", rule=broken)
    assert storage.provenance(created.id) == []
    assert storage.get_predictions([created.id])[created.id] == created


def test_evidence_totals_are_per_store(storage: Storage) -> None:
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


def test_link_is_idempotent_and_keeps_the_first_weight(storage: Storage) -> None:
    m, p = matcher(storage), prediction(storage)
    assert storage.link(m.id, p.id, 0.8)
    assert not storage.link(m.id, p.id, 0.3)
    assert not storage.link(m.id, p.id)
    assert storage.edges_to(p.id) == [Edge(m.id, p.id, 0.8)]
    assert storage.edges_from([m.id]) == [Edge(m.id, p.id, 0.8)]


def test_the_default_weight_is_one(storage: Storage) -> None:
    m, p = matcher(storage), prediction(storage)
    assert storage.link(m.id, p.id)
    assert storage.edges_to(p.id) == [Edge(m.id, p.id, 1.0)]


def test_edges_from_and_to(storage: Storage) -> None:
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


def test_linking_a_missing_row_raises_and_writes_nothing(storage: Storage) -> None:
    m, p = matcher(storage), prediction(storage)
    with pytest.raises(NotFoundError, match="9999"):
        storage.link(9999, p.id)
    with pytest.raises(NotFoundError, match="9999"):
        storage.link(m.id, 9999)
    assert storage.edges_to(p.id) == []
    assert storage.edges_from([m.id]) == []


# -- vector search ------------------------------------------------------------------


def test_nearest_ranks_by_cosine(storage: Storage, kind) -> None:
    add, nearest = kind
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


def test_nearest_sees_only_the_stores_given(storage: Storage, kind) -> None:
    add, nearest = kind
    query = unit(78)
    here = add(storage, 1, vector=toward(query, 0.5, 1))
    there = add(storage, 2, store=OTHER, vector=toward(query, 0.9, 2))
    add(storage, 3, store="global", vector=toward(query, 0.99, 3))
    assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [here.id]
    assert ids(nearest(storage)(query, MODEL, [APP, OTHER], 10)) == [there.id, here.id]
    assert nearest(storage)(query, MODEL, ["nowhere"], 10) == []


def test_nearest_never_mixes_models(storage: Storage, kind) -> None:
    add, nearest = kind
    query = unit(79)
    a = add(storage, 1, vector=toward(query, 0.3, 1))
    b = add(storage, 2, model="model-b", vector=toward(query, 0.9, 2))
    add(storage, 3, model="model-c", vector=unit(3, 8))  # another dimension too
    assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [a.id]
    assert ids(nearest(storage)(query, "model-b", [APP], 10)) == [b.id]
    assert nearest(storage)(query, "model-z", [APP], 10) == []


def test_nearest_follows_adds_and_deletes(storage: Storage, kind) -> None:
    add, nearest = kind
    query = unit(80)
    first = add(storage, 1, vector=toward(query, 0.4, 1))
    assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [first.id]  # warm
    second = add(storage, 2, vector=toward(query, 0.8, 2))
    assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [second.id, first.id]
    delete = storage.delete_matcher if isinstance(first, Matcher) else storage.delete_prediction
    assert delete(second.id)
    assert ids(nearest(storage)(query, MODEL, [APP], 10)) == [first.id]


def test_evidence_links_and_fires_leave_the_search_alone(storage: Storage) -> None:
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


def test_a_second_handle_sees_the_first_ones_vectors(open_storage) -> None:
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


def test_deleting_a_prediction_takes_its_edges_provenance_and_fires(storage: Storage) -> None:
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


def test_deleting_a_matcher_takes_its_edges_only(storage: Storage) -> None:
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


def test_deleting_a_missing_row_changes_nothing(storage: Storage) -> None:
    m, p = matcher(storage), prediction(storage)
    storage.link(m.id, p.id)
    assert not storage.delete_matcher(9999)
    assert not storage.delete_prediction(9999)
    assert storage.list_matchers() == [m]
    assert storage.list_predictions() == [p]
    assert storage.edges_to(p.id) == [Edge(m.id, p.id, 1.0)]


# -- fires and signals ------------------------------------------------------------


def test_fires_are_logged_and_filtered_by_store(storage: Storage) -> None:
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


def test_a_fire_of_a_deleted_prediction_is_dropped(storage: Storage) -> None:
    kept, gone = prediction(storage, 1), prediction(storage, 2)
    storage.delete_prediction(gone.id)
    storage.record_fires("s", [(kept.id, 0.6, 0.5), (gone.id, 0.6, 0.5)], T0)
    assert [f.prediction_id for f in storage.fires()] == [kept.id]


def test_signals_are_filtered_by_store_oldest_first(storage: Storage) -> None:
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


def test_integrity_check_passes_after_decision_work(storage: Storage) -> None:
    rng = np.random.default_rng(5)
    matchers = [matcher(storage, i) for i in range(10)]
    predictions = [prediction(storage, i, store=(APP, OTHER)[i % 2]) for i in range(10)]
    for m in matchers:
        for p in rng.choice(predictions, 3, replace=False):
            storage.link(m.id, p.id, float(rng.random()))
    for i, p in enumerate(predictions):
        evidence(storage, p.id, ("confirm", "soft", "disconfirm")[i % 3], when=at(i))
    storage.record_fires("s", [(p.id, p.confidence, 0.5) for p in predictions], at(20))
    for m in matchers[::3]:
        storage.delete_matcher(m.id)
    for p in predictions[::4]:
        storage.delete_prediction(p.id)
    assert storage.integrity_problems() == []


@pytest.mark.parametrize("name", sorted(KINDS))
def test_new_embeddings_move_rows_to_another_model(storage: Storage, name: str) -> None:
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
