"""The records thatch passes between core, plugins and callers.

All are frozen attrs classes; :mod:`thatch.serialize` turns them into JSON.
Times are timezone-aware UTC datetimes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import attrs

GLOBAL_STORE = "global"

#: What a write did to one memory.
WriteAction = Literal["created", "updated", "unchanged"]


@attrs.frozen
class Memory:
    """One durable fact, unique by (store, label)."""

    id: int
    store: str
    label: str
    content: str
    #: Only recalled on this git branch; None means every branch.
    branch: str | None
    archived: bool
    #: Id of the embedding model whose vector this memory carries.
    model: str
    created_at: datetime
    updated_at: datetime
    recall_count: int = 0
    last_recalled_at: datetime | None = None


@attrs.frozen
class NewMemory:
    """What core asks a storage backend to write (already validated and redacted)."""

    store: str
    label: str
    content: str
    branch: str | None
    model: str
    #: Unit-length float32 vector of ``content`` from ``model``.
    embedding: object = attrs.field(eq=False, repr=False)
    #: False: a label that holds other content or another branch is refused
    #: with :class:`thatch.plugin.errors.LabelTakenError`. The backend decides
    #: inside the write's transaction, so two saves racing for one new label
    #: cannot both win.
    overwrite: bool = True
    #: The times to keep (an import's); None means the time of the write.
    #: An update keeps the memory's ``created_at`` whatever this says.
    created_at: datetime | None = None
    updated_at: datetime | None = None


@attrs.frozen
class WriteResult:
    """What a backend did with one :class:`NewMemory`."""

    memory: Memory
    action: WriteAction


@attrs.frozen
class Scope:
    """Which memories a search may see."""

    stores: tuple[str, ...]
    #: The current git branch: memories tied to another branch are hidden.
    #: None hides every branch-scoped memory.
    branch: str | None = None


@attrs.frozen
class ScoredId:
    """A backend's search hit: a memory id and the backend's score for it."""

    id: int
    score: float


@attrs.frozen
class StoreInfo:
    """A store and how many memories it holds."""

    name: str
    memories: int
    archived: int


@attrs.frozen
class Similar:
    """A memory whose meaning is close to another one."""

    store: str
    label: str
    cosine: float


@attrs.frozen
class RememberResult:
    """The answer to remember: what happened, secrets redacted, near duplicates."""

    memory: Memory
    action: WriteAction
    redactions: int
    similar: tuple[Similar, ...] = ()


@attrs.frozen
class RecallHit:
    """One recalled memory with its fused score and the parts it came from."""

    memory: Memory
    #: Fused rank score in [0, 1]: 1.0 is first by meaning and by words.
    score: float
    #: Cosine similarity between the query and the memory (same model).
    cosine: float
    #: Rank in the full-text results (1 = best), None when the words did not match.
    text_rank: int | None = None


@attrs.frozen
class DuplicatePair:
    """Two memories of one store whose cosine clears the dedup threshold."""

    first: Memory
    second: Memory
    cosine: float


@attrs.frozen
class HygieneReport:
    """Memories that may need attention."""

    #: Not updated nor recalled for ``stale_days`` days.
    stale: tuple[Memory, ...]
    #: Tied to a branch the repository no longer has.
    orphaned: tuple[Memory, ...]
    duplicates: tuple[DuplicatePair, ...]
    stale_days: int = 90


@attrs.frozen
class ImportResult:
    """Totals of an import."""

    created: int
    updated: int
    unchanged: int
    redactions: int
