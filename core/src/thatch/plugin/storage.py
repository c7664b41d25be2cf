"""The memories' part of the storage contract.

A backend offers it through the ``thatch_memory_storage`` hook; the decision
model (:mod:`thatch.plugin.decision_storage`) and the prediction log
(:mod:`thatch.plugin.prediction_log`) are separate contracts with hooks of
their own, so one backend may keep all three or only some. Core validates
names, redacts secrets and computes embeddings before it calls a backend, so
a backend only stores, indexes and searches.
:class:`thatch.testing.contracts.MemoryStorageContract` is the suite every
backend must pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from thatch.plugin.records import Memory, NewMemory, Scope, ScoredId, StoreInfo, WriteResult

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]

#: A person's verdict on a near-duplicate pair: one fact twice, or two facts.
Verdict = Literal["same", "different"]
VERDICTS: tuple[Verdict, ...] = ("same", "different")


@runtime_checkable
class MemoryStorage(Protocol):
    """A place that keeps memories durably and searches them.

    Its methods are called from several threads at once (the daemon serves
    each connection on a thread, and hybrid recall runs :meth:`text_search`
    on a worker beside :meth:`vector_search`), so a backend guards what it
    shares.
    """

    #: Short backend name shown by ``thatch stores --json`` and ``doctor``.
    backend: str

    def close(self) -> None:
        """Release connections; the object is not used afterwards."""

    def integrity_problems(self) -> list[str]:
        """Check the stored data; an empty list means it is sound."""

    # -- writes ------------------------------------------------------------
    def write_memories(self, items: Sequence[NewMemory]) -> list[WriteResult]:
        """Create or update memories by (store, label), all in one transaction.

        Updating an archived memory is refused even when the text is the same
        (core skips identical texts before it calls the backend).

        An item whose content, branch and model equal the stored ones is
        ``unchanged`` and not written. An item without ``overwrite`` whose
        label holds other content or another branch raises
        :class:`thatch.plugin.errors.LabelTakenError`, decided on the row as it
        is inside the transaction (one written by another writer a moment ago
        included); updating an archived memory raises
        :class:`thatch.plugin.errors.ArchivedMemoryError`; either writes none
        of the items (:func:`thatch.plugin.sql_rows.changes_stored` is that
        decision). A created memory takes the item's ``created_at`` and
        ``updated_at``, an updated one its ``updated_at`` (each None: the time
        of the write). When a memory's content changes, reviewed duplicate
        pairs that involve it are forgotten (the review was of the old text).
        """

    def delete_memory(self, store: str, label: str) -> bool:
        """Delete a memory; False when there was none."""

    def set_archived(self, store: str, label: str, archived: bool) -> Memory | None:
        """Archive or unarchive; None when there is no such memory."""

    def record_recall(self, ids: Sequence[int], when: datetime) -> None:
        """Add one to each memory's recall count and set its last-recalled time."""

    def set_embeddings(self, model: str, vectors: Sequence[tuple[int, Vector]]) -> None:
        """Replace the vectors (and model id) of existing memories."""

    def mark_reviewed(self, first_id: int, second_id: int, verdict: Verdict = "different") -> None:
        """Record a duplicate pair's review, in either order; a new verdict replaces the old."""

    def restore_memories(self, items: Sequence[tuple[Memory, Vector]]) -> list[bool]:
        """Keep memories as another storage kept them, all in one transaction.

        For ``thatch migrate``: each memory is created with its content,
        branch, archived flag, model, created and updated times, recall count
        and last recall, and the vector given; its id is this storage's own.
        A (store, label) already stored stays as it is. Returns, for each
        item, whether it was created.
        """

    # -- reads -------------------------------------------------------------
    def get_memory(self, store: str, label: str) -> Memory | None:
        """One memory by store and label, archived or not."""

    def get_memories(self, ids: Iterable[int]) -> dict[int, Memory]:
        """Memories by id; ids that do not exist are left out."""

    def list_memories(
        self, stores: Sequence[str] | None = None, *, include_archived: bool = False
    ) -> list[Memory]:
        """Memories of the given stores (all stores when None), ordered by store, label."""

    def list_stores(self) -> list[StoreInfo]:
        """Every store that holds at least one memory, by name."""

    def vector_search(
        self, query: Vector, model: str, scope: Scope, limit: int, *, include_archived: bool = False
    ) -> list[ScoredId]:
        """Unarchived (or, asked so, all) memories in scope of ``model``, best cosine first.

        ``ScoredId.score`` is the raw cosine: recall reports it and applies
        thresholds to it."""

    def text_search(
        self, query: str, scope: Scope, limit: int, *, include_archived: bool = False
    ) -> list[ScoredId]:
        """Unarchived (or, asked so, all) memories in scope matching the words, best first.

        ``query`` is plain user text; the backend makes it safe for its
        full-text syntax. Scores are backend-specific in scale but must be
        positive and grow with relevance (for example bm25, negated): recall
        compares them within one search, as a share of the best score and by
        how far the best stands above the rest.
        """

    def embeddings(self, ids: Iterable[int], model: str) -> dict[int, Vector]:
        """Stored vectors of these memories that were made by ``model``."""

    def store_matrix(self, store: str, model: str) -> tuple[list[int], Matrix]:
        """Ids and vectors (one row each) of a store's unarchived memories of ``model``."""

    def reviewed_pairs(self, store: str) -> set[tuple[int, int]]:
        """Reviewed duplicate pairs of a store, each as (smaller id, larger id)."""

    def review_verdicts(self, store: str) -> dict[tuple[int, int], Verdict]:
        """The verdict of each reviewed pair of a store, keyed as :meth:`reviewed_pairs`."""

    def models_in_use(self) -> dict[str, int]:
        """How many memories carry each model id."""
