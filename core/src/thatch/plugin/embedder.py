"""The embedder contract, and the per-model thresholds that go with it.

Embedders are found through the ``thatch_embedder`` hook. Vectors carry the
``model_id`` of the embedder that made them; core never compares vectors of
two models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


#: Firing threshold for a model that has not been calibrated for predictions.
DEFAULT_PREDICTION_THRESHOLD = 0.45


@attrs.frozen
class Thresholds:
    """Cosine thresholds calibrated for one model (see docs/thresholds.md)."""

    #: A memory is relevant to a query (recall nudges, ``search --min-cosine``).
    recall: float
    #: Two memories say the same thing (write-time warning, duplicates report);
    #: also two matchers or two predictions of the decision model.
    dedup: float
    #: A decision-model matcher fits a prompt well enough to fire its predictions.
    prediction: float = DEFAULT_PREDICTION_THRESHOLD
    #: Where these numbers came from: a script name, or "default" when uncalibrated.
    source: str = "default"


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors."""

    # Read-only, so a constant, a property or a frozen field provides them.
    @property
    def model_id(self) -> str:
        """Stable id of the exact weights, stored beside every vector."""

    @property
    def dim(self) -> int:
        """Length of each vector."""

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """One search query as a vector of length ``dim``."""

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Texts to store, as a ``(len(texts), dim)`` matrix."""

    def thresholds(self) -> Thresholds:
        """The thresholds calibrated for this model."""
