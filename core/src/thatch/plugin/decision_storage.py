"""The decision model's part of the storage contract.

A backend offers it through the ``thatch_decision_storage`` hook, apart from
the memories (:class:`thatch.plugin.storage.MemoryStorage`): a backend may
keep both, with one object or two, or only one of them.
:class:`thatch.testing.contracts.DecisionStorageContract` is its suite. Core
embeds texts, computes confidence and decides what to create; the backend
stores, links, searches and keeps each change atomic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from thatch.plugin.decisions import Edge, Fire, Matcher, Prediction, Provenance, Signal
from thatch.plugin.records import ScoredId

if TYPE_CHECKING:
    from thatch.plugin.storage import Vector

#: The two embedded records of the decision model.
DecisionKind = Literal["matcher", "prediction"]

#: (confirm_count, disconfirm_count, prior) -> confidence, supplied by core.
ConfidenceRule = Callable[[float, float, float], float]


@runtime_checkable
class DecisionStorage(Protocol):
    """Matchers, predictions, their edges, provenance and the fire log."""

    def close(self) -> None:
        """Release connections; the object is not used afterwards.

        Core closes each distinct storage object once: an object that also
        keeps the memories is closed once for both.
        """

    def integrity_problems(self) -> list[str]:
        """Check the stored data; an empty list means it is sound."""

    def add_matcher(self, store: str, description: str, model: str, embedding: Vector) -> Matcher:
        """Create a matcher."""

    def add_prediction(
        self,
        store: str,
        statement: str,
        rationale: str,
        model: str,
        embedding: Vector,
        prior: float,
    ) -> Prediction:
        """Create a prediction with no evidence; its confidence is ``prior``."""

    def link(self, matcher_id: int, prediction_id: int, weight: float = 1.0) -> bool:
        """Add the edge; False (and the weight unchanged) when it already exists.

        Raises ``NotFoundError`` when either side does not exist."""

    def add_evidence(
        self,
        prediction_id: int,
        *,
        signal: Signal,
        confirm: float,
        disconfirm: float,
        detail: str,
        session: str | None,
        when: datetime,
        rule: ConfidenceRule,
    ) -> Prediction:
        """In one transaction: add to the counts, set the confidence that
        ``rule`` gives for the new counts and the prediction's prior, set
        ``updated_at`` to ``when``, and append a provenance entry. Raises
        ``NotFoundError`` for a missing id; a failing ``rule`` writes nothing."""

    def has_matchers(self, stores: Sequence[str]) -> bool:
        """Whether any matcher exists in these stores (cheap: checked before embedding)."""

    def nearest_matchers(
        self, query: Vector, model: str, stores: Sequence[str], limit: int
    ) -> list[ScoredId]:
        """Matchers of ``model`` in ``stores``, best cosine first (score = cosine)."""

    def nearest_predictions(
        self, query: Vector, model: str, stores: Sequence[str], limit: int
    ) -> list[ScoredId]:
        """Predictions of ``model`` in ``stores``, best cosine first (score = cosine)."""

    def edges_from(self, matcher_ids: Iterable[int]) -> list[Edge]:
        """Every edge leaving these matchers, by (matcher id, prediction id)."""

    def edges_to(self, prediction_id: int) -> list[Edge]:
        """Every edge reaching this prediction."""

    def get_matchers(self, ids: Iterable[int]) -> dict[int, Matcher]:
        """Matchers by id; missing ids are left out."""

    def get_predictions(self, ids: Iterable[int]) -> dict[int, Prediction]:
        """Predictions by id; missing ids are left out."""

    def list_predictions(self, stores: Sequence[str] | None = None) -> list[Prediction]:
        """Predictions of these stores (all when None), by id."""

    def list_matchers(self, stores: Sequence[str] | None = None) -> list[Matcher]:
        """Matchers of these stores (all when None), by id."""

    def set_decision_embeddings(
        self, kind: DecisionKind, model: str, vectors: Sequence[tuple[int, Vector]]
    ) -> None:
        """Replace the vectors (and model id) of existing matchers or predictions;
        unknown ids are skipped. Used by ``thatch reembed``."""

    def decision_embeddings(
        self, kind: DecisionKind, ids: Iterable[int], model: str
    ) -> dict[int, Vector]:
        """Stored vectors of these matchers or predictions that were made by ``model``."""

    def restore_matchers(self, items: Sequence[tuple[Matcher, Vector]]) -> list[Matcher]:
        """Keep matchers as another storage kept them (for ``thatch migrate``), one transaction.

        Each is created with its store, description, model, vector and both
        times; ids are this storage's own. Returns the matchers as created.
        """

    def restore_predictions(
        self, items: Sequence[tuple[Prediction, Vector, Sequence[Provenance]]]
    ) -> list[Prediction]:
        """Keep predictions as another storage kept them (for ``thatch migrate``), one transaction.

        Each is created with its texts, model, vector, counts, prior,
        confidence (as given, not recomputed) and both times, with its audit
        trail: the entries' signals, details, sessions and times, in the order
        given. Ids (of predictions and entries) are this storage's own.
        Returns the predictions as created.
        """

    def delete_prediction(self, prediction_id: int) -> bool:
        """Delete it with its edges, provenance and fires; False when missing."""

    def delete_matcher(self, matcher_id: int) -> bool:
        """Delete it with its edges; False when missing."""

    def provenance(self, prediction_id: int) -> list[Provenance]:
        """A prediction's audit trail, oldest first (ties by id)."""

    def evidence_totals(self, store: str) -> tuple[float, float]:
        """(Σ confirm_count, Σ disconfirm_count) over the store's predictions."""

    def record_fires(
        self, session: str | None, fires: Sequence[tuple[int, float, float]], when: datetime
    ) -> None:
        """Log showings: (prediction id, confidence shown, score) each, in one
        transaction. A prediction deleted since it was shown is skipped, so a
        query never fails on a concurrent delete."""

    def fires(self, stores: Sequence[str] | None = None) -> list[Fire]:
        """The fire log of predictions in these stores (all when None), oldest first."""

    def signals(self, stores: Sequence[str] | None = None) -> list[Provenance]:
        """Every provenance entry of predictions in these stores, oldest first."""
