"""Vector search on an in-memory copy of each model's vectors: memories, matchers, predictions.

Without pgvector the server cannot rank by cosine, so each handle keeps a
float32 matrix per model and searches it exactly, as the SQLite backend does.

Other machines write too, so before a search the copy is checked against the
server, cheapest first:

1. the table's generation in ``vector_changes`` (one primary-key read),
   which every statement that may change a vector moves (a trigger); while
   it stands still, nothing changed;
2. when it moved: the row count and the sum of ``rev`` over this model's
   searchable rows (unarchived memories; every matcher and prediction), one
   aggregate over an index. Every change a copy cares about (insert, content
   or vector change, archive, unarchive, delete, a move to another model)
   takes a new ``rev`` or removes a row, so the pair changes; a write to
   another model leaves it alone.

When it changed, the copy catches up by difference: it reads every row's
(id, rev), a few bytes each, and fetches the vectors of only the rows that
are new or carry another rev; rows gone are dropped. Comparing revs row by
row, not "revs above the last one seen", also catches a writer that took
its rev early and committed late. If most rows changed, the model is
reloaded whole. Rows are read in binary (``bytea`` as raw bytes, half the
bytes of the text form and no hex decoding) and turned into arrays by a few
numpy calls, never a Python object per value.

A search is one product over the whole matrix: rows out of scope (another
store, another branch) are set to -inf from per-row integer codes rather
than copied out, and the best are chosen by ``argpartition``. A model of
:data:`QUANTIZE_AT` rows or more is scanned as int8 codes
(:mod:`thatch.plugin.quantized`, as the SQLite index does), a quarter of the
bytes to read; the scan's best candidates are scored again from the float32
rows, so every cosine returned is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, LiteralString

import attrs
import numpy as np
from thatch.plugin import quantized

if TYPE_CHECKING:
    from thatch.plugin import Matrix, Vector

    from thatch_postgres.connect import Connection

#: Vectors travel as little-endian float32 bytes, whatever the machine.
FLOAT32 = np.dtype("<f4")

#: The tables whose vectors are searched.
Table = Literal["memories", "matchers", "predictions"]


@attrs.frozen
class _Queries:
    """What the cache asks of one table; rows come as (id, store, branch, rev, embedding)."""

    generation: LiteralString
    freshness: LiteralString
    revs: LiteralString
    all_rows: LiteralString
    some_rows: LiteralString


# Matchers and predictions have no branch.
_QUERIES: dict[Table, _Queries] = {
    "memories": _Queries(
        "SELECT generation FROM vector_changes WHERE source = 'memories'",
        "SELECT count(*), coalesce(sum(rev), 0) FROM memories WHERE model = %s AND NOT archived",
        "SELECT id, rev FROM memories WHERE model = %s AND NOT archived",
        "SELECT id, store, branch, rev, embedding FROM memories WHERE model = %s AND NOT archived",
        "SELECT id, store, branch, rev, embedding FROM memories"
        " WHERE model = %s AND NOT archived AND id = ANY(%s)",
    ),
    "matchers": _Queries(
        "SELECT generation FROM vector_changes WHERE source = 'matchers'",
        "SELECT count(*), coalesce(sum(rev), 0) FROM prediction_matchers WHERE model = %s",
        "SELECT id, rev FROM prediction_matchers WHERE model = %s",
        "SELECT id, store, NULL, rev, embedding FROM prediction_matchers WHERE model = %s",
        "SELECT id, store, NULL, rev, embedding FROM prediction_matchers"
        " WHERE model = %s AND id = ANY(%s)",
    ),
    "predictions": _Queries(
        "SELECT generation FROM vector_changes WHERE source = 'predictions'",
        "SELECT count(*), coalesce(sum(rev), 0) FROM predictions WHERE model = %s",
        "SELECT id, rev FROM predictions WHERE model = %s",
        "SELECT id, store, NULL, rev, embedding FROM predictions WHERE model = %s",
        "SELECT id, store, NULL, rev, embedding FROM predictions WHERE model = %s AND id = ANY(%s)",
    ),
}

#: A catch-up that would fetch more than this share of the rows reloads them all.
RELOAD_SHARE = 0.5

#: Rows from which a model's vectors are also kept as int8 codes and scanned
#: as such: below it the float32 product takes well under a millisecond.
QUANTIZE_AT = 4096
#: Candidates the int8 scan hands to exact scoring, per result asked for ...
OVERSAMPLE = 2
#: ... and at least this many, for a margin against the codes' rounding.
MIN_CANDIDATES = 16

#: Branch code of a row shown on every branch (its memory has no branch).
ANY_BRANCH = 0

#: One row as the server sends it: id, store, branch, rev, vector bytes.
Row = tuple[int, str, "str | None", int, bytes]


def to_bytes(vector: object) -> bytes:
    """A vector as stored: contiguous little-endian float32."""
    return np.ascontiguousarray(vector, dtype=FLOAT32).tobytes()


def from_bytes(data: bytes) -> Vector:
    """A stored vector back as native float32."""
    return np.frombuffer(data, dtype=FLOAT32).astype(np.float32)


@attrs.frozen
class ModelVectors:
    """One model's unarchived vectors, a row each, with what a search filters on.

    Never changed once made: a search running on another thread keeps the
    copy it started with while a catch-up makes the next one.
    """

    ids: np.ndarray
    revs: np.ndarray
    stores: tuple[str, ...]
    #: Index into :attr:`stores` of each row.
    store_of: np.ndarray
    #: Branch names; the first is None (:data:`ANY_BRANCH`).
    branches: tuple[str | None, ...]
    #: Index into :attr:`branches` of each row.
    branch_of: np.ndarray
    matrix: Matrix
    #: The int8 codes of :attr:`matrix` at :attr:`scale` (None below QUANTIZE_AT rows).
    codes: np.ndarray | None = None
    scale: float = 0.0

    @property
    def token(self) -> tuple[int, int]:
        """What the freshness query gives while the server holds exactly these rows."""
        return len(self.ids), int(self.revs.sum())

    @classmethod
    def empty(cls) -> ModelVectors:
        return cls._of(
            np.empty(0, np.int64),
            np.empty(0, np.int64),
            (),
            np.empty(0, np.int32),
            (None,),
            np.empty(0, np.int32),
            np.empty((0, 0), np.float32),
        )

    @classmethod
    def build(cls, rows: Sequence[Row]) -> ModelVectors:
        """The copy of these rows; a vector of another length than most is left out."""
        if not rows:
            return cls.empty()
        sizes = np.fromiter((len(row[4]) for row in rows), np.int64, len(rows))
        lengths, counts = np.unique(sizes, return_counts=True)
        usable = (lengths > 0) & (lengths % FLOAT32.itemsize == 0)
        if not usable.any():
            return cls.empty()
        size = int(lengths[usable][np.argmax(counts[usable])])
        # A corrupt row is skipped rather than breaking every search of the model.
        if (sizes != size).any():
            rows = [row for row, length in zip(rows, sizes.tolist(), strict=True) if length == size]
        n = len(rows)
        store_codes: dict[str, int] = {}
        branch_codes: dict[str | None, int] = {None: ANY_BRANCH}
        matrix = np.frombuffer(b"".join(row[4] for row in rows), dtype=FLOAT32)
        return cls._of(
            ids=np.fromiter((row[0] for row in rows), np.int64, n),
            revs=np.fromiter((row[3] for row in rows), np.int64, n),
            store_of=np.fromiter(
                (store_codes.setdefault(row[1], len(store_codes)) for row in rows), np.int32, n
            ),
            stores=tuple(store_codes),
            branch_of=np.fromiter(
                (branch_codes.setdefault(row[2], len(branch_codes)) for row in rows), np.int32, n
            ),
            branches=tuple(branch_codes),
            # No copy on a little-endian machine: the bytes are already float32.
            matrix=matrix.astype(np.float32, copy=False).reshape(n, size // FLOAT32.itemsize),
        )

    @classmethod
    def _of(
        cls,
        ids: np.ndarray,
        revs: np.ndarray,
        stores: tuple[str, ...],
        store_of: np.ndarray,
        branches: tuple[str | None, ...],
        branch_of: np.ndarray,
        matrix: Matrix,
        codes: np.ndarray | None = None,
        scale: float = 0.0,
    ) -> ModelVectors:
        """The copy of these columns, coded as int8 once it is large enough."""
        if codes is None and len(ids) >= QUANTIZE_AT:
            scale = quantized.scale_for(matrix)
            codes = np.empty(matrix.shape, np.int8)
            quantized.encode_into(codes, matrix, scale)
        return cls(ids, revs, stores, store_of, branches, branch_of, matrix, codes, scale)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def merged(self, keep: np.ndarray, fresh: ModelVectors) -> ModelVectors:
        """The rows at positions ``keep`` and then every row of ``fresh`` (of the same dim).

        The int8 codes of the kept rows are kept, and the new rows coded at
        the same scale (clipped if they reach further): scores of one scan
        must be comparable. A full reload sets the scale afresh.
        """
        stores = {name: code for code, name in enumerate(self.stores)}
        for name in fresh.stores:
            stores.setdefault(name, len(stores))
        branches = {name: code for code, name in enumerate(self.branches)}
        for branch in fresh.branches:
            branches.setdefault(branch, len(branches))
        store_map = np.array([stores[name] for name in fresh.stores], np.int32)
        branch_map = np.array([branches[name] for name in fresh.branches], np.int32)
        # An empty copy's matrix has no columns.
        added = fresh.matrix.reshape(len(fresh.ids), self.dim)
        codes = None
        if self.codes is not None:
            codes = _joined(self.codes, keep, quantized.encode(added, self.scale))
        return self._of(
            _joined(self.ids, keep, fresh.ids),
            _joined(self.revs, keep, fresh.revs),
            tuple(stores),
            _joined(self.store_of, keep, store_map[fresh.store_of]),
            tuple(branches),
            _joined(self.branch_of, keep, branch_map[fresh.branch_of]),
            _joined(self.matrix, keep, added),
            codes,
            self.scale,
        )

    def visible(self, stores: Sequence[str], branch: str | None) -> np.ndarray | None:
        """Which rows belong to ``stores`` and show on ``branch``; None when all of them do."""
        wanted = set(stores)
        codes = [code for code, name in enumerate(self.stores) if name in wanted]
        mask = None
        if len(codes) < len(self.stores):
            mask = np.isin(self.store_of, codes)
        if len(self.branches) > 1:
            on_branch = self.branch_of == ANY_BRANCH
            if branch is not None and branch in self.branches:
                on_branch |= self.branch_of == self.branches.index(branch)
            mask = on_branch if mask is None else mask & on_branch
        return mask

    def search(
        self, query: Vector, stores: Sequence[str], branch: str | None, limit: int
    ) -> list[tuple[int, float]]:
        """The best ``limit`` rows of ``stores`` visible on ``branch``, as (id, cosine)."""
        if not len(self.ids) or limit <= 0 or query.shape[0] != self.dim:
            return []
        visible = self.visible(stores, branch)
        if self.codes is None:
            scores = self.matrix @ query
            rows = _best_rows(scores, visible, limit)
            scores = scores[rows]
        else:
            coarse = quantized.dots(quantized.encode(query, self.scale), self.codes)
            rows = _best_rows(coarse, visible, max(OVERSAMPLE * limit, MIN_CANDIDATES))
            scores = self.matrix[rows] @ query
        # Best first; equal scores by id, so that the order is stable.
        order = np.lexsort((self.ids[rows], -scores))[:limit]
        return [(int(self.ids[rows[i]]), float(scores[i])) for i in order]

    def store_matrix(self, store: str) -> tuple[list[int], Matrix]:
        """Ids and rows of one store, in id order."""
        if store not in self.stores:
            return [], np.zeros((0, self.dim), dtype=np.float32)
        rows = np.flatnonzero(self.store_of == self.stores.index(store))
        rows = rows[np.argsort(self.ids[rows], kind="stable")]
        return [int(i) for i in self.ids[rows]], self.matrix[rows]


def _joined(column: np.ndarray, keep: np.ndarray, added: np.ndarray) -> np.ndarray:
    """``column[keep]`` followed by ``added``, written once into a new array.

    One copy of the kept rows, not two (a gather, then a concatenation):
    at 100k vectors each copy is 150 MB. Kept rows that are all the rows in
    order (only new rows came) are copied whole, without a gather.
    """
    out = np.empty((len(keep) + len(added), *column.shape[1:]), column.dtype)
    if len(keep) == len(column) and (len(keep) < 2 or bool((np.diff(keep) == 1).all())):
        out[: len(keep)] = column
    else:
        np.take(column, keep, axis=0, out=out[: len(keep)])
    out[len(keep) :] = added
    return out


def _best_rows(scores: np.ndarray, visible: np.ndarray | None, want: int) -> np.ndarray:
    """Positions of the ``want`` best ``scores`` among the ``visible`` rows, unordered.

    ``scores`` is overwritten (-inf where not visible). Rows tied with the
    last one chosen come too, so that the caller's order by id decides ties
    as a full sort would.
    """
    in_scope = len(scores)
    if visible is not None:
        scores[~visible] = -np.inf
        in_scope = int(np.count_nonzero(visible))
    want = min(want, in_scope)
    if want <= 0:
        return np.empty(0, np.int64)
    cut = len(scores) - want
    if cut == 0:
        return np.flatnonzero(scores > -np.inf) if visible is not None else np.arange(len(scores))
    # O(n) selection of the best, without a negated copy.
    threshold = scores[np.argpartition(scores, cut)[cut:]].min()
    return np.flatnonzero(scores >= threshold)


class VectorCache:
    """Each model's :class:`ModelVectors` of one table, kept current with the server."""

    def __init__(self, table: Table) -> None:
        self.table: Table = table
        self._queries = _QUERIES[table]
        # Per model: its copy, the table's generation it is known current at,
        # and the count of heard changes (thatch_postgres.listen) it was
        # checked at, None when it was checked while not listening.
        self._models: dict[str, tuple[int, ModelVectors, int | None]] = {}

    def clear(self) -> None:
        self._models.clear()

    def current(self, model: str, epoch: int | None) -> ModelVectors | None:
        """``model``'s copy if no change was heard since it was checked (None: ask the server)."""
        seen = self._models.get(model)
        if epoch is None or seen is None or seen[2] != epoch:
            return None
        return seen[1]

    def vectors(self, conn: Connection, model: str, epoch: int | None = None) -> ModelVectors:
        """``model``'s vectors as the server has them now, noted as checked at ``epoch``.

        ``epoch`` is read before this call: a change heard meanwhile moves
        the count past it, so the next search checks again.
        """
        # Read before the rows: rows read later are at least this current.
        row = conn.execute(self._queries.generation).fetchone()
        generation = int(row[0]) if row else -1
        seen = self._models.get(model)
        if seen is None:
            current = self._load(conn, model)
        elif seen[0] == generation:
            current = seen[1]
        else:
            cached = seen[1]
            row = conn.execute(self._queries.freshness, (model,)).fetchone()
            unchanged = row is not None and (int(row[0]), int(row[1])) == cached.token
            current = cached if unchanged else self._catch_up(conn, model, cached)
        self._models[model] = (generation, current, epoch)
        return current

    def _load(self, conn: Connection, model: str) -> ModelVectors:
        return ModelVectors.build(_binary_rows(conn, self._queries.all_rows, (model,)))

    def _catch_up(self, conn: Connection, model: str, cached: ModelVectors) -> ModelVectors:
        """``cached`` with the rows that changed on the server replaced, the gone ones dropped."""
        on_server = _binary_rows(conn, self._queries.revs, (model,))
        server_ids = np.fromiter((row[0] for row in on_server), np.int64, len(on_server))
        server_revs = np.fromiter((row[1] for row in on_server), np.int64, len(on_server))
        # Each server row's position in the copy, matched by id (ids are unique).
        by_id = np.argsort(cached.ids, kind="stable")
        sorted_ids = cached.ids[by_id]
        at = np.minimum(np.searchsorted(sorted_ids, server_ids), max(len(sorted_ids) - 1, 0))
        held = by_id[at] if len(sorted_ids) else at
        same = np.zeros(len(server_ids), bool)
        if len(sorted_ids):
            same = (cached.ids[held] == server_ids) & (cached.revs[held] == server_revs)
        changed = server_ids[~same]
        if len(changed) > RELOAD_SHARE * max(len(server_ids), 1):
            return self._load(conn, model)
        fetched = ModelVectors.empty()
        if len(changed):
            fetched = ModelVectors.build(
                _binary_rows(conn, self._queries.some_rows, (model, changed.tolist()))
            )
        if not len(cached.ids) or (len(fetched.ids) and fetched.dim != cached.dim):
            # Nothing to keep, or the model's vectors changed length: start afresh.
            return self._load(conn, model)
        return cached.merged(held[same], fetched)


def _binary_rows(conn: Connection, query: LiteralString, params: Sequence[Any]) -> list[Any]:
    """The rows of ``query`` in binary: ``bytea`` as raw bytes, numbers as machine values."""
    with conn.cursor(binary=True) as cursor:
        return cursor.execute(query, params).fetchall()
