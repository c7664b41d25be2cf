"""An in-memory exact vector index over the unarchived memories.

Vectors are unit length, so cosine is a dot product and an exact search is
one matrix-vector product. Rows are grouped in one :class:`_Block` per
(model, store), each a contiguous float32 matrix: a search over a scope of a
few stores multiplies only those stores' rows, with no copy, and never mixes
models. The index knows nothing of SQL: :class:`~thatch_sqlite.storage.SQLiteStorage`
loads it one model at a time and feeds it the memories that changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]

#: Branch code of a memory shown on every branch.
ANY_BRANCH = 0
#: Branch code of a row whose memory left the block; never matches a scope.
DEAD = -1


class _Block:
    """The vectors of one (model, store), appended in place and searched as one matrix.

    Removed rows stay in the matrix marked :data:`DEAD` (moving rows would
    cost a copy per delete) until half the block is dead.
    """

    __slots__ = ("branches", "dead", "ids", "matrix", "rows", "size")

    def __init__(self, ids: np.ndarray, matrix: np.ndarray, branches: np.ndarray) -> None:
        self.ids = ids
        self.matrix = matrix
        self.branches = branches
        self.size = len(ids)
        self.rows: dict[int, int] = {memory_id: row for row, memory_id in enumerate(ids.tolist())}
        self.dead = 0

    @classmethod
    def empty(cls, dim: int) -> _Block:
        return cls(np.empty(0, np.int64), np.empty((0, dim), np.float32), np.empty(0, np.int32))

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def put(self, memory_id: int, vector: Vector, branch_code: int) -> None:
        row = self.rows.get(memory_id)
        if row is None:
            if self.size == len(self.ids):
                self._resize(max(16, 2 * self.size))
            row = self.size
            self.size += 1
            self.rows[memory_id] = row
            self.ids[row] = memory_id
        self.matrix[row] = vector
        self.branches[row] = branch_code

    def drop(self, memory_id: int) -> None:
        row = self.rows.pop(memory_id, None)
        if row is None:
            return
        self.branches[row] = DEAD
        self.dead += 1
        if self.dead > 64 and 2 * self.dead > self.size:
            self._compact()

    def scores(self, query: Vector, branch_code: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Ids and cosines of the live rows visible on ``branch_code``."""
        n = self.size
        # A view of the first n rows is still C-contiguous: one BLAS sgemv.
        cosines = self.matrix[:n] @ query
        branches = self.branches[:n]
        visible = branches == ANY_BRANCH
        if branch_code is not None:
            visible |= branches == branch_code
        return self.ids[:n][visible], cosines[visible]

    def live(self) -> tuple[np.ndarray, np.ndarray]:
        """Ids and vectors of the live rows, in id order (copies)."""
        keep = np.flatnonzero(self.branches[: self.size] != DEAD)
        order = keep[np.argsort(self.ids[keep], kind="stable")]
        return self.ids[order], self.matrix[order]

    def _resize(self, capacity: int) -> None:
        # Amortised doubling: appends cost O(1) copies per row over time.
        ids = np.empty(capacity, np.int64)
        matrix = np.empty((capacity, self.dim), np.float32)
        branches = np.empty(capacity, np.int32)
        n = self.size
        ids[:n], matrix[:n], branches[:n] = self.ids[:n], self.matrix[:n], self.branches[:n]
        self.ids, self.matrix, self.branches = ids, matrix, branches

    def _compact(self) -> None:
        keep = np.flatnonzero(self.branches[: self.size] != DEAD)
        self.ids = self.ids[keep]
        self.matrix = np.ascontiguousarray(self.matrix[keep])
        self.branches = self.branches[keep]
        self.size = len(keep)
        self.rows = {memory_id: row for row, memory_id in enumerate(self.ids.tolist())}
        self.dead = 0


class VectorIndex:
    """Exact cosine search over the loaded models, split by store.

    Not thread-safe on its own: the storage object holds its lock around
    every call.
    """

    def __init__(self) -> None:
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
            block = _Block(id_array[rows], matrix[rows], branch_codes[rows])
            blocks[name] = block
            self._where.update(dict.fromkeys(block.rows, block))

    def load_sorted(self, model: str, rows: Iterable[Sequence[Any]], count: int, dim: int) -> None:
        """Index ``model`` from ``(id, store, branch, blob)`` rows sorted by store.

        Streams into arrays allocated once for ``count`` rows of ``dim``
        floats, so loading 100k memories holds one copy of the vectors, not
        the rows and a copy (the daemon keeps what it once held: glibc rarely
        returns freed memory). Rows whose blob is not ``dim`` floats are
        left out, as in :meth:`load`.
        """
        self.forget(model)
        blocks: dict[str, _Block] = {}
        self._models[model] = blocks
        ids = np.empty(count, np.int64)
        matrix = np.empty((count, dim), np.float32)
        branch_codes = np.empty(count, np.int32)
        starts: list[tuple[str, int]] = []
        size = dim * 4
        n = 0
        for memory_id, store, branch, blob in rows:
            if n == count or len(blob) != size:
                continue
            if not starts or starts[-1][0] != store:
                starts.append((store, n))
            ids[n] = memory_id
            matrix[n] = np.frombuffer(blob, dtype="<f4")
            branch_codes[n] = self._branch_code(branch)
            n += 1
        bounds = [start for _, start in starts] + [n]
        for (name, start), stop in zip(starts, bounds[1:], strict=True):
            block = _Block(ids[start:stop], matrix[start:stop], branch_codes[start:stop])
            blocks[name] = block
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
            target = blocks[store] = _Block.empty(len(vector))
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
        # A loop over the stores of the scope (a handful), never over rows.
        for store in dict.fromkeys(stores):
            block = blocks.get(store)
            if block is not None and block.size:
                if len(query) != block.dim:
                    raise ValueError(
                        f"query vector has {len(query)} dimensions but model {model!r} "
                        f"stores {block.dim}; embed the query with the same model"
                    )
                parts.append(block.scores(query, code))
        if limit <= 0 or not parts:
            return []
        ids = np.concatenate([part[0] for part in parts])
        cosines = np.concatenate([part[1] for part in parts])
        cut = len(cosines) - limit
        if cut > 0:
            # O(n) selection of the best `limit` (no negated copy), then a
            # sort of just those.
            best = np.argpartition(cosines, cut)[cut:]
            ids, cosines = ids[best], cosines[best]
        order = np.lexsort((ids, -cosines))
        return list(zip(ids[order].tolist(), cosines[order].tolist(), strict=True))

    def store_matrix(self, store: str, model: str) -> tuple[list[int], Matrix]:
        """Ids and vectors of a loaded model's store, by id."""
        blocks = self._models.get(model, {})
        block = blocks.get(store)
        if block is None:
            dims = {other.dim for other in blocks.values()}
            return [], np.zeros((0, dims.pop() if len(dims) == 1 else 0), np.float32)
        ids, matrix = block.live()
        return ids.tolist(), matrix

    def _branch_code(self, branch: str | None) -> int:
        if branch is None:
            return ANY_BRANCH
        return self._branch_codes.setdefault(branch, len(self._branch_codes) + 1)
