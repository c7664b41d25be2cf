"""Helpers for testing thatch and its plugins without the real model.

:class:`WordHashEmbedder` gives texts that share words a high cosine, which
is enough to test storage and ranking logic in milliseconds. Tests of
behaviour users see use the real model instead.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from thatch.embedding import Thresholds
from thatch.hookspecs import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from thatch.plugins import Plugins

_WORD = re.compile(r"\w+")


class WordHashEmbedder:
    """A deterministic bag-of-words embedder (each word hashed to a dimension)."""

    def __init__(self, dim: int = 64, model_id: str = "test/word-hash") -> None:
        self.dim = dim
        self.model_id = model_id

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        vector = np.zeros(self.dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "little") % self.dim] += 1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return vector / norm

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._vector(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(text) for text in texts])

    def thresholds(self) -> Thresholds:
        return Thresholds(recall=0.3, dedup=0.9, source="test")


class EmbedderPlugin:
    """A plugin object whose ``thatch_embedder`` returns the embedder it was given."""

    def __init__(self, embedder: object) -> None:
        self.embedder = embedder

    @hookimpl
    def thatch_embedder(self, config: object) -> object:
        return self.embedder


def plugins_with(*plugins: object, embedder: object | None = None) -> Plugins:
    """:class:`~thatch.plugins.Plugins` holding exactly ``plugins`` — no entry points, no builtins.

    ``embedder`` (default: a new :class:`WordHashEmbedder`) is added as the
    embedder plugin. A plugin test registers its own module next to a storage
    plugin, e.g. ``plugins_with(thatch_sqlite.plugin, my_plugin)``.
    """
    import pluggy

    from thatch import hookspecs
    from thatch.plugins import Plugins

    fake = EmbedderPlugin(embedder if embedder is not None else WordHashEmbedder())
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    for index, plugin in enumerate(plugins):
        manager.register(plugin, name=getattr(plugin, "__name__", f"plugin-{index}"))
    manager.register(fake, name="fake-embedder")
    manager.check_pending()
    return Plugins(manager)
