"""A sentence-transformers model folder as the firing benches' embedder.

thatch installs neither sentence-transformers nor torch: the scripts that take
such a folder (firing_models.py, firing_trained.py) run with a Python that has
both beside thatch-core, and this class says so clearly when they are missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt


class SentenceTransformersEmbedder:
    """A sentence-transformers model folder behind the two calls the firing benches make."""

    def __init__(self, folder: Path, query_prefix: str = "", passage_prefix: str = "") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise SystemExit(
                f"--sentence-transformers {folder}: the sentence-transformers package is not "
                "installed in this Python; install it (with torch) beside thatch-core, or drop "
                "the option to measure the installed default model"
            ) from exc
        if not (folder / "modules.json").is_file():
            raise SystemExit(
                f"--sentence-transformers {folder}: no modules.json there, so it is not a "
                "sentence-transformers model folder; point it at the folder that holds "
                "modules.json and the weights"
            )
        self._model = SentenceTransformer(str(folder), device="cpu")
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix
        self.model_id = f"sentence-transformers:{folder.name}"

    def _encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = self._model.encode(list(texts), batch_size=64, normalize_embeddings=True)
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """One prompt, query-side."""
        return self._encode([self._query_prefix + text])[0]

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Matchers or statements, passage-side."""
        return self._encode([self._passage_prefix + text for text in texts])
