"""An embedder that keeps its query vectors, for benchmarks that query one prompt many times."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import numpy.typing as npt
import thatch
from thatch.plugin.embedder import Embedder, Thresholds


class CachedEmbedder:
    """The real embedder, with query vectors kept: a timing then measures the engine alone."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self._queries: dict[str, npt.NDArray[np.float32]] = {}

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """The query vector, computed once per text."""
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Passages, embedded afresh (only loading the set asks for them)."""
        return self.inner.embed_passages(texts)

    def thresholds(self) -> Thresholds:
        """The wrapped embedder's thresholds."""
        return self.inner.thresholds()


@contextlib.contextmanager
def query_embedding() -> Iterator[Callable[[str], list[float]]]:
    """The installed model's query embedding as a callable, each text embedded once.

    In a throw-away home, so the embedder is configured as a new user's is.
    """
    with tempfile.TemporaryDirectory(prefix="thatch-bench-") as home, thatch.open(home=home) as th:
        cached = CachedEmbedder(th.embedder)
        yield lambda text: cached.embed_query(text).tolist()
