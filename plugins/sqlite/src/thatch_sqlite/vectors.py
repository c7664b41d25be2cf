"""An in-memory vector index over the unarchived memories.

Vectors are unit length, so cosine is a dot product and a search is one
matrix-vector product. Rows are grouped in one :class:`_Block` per
(model, store): a search over a scope of a few stores reads only those
stores' rows and never mixes models. A small store's block is a float32
matrix searched exactly. A block that reaches :data:`QUANTIZE_AT` rows keeps
int8 codes instead (:mod:`thatch.plugin.quantized`): a quarter of the memory
and of the bytes a search reads. Its scan only picks candidates, which are
scored again from the float32 vectors SQLite stores, so every cosine a
search returns is exact, and a memory deleted since the index last caught up
is never returned (its stored vector is gone). The index knows nothing of
SQL: :class:`~thatch_sqlite.cache.SearchCache` loads it one model at a time,
feeds it the memories that changed, and reads stored vectors for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from thatch.plugin import quantized

if TYPE_CHECKING:
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]

#: Branch code of a memory shown on every branch.
ANY_BRANCH = 0
#: Branch code of a row whose memory left the block; never matches a scope.
DEAD = -1
#: Rows from which a store's vectors are kept as int8 codes. Below it the
#: float32 product takes well under a millisecond, so small stores (the
#: quality benchmarks' among them) keep the exact search and exactly the
#: results they had.
QUANTIZE_AT = 4096
#: Candidates the int8 scan hands to exact scoring, per result asked for ...
OVERSAMPLE = 2
#: ... and at least this many, so that the write path's near-duplicate check
#: (4 results) has a margin against the codes' rounding too.
MIN_CANDIDATES = 16

#: ``(model, ids, dim)`` -> the ids among ``ids`` whose memory is still
#: unarchived under ``model`` with a vector of ``dim`` floats, and those
#: stored float32 vectors, one row each (a memory deleted since is missing).
StoredVectors = Callable[[str, Sequence[int], int], tuple["np.ndarray", "Matrix"]]
#: The same for one model and dimension.
Reader = Callable[[Sequence[int]], tuple["np.ndarray", "Matrix"]]


class _Block:
    """The vectors of one (model, store), appended in place and searched as one matrix.

    Removed rows stay in the matrix marked :data:`DEAD` (moving rows would
    cost a copy per delete) until half the block is dead. ``matrix`` holds
    float32 vectors, or is None once ``codes`` holds them as int8 at ``scale``.
    ``hidden`` counts the rows not shown on every branch (branch-only or
    dead): while it is 0, a search needs no visibility mask, nor its copies.
    """

    __slots__ = (
        "branches",
        "codes",
        "dead",
        "hidden",
        "ids",
        "matrix",
        "quantize_at",
        "rows",
        "scale",
        "size",
    )

    def __init__(
        self,
        ids: np.ndarray,
        matrix: np.ndarray | None,
        branches: np.ndarray,
        quantize_at: int | None = None,
        *,
        codes: np.ndarray | None = None,
        scale: float = 0.0,
    ) -> None:
        self.ids = ids
        self.matrix = matrix
        self.codes = codes
        self.scale = scale
        self.branches = branches
        self.size = len(ids)
        self.rows: dict[int, int] = {memory_id: row for row, memory_id in enumerate(ids.tolist())}
        self.dead = 0
        self.hidden = int(np.count_nonzero(branches[: self.size] != ANY_BRANCH))
        self.quantize_at = quantize_at
        self._maybe_quantize()

    @classmethod
    def empty(cls, dim: int, quantize_at: int | None = None) -> _Block:
        return cls(
            np.empty(0, np.int64),
            np.empty((0, dim), np.float32),
            np.empty(0, np.int32),
            quantize_at,
        )

    @property
    def dim(self) -> int:
        vectors = self.matrix if self.codes is None else self.codes
        assert vectors is not None
        return int(vectors.shape[1])

    @property
    def quantized(self) -> bool:
        return self.codes is not None

    def put(self, memory_id: int, vector: Vector, branch_code: int) -> None:
        row = self.rows.get(memory_id)
        if row is None:
            if self.size == len(self.ids):
                self._resize(max(16, 2 * self.size))
            row = self.size
            self.size += 1
            self.rows[memory_id] = row
            self.ids[row] = memory_id
        else:
            self.hidden -= int(self.branches[row] != ANY_BRANCH)
        self.hidden += int(branch_code != ANY_BRANCH)
        if self.codes is not None:
            self.codes[row] = quantized.encode(vector, self.scale)
        else:
            assert self.matrix is not None
            self.matrix[row] = vector
        self.branches[row] = branch_code
        self._maybe_quantize()

    def drop(self, memory_id: int) -> None:
        row = self.rows.pop(memory_id, None)
        if row is None:
            return
        self.hidden += int(self.branches[row] == ANY_BRANCH)
        self.branches[row] = DEAD
        self.dead += 1
        if self.dead > 64 and 2 * self.dead > self.size:
            self._compact()

    def scores(self, query: Vector, branch_code: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Ids and scores of the live rows visible on ``branch_code``.

        Exact cosines in a float32 block; in a quantized one, integer dot
        products of the codes, which only rank.
        """
        n = self.size
        if self.codes is not None:
            found = quantized.dots(quantized.encode(query, self.scale), self.codes[:n])
        else:
            assert self.matrix is not None
            # A view of the first n rows is still C-contiguous: one BLAS sgemv.
            found = self.matrix[:n] @ query
        if not self.hidden:
            return self.ids[:n], found
        branches = self.branches[:n]
        visible = branches == ANY_BRANCH
        if branch_code is not None:
            visible |= branches == branch_code
        return self.ids[:n][visible], found[visible]

    def best(
        self,
        query: Vector,
        branch_code: int | None,
        limit: int,
        stored: Reader,
    ) -> tuple[np.ndarray, np.ndarray]:
        """At least the ``limit`` best (ids, exact cosines) visible on ``branch_code``, unordered.

        A quantized block re-scores its candidates from ``stored`` vectors.
        """
        ids, found = self.scores(query, branch_code)
        want = limit if self.codes is None else max(OVERSAMPLE * limit, MIN_CANDIDATES)
        cut = len(found) - want
        if cut > 0:
            # O(n) selection of the best (no negated copy).
            best = np.argpartition(found, cut)[cut:]
            ids, found = ids[best], found[best]
        if self.codes is None:
            return ids, found
        kept, matrix = stored(ids.tolist())
        return kept, matrix @ query

    def live(self, stored: Reader) -> tuple[np.ndarray, np.ndarray]:
        """Ids and float32 vectors of the live rows, in id order (copies)."""
        keep = np.flatnonzero(self.branches[: self.size] != DEAD)
        order = keep[np.argsort(self.ids[keep], kind="stable")]
        if self.codes is None:
            assert self.matrix is not None
            return self.ids[order], self.matrix[order]
        ids, matrix = stored(self.ids[order].tolist())
        by_id = np.argsort(ids, kind="stable")
        return ids[by_id], matrix[by_id]

    def _maybe_quantize(self) -> None:
        if self.codes is not None or self.quantize_at is None or self.size < self.quantize_at:
            return
        assert self.matrix is not None
        vectors = self.matrix[: self.size]
        self.scale = quantized.scale_for(vectors)
        # Same capacity as the float32 matrix, so appends keep their amortised cost.
        self.codes = np.empty((len(self.matrix), self.dim), np.int8)
        quantized.encode_into(self.codes[: self.size], vectors, self.scale)
        self.matrix = None

    def _resize(self, capacity: int) -> None:
        # Amortised doubling: appends cost O(1) copies per row over time.
        n = self.size
        ids = np.empty(capacity, np.int64)
        branches = np.empty(capacity, np.int32)
        ids[:n], branches[:n] = self.ids[:n], self.branches[:n]
        if self.codes is not None:
            codes = np.empty((capacity, self.dim), np.int8)
            codes[:n] = self.codes[:n]
            self.codes = codes
        else:
            assert self.matrix is not None
            matrix = np.empty((capacity, self.dim), np.float32)
            matrix[:n] = self.matrix[:n]
            self.matrix = matrix
        self.ids, self.branches = ids, branches

    def _compact(self) -> None:
        keep = np.flatnonzero(self.branches[: self.size] != DEAD)
        self.ids = self.ids[keep]
        if self.codes is not None:
            self.codes = np.ascontiguousarray(self.codes[keep])
        else:
            assert self.matrix is not None
            self.matrix = np.ascontiguousarray(self.matrix[keep])
        self.branches = self.branches[keep]
        self.size = len(keep)
        self.rows = {memory_id: row for row, memory_id in enumerate(self.ids.tolist())}
        self.dead = 0
        self.hidden = int(np.count_nonzero(self.branches != ANY_BRANCH))


class _Coder:
    """One store's block built from streamed rows, coded a slab of float32 at a time.

    The first slab sets the scale (a later component beyond it is clipped,
    which only blurs the first pass: candidates are re-scored exactly).
    """

    def __init__(self, capacity: int, dim: int) -> None:
        self.ids = np.empty(capacity, np.int64)
        self.branches = np.empty(capacity, np.int32)
        self.codes = np.empty((capacity, dim), np.int8)
        self.slab = np.empty((min(capacity, quantized.SLAB), dim), np.float32)
        self.scale: float | None = None
        self.done = 0
        self.pending = 0

    def add(self, memory_id: int, blob: bytes, branch_code: int) -> None:
        row = self.done + self.pending
        if row == len(self.ids):
            return  # written after the rows were counted: the change log brings it
        self.ids[row] = memory_id
        self.branches[row] = branch_code
        self.slab[self.pending] = np.frombuffer(blob, dtype="<f4")
        self.pending += 1
        if self.pending == len(self.slab):
            self._flush()

    def block(self, quantize_at: int | None) -> _Block:
        self._flush()
        n = self.done
        scale = self.scale if self.scale is not None else quantized.scale_for(self.slab[:0])
        return _Block(
            self.ids[:n],
            None,
            self.branches[:n],
            quantize_at,
            codes=self.codes[:n],
            scale=scale,
        )

    def _flush(self) -> None:
        if not self.pending:
            return
        vectors = self.slab[: self.pending]
        if self.scale is None:
            self.scale = quantized.scale_for(vectors)
        self.codes[self.done : self.done + self.pending] = quantized.encode(vectors, self.scale)
        self.done += self.pending
        self.pending = 0


class VectorIndex:
    """Cosine search over the loaded models, split by store.

    ``stored`` reads the float32 vectors a quantized block re-scores from;
    without it every block stays float32. Not thread-safe on its own: the
    storage object holds its lock around every call (``stored`` included).
    """

    def __init__(self, stored: StoredVectors | None = None) -> None:
        self._stored = stored
        self._quantize_at = None if stored is None else QUANTIZE_AT
        self._models: dict[str, dict[str, _Block]] = {}
        # Where each indexed memory is, so a change can find its old row.
        self._where: dict[int, _Block] = {}
        # Branch names become small ints so the scope test is one vector compare.
        self._branch_codes: dict[str, int] = {}

    def clear(self) -> None:
        """Forget everything; models load again on their next search."""
        self._models.clear()
        self._where.clear()
        self._branch_codes.clear()

    def loaded(self, model: str | None = None) -> bool:
        """Whether ``model`` (or, without one, any model) is loaded."""
        return bool(self._models) if model is None else model in self._models

    def load(
        self,
        model: str,
        ids: Sequence[int],
        stores: Sequence[str],
        branches: Sequence[str | None],
        blobs: Sequence[bytes],
    ) -> None:
        """Index ``model``'s unarchived memories, given as parallel columns.

        ``blobs`` are little-endian float32 vectors. A vector whose length
        differs from the model's usual one is left out: no query of that
        model could be compared with it.
        """
        self.forget(model)
        blocks: dict[str, _Block] = {}
        self._models[model] = blocks
        if not ids:
            return
        count = len(ids)
        lengths = np.fromiter(map(len, blobs), np.int64, count)
        usual = int(np.bincount(lengths).argmax())
        store_of: dict[str, int] = {}
        store_codes = np.fromiter(
            (store_of.setdefault(store, len(store_of)) for store in stores), np.int32, count
        )
        branch_codes = np.fromiter(map(self._branch_code, branches), np.int32, count)
        # Rows sorted by store, so that each store's block is a slice of one
        # matrix; rows of an unusual length are left out here.
        order = np.argsort(store_codes, kind="stable")
        order = order[lengths[order] == usual]
        # One join into one mutable buffer: a single 4-bytes-per-dimension
        # allocation, no per-row numpy objects, and writable views for put().
        buffer = bytearray().join([blobs[row] for row in order.tolist()])
        matrix = np.frombuffer(buffer, dtype="<f4").reshape(len(order), usual // 4)
        if matrix.dtype != np.float32:  # a big-endian machine
            matrix = matrix.astype(np.float32)
        id_array = np.asarray(ids, np.int64)[order]
        store_codes, branch_codes = store_codes[order], branch_codes[order]
        bounds = np.searchsorted(store_codes, np.arange(len(store_of) + 1))
        for name, code in store_of.items():
            rows = slice(int(bounds[code]), int(bounds[code + 1]))
            if rows.start == rows.stop:
                continue
            blocks[name] = _Block(
                id_array[rows], matrix[rows], branch_codes[rows], self._quantize_at
            )
        self._adopt(blocks, list(blocks))

    def load_sorted(
        self,
        model: str,
        rows: Iterable[Sequence[Any]],
        count: int,
        dim: int,
        sizes: Mapping[str, int] | None = None,
    ) -> None:
        """Index ``model`` from ``(id, store, branch, blob)`` rows sorted by store.

        Streams into arrays allocated once for ``count`` rows of ``dim``
        floats, so loading 100k memories holds one copy of the vectors, not
        the rows and a copy (the daemon keeps what it once held: glibc rarely
        returns freed memory). Given ``sizes`` (rows per store), a store of
        at least :data:`QUANTIZE_AT` rows is coded as its rows arrive, so its
        float32 vectors are never all held at once. Rows whose blob is not
        ``dim`` floats are left out, as in :meth:`load`.
        """
        self.forget(model)
        blocks: dict[str, _Block] = {}
        self._models[model] = blocks
        at = self._quantize_at
        coded = {} if sizes is None or at is None else {s: n for s, n in sizes.items() if n >= at}
        coders: dict[str, _Coder] = {}
        count -= sum(coded.values())
        ids = np.empty(count, np.int64)
        matrix = np.empty((count, dim), np.float32)
        branch_codes = np.empty(count, np.int32)
        starts: list[tuple[str, int]] = []
        size = dim * 4
        n = 0
        for memory_id, store, branch, blob in rows:
            if len(blob) != size:
                continue
            if store in coded:
                coder = coders.get(store)
                if coder is None:
                    coder = coders[store] = _Coder(coded[store], dim)
                coder.add(memory_id, blob, self._branch_code(branch))
                continue
            if n == count:
                continue
            if not starts or starts[-1][0] != store:
                starts.append((store, n))
            ids[n] = memory_id
            matrix[n] = np.frombuffer(blob, dtype="<f4")
            branch_codes[n] = self._branch_code(branch)
            n += 1
        bounds = [start for _, start in starts] + [n]
        for (name, start), stop in zip(starts, bounds[1:], strict=True):
            blocks[name] = _Block(
                ids[start:stop], matrix[start:stop], branch_codes[start:stop], self._quantize_at
            )
        for name, coder in coders.items():
            blocks[name] = coder.block(self._quantize_at)
        self._adopt(blocks, [name for name, _ in starts])

    def _adopt(self, blocks: dict[str, _Block], shared: Iterable[str]) -> None:
        """Record where the freshly loaded rows are; let a quantized load free its floats.

        The ``shared`` blocks are views of one float32 matrix: once one of
        them has quantized itself, the others copy their rows out so that the
        matrix, mostly that store's floats, can be freed.
        """
        views = [blocks[name] for name in shared]
        if any(view.quantized for view in views):
            for view in views:
                if view.matrix is not None:
                    view.matrix = view.matrix.copy()
        for block in blocks.values():
            self._where.update(dict.fromkeys(block.rows, block))

    def forget(self, model: str) -> None:
        """Drop one model's vectors."""
        for block in self._models.pop(model, {}).values():
            for memory_id in block.rows:
                del self._where[memory_id]

    def put(
        self, memory_id: int, store: str, model: str, branch: str | None, vector: Vector
    ) -> None:
        """Index one unarchived memory's current vector (a no-op if ``model`` is not loaded)."""
        blocks = self._models.get(model)
        target = None if blocks is None else blocks.get(store)
        if target is None and blocks is not None:
            target = blocks[store] = _Block.empty(len(vector), self._quantize_at)
        current = self._where.get(memory_id)
        if current is not None and current is not target:
            self.remove(memory_id)
        if target is None:
            return
        if len(vector) != target.dim:
            # Same rule as load(): a vector of the wrong length is not searchable.
            self.remove(memory_id)
            return
        target.put(memory_id, vector, self._branch_code(branch))
        self._where[memory_id] = target

    def remove(self, memory_id: int) -> None:
        """Forget one memory (deleted, archived, or moved to a model not loaded)."""
        block = self._where.pop(memory_id, None)
        if block is not None:
            block.drop(memory_id)

    def search(
        self,
        query: Vector,
        model: str,
        stores: Sequence[str],
        branch: str | None,
        limit: int,
    ) -> list[tuple[int, float]]:
        """The ``limit`` best (id, cosine) pairs of ``model`` in scope, best first.

        Ties are broken by id so the order is stable.
        """
        blocks = self._models.get(model, {})
        code = self._branch_codes.get(branch) if branch is not None else None
        parts = []
        if limit <= 0:
            return []
        # A loop over the stores of the scope (a handful), never over rows;
        # each block hands over its own best few, so no store's scores are copied.
        for store in dict.fromkeys(stores):
            block = blocks.get(store)
            if block is not None and block.size:
                if len(query) != block.dim:
                    raise ValueError(
                        f"query vector has {len(query)} dimensions but model {model!r} "
                        f"stores {block.dim}; embed the query with the same model"
                    )
                parts.append(block.best(query, code, limit, self._reader(model, block.dim)))
        if not parts:
            return []
        ids = np.concatenate([part[0] for part in parts])
        cosines = np.concatenate([part[1] for part in parts]).astype(np.float32)
        order = np.lexsort((ids, -cosines))[:limit]
        return list(zip(ids[order].tolist(), cosines[order].tolist(), strict=True))

    def store_matrix(self, store: str, model: str) -> tuple[list[int], Matrix]:
        """Ids and vectors of a loaded model's store, by id."""
        blocks = self._models.get(model, {})
        block = blocks.get(store)
        if block is None:
            dims = {other.dim for other in blocks.values()}
            return [], np.zeros((0, dims.pop() if len(dims) == 1 else 0), np.float32)
        ids, matrix = block.live(self._reader(model, block.dim))
        return ids.tolist(), matrix

    def _reader(self, model: str, dim: int) -> Reader:
        stored = self._stored

        def read(ids: Sequence[int]) -> tuple[np.ndarray, Matrix]:
            # Only a quantized block reads, and blocks quantize only with a reader.
            assert stored is not None
            return stored(model, ids, dim)

        return read

    def _branch_code(self, branch: str | None) -> int:
        if branch is None:
            return ANY_BRANCH
        return self._branch_codes.setdefault(branch, len(self._branch_codes) + 1)
