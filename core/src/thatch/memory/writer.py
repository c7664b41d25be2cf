"""Writing memories: validation, redaction, embedding, near-duplicate warnings.

Every path that saves a memory (the CLI, the API, import, later the MCP
server) goes through :class:`MemoryWriter`, so no memory reaches storage
unvalidated, unredacted or without its model id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import attrs

from thatch.memory.names import validate_branch, validate_label, validate_store
from thatch.plugin import sql_rows
from thatch.plugin.embedder import Embedder
from thatch.plugin.errors import InvalidInputError, LabelTakenError
from thatch.plugin.records import (
    Memory,
    NewMemory,
    RememberResult,
    Scope,
    Similar,
    WriteResult,
)
from thatch.plugin.storage import MemoryStorage
from thatch.redact import redact

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MAX_CONTENT = 20_000
#: How many near duplicates a write reports at most.
SIMILAR_LIMIT = 3


@attrs.frozen
class MemoryInput:
    """A memory as a caller gives it, before validation."""

    label: str
    content: str
    store: str
    branch: str | None = None
    #: The times to keep (an import's); None: the time of the write.
    created_at: datetime | None = None
    updated_at: datetime | None = None


@attrs.frozen
class Prepared:
    """A memory input validated, its content redacted: what would be stored."""

    item: MemoryInput
    content: str
    redactions: int


class MemoryWriter:
    """Saves memories through a storage backend with one embedder's vectors."""

    def __init__(
        self, storage: MemoryStorage, embedder: Embedder, dedup_threshold: Callable[[], float]
    ) -> None:
        self._storage = storage
        self._embedder = embedder
        self._dedup_threshold = dedup_threshold

    def remember(self, item: MemoryInput, *, overwrite: bool = False) -> RememberResult:
        """Create one memory (or replace it when ``overwrite``); warns about near duplicates.

        Saving the stored text again is ``unchanged``, never refused: a retried
        save must not fail, and it clobbers nothing.
        """
        return self.remember_many([item], overwrite=overwrite)[0]

    def remember_many(
        self,
        items: Iterable[MemoryInput],
        *,
        overwrite: bool = False,
        on_saved: Callable[[RememberResult], None] | None = None,
        batch_size: int = 64,
    ) -> list[RememberResult]:
        """Save items in batches, each batch one transaction.

        Without ``overwrite``, a label that already holds other content is
        refused with :class:`InvalidInputError` before its batch is written.
        ``on_saved`` is called for each memory once its batch is committed,
        so a caller that reports progress never reports an unsaved memory.
        """
        results: list[RememberResult] = []
        batch: list[Prepared] = []
        for item in items:
            batch.append(prepare(item))
            if len(batch) >= batch_size:
                results.extend(self._save(batch, overwrite, on_saved))
                batch = []
        if batch:
            results.extend(self._save(batch, overwrite, on_saved))
        return results

    def _save(
        self,
        batch: Sequence[Prepared],
        overwrite: bool,
        on_saved: Callable[[RememberResult], None] | None,
    ) -> list[RememberResult]:
        model = self._embedder.model_id
        # One lookup per item serves both the unchanged test and the refusal.
        current = {id(p): self._storage.get_memory(p.item.store, p.item.label) for p in batch}
        # Unchanged memories need no embedding: importing a file twice is cheap.
        changed = [p for p in batch if not _is_unchanged(p, current[id(p)], model)]
        if not overwrite:
            _refuse_taken_labels(changed, current)
        vector_of = self._embed(changed)
        similar = {id(p): self._similar(p, vector_of[id(p)]) for p in changed}
        new = [
            NewMemory(
                store=p.item.store,
                label=p.item.label,
                content=p.content,
                branch=p.item.branch,
                model=model,
                embedding=vector_of[id(p)],
                # Checked again by the backend inside its transaction: another
                # writer may take a new label between the lookup above and it.
                overwrite=overwrite,
                created_at=p.item.created_at,
                updated_at=p.item.updated_at,
            )
            for p in changed
        ]
        written: dict[tuple[str, str], WriteResult] = {
            (r.memory.store, r.memory.label): r for r in self._storage.write_memories(new)
        }
        results = []
        for prepared in batch:
            key = (prepared.item.store, prepared.item.label)
            if key in written:
                outcome = written[key]
                memory, action = outcome.memory, outcome.action
            else:
                unchanged = current[id(prepared)]
                assert unchanged is not None, "an unchanged memory exists by definition"
                memory, action = unchanged, "unchanged"
            result = RememberResult(
                memory=memory,
                action=action,
                redactions=prepared.redactions,
                similar=similar.get(id(prepared), ()),
            )
            results.append(result)
            if on_saved is not None:
                on_saved(result)
        return results

    def _embed(self, batch: Sequence[Prepared]) -> dict[int, npt.NDArray[np.float32]]:
        """Each item's vector, by the item's id (no embedder call for an empty batch)."""
        if not batch:
            return {}
        vectors = self._embedder.embed_passages([p.content for p in batch])
        return {id(p): vectors[i] for i, p in enumerate(batch)}

    def _similar(self, prepared: Prepared, vector: npt.NDArray[np.float32]) -> tuple[Similar, ...]:
        store, label = prepared.item.store, prepared.item.label
        threshold = self._dedup_threshold()
        hits = self._storage.vector_search(
            vector,
            self._embedder.model_id,
            Scope(stores=(store,), branch=prepared.item.branch),
            SIMILAR_LIMIT + 1,
        )
        close = [hit for hit in hits if hit.score >= threshold]
        memories = self._storage.get_memories(hit.id for hit in close)
        return tuple(
            Similar(store=store, label=memories[hit.id].label, cosine=round(hit.score, 4))
            for hit in close
            if hit.id in memories and memories[hit.id].label != label
        )[:SIMILAR_LIMIT]


def _refuse_taken_labels(changed: Sequence[Prepared], current: Mapping[int, Memory | None]) -> None:
    """Raise if a changed item's label holds other content (``current`` by item id)."""
    for prepared in changed:
        stored = current[id(prepared)]
        if stored is not None and replaces(stored, prepared):
            raise LabelTakenError(stored)


def replaces(stored: Memory, prepared: Prepared) -> bool:
    """Whether saving ``prepared`` over ``stored`` replaces what it says (needs overwrite)."""
    return sql_rows.replaces(stored, prepared.content, prepared.item.branch)


def _is_unchanged(prepared: Prepared, current: Memory | None, model: str) -> bool:
    return (
        current is not None
        and current.content == prepared.content
        and current.branch == prepared.item.branch
        and current.model == model
    )


def prepare(item: MemoryInput) -> Prepared:
    """Validate names and content, redact secrets; raises before anything is written."""
    validate_store(item.store)
    validate_label(item.label)
    validate_branch(item.branch)
    if not item.content.strip():
        raise InvalidInputError(
            f"content of memory {item.label!r} is empty; give the fact to remember"
        )
    if len(item.content) > MAX_CONTENT:
        raise InvalidInputError(
            f"content of memory {item.label!r} has {len(item.content)} characters, over "
            f"{MAX_CONTENT}; split it into several memories"
        )
    redaction = redact(item.content)
    return Prepared(item=item, content=redaction.text, redactions=redaction.count)
