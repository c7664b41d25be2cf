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
reloaded whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, LiteralString

import attrs
import numpy as np

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

#: One row as the cache keeps it: id, store, branch, rev, vector bytes.
Row = tuple[int, str, "str | None", int, bytes]


def to_bytes(vector: object) -> bytes:
    """A vector as stored: contiguous little-endian float32."""
    return np.ascontiguousarray(vector, dtype=FLOAT32).tobytes()


def from_bytes(data: bytes) -> Vector:
    """A stored vector back as native float32."""
    return np.frombuffer(data, dtype=FLOAT32).astype(np.float32)


@attrs.frozen
class ModelVectors:
    """One model's unarchived vectors, a row each, with what a search filters on."""

    ids: np.ndarray
    revs: np.ndarray
    stores: tuple[str, ...]
    #: Index into :attr:`stores` of each row.
    store_of: np.ndarray
    branches: tuple[str | None, ...]
    matrix: Matrix

    @property
    def token(self) -> tuple[int, int]:
        """What the freshness query gives while the server holds exactly these rows."""
        return len(self.ids), int(self.revs.sum())

    @classmethod
    def build(cls, rows: Sequence[Row]) -> ModelVectors:
        """The copy of these rows; a vector of another length than the first is left out."""
        dim = len(rows[0][4]) // FLOAT32.itemsize if rows else 0
        # A corrupt row is skipped rather than breaking every search of the model.
        kept = sorted(
            (row for row in rows if len(row[4]) == dim * FLOAT32.itemsize), key=lambda r: r[0]
        )
        stores: dict[str, int] = {}
        store_of = [stores.setdefault(row[1], len(stores)) for row in kept]
        matrix = np.frombuffer(b"".join(row[4] for row in kept), dtype=FLOAT32)
        return cls(
            ids=np.array([row[0] for row in kept], dtype=np.int64),
            revs=np.array([row[3] for row in kept], dtype=np.int64),
            stores=tuple(stores),
            store_of=np.array(store_of, dtype=np.int64),
            branches=tuple(row[2] for row in kept),
            matrix=matrix.astype(np.float32).reshape(len(kept), dim),
        )

    def rows(self, positions: Sequence[int]) -> list[Row]:
        """The rows at these positions, as :meth:`build` takes them."""
        return [
            (
                int(self.ids[i]),
                self.stores[self.store_of[i]],
                self.branches[i],
                int(self.revs[i]),
                self.matrix[i].astype(FLOAT32).tobytes(),
            )
            for i in positions
        ]

    def search(
        self, query: Vector, stores: Sequence[str], branch: str | None, limit: int
    ) -> list[tuple[int, float]]:
        """The best ``limit`` rows of ``stores`` visible on ``branch``, as (id, cosine)."""
        if not len(self.ids) or limit <= 0 or query.shape[0] != self.matrix.shape[1]:
            return []
        wanted = [code for code, name in enumerate(self.stores) if name in set(stores)]
        mask = np.isin(self.store_of, wanted)
        mask &= np.fromiter(
            (row is None or row == branch for row in self.branches), bool, len(self.branches)
        )
        rows = np.flatnonzero(mask)
        if not len(rows):
            return []
        scores = self.matrix[rows] @ query
        # Best first; equal scores by id, so that the order is stable.
        order = np.lexsort((self.ids[rows], -scores))[:limit]
        return [(int(self.ids[rows[i]]), float(scores[i])) for i in order]

    def store_matrix(self, store: str) -> tuple[list[int], Matrix]:
        """Ids and rows of one store."""
        if store not in self.stores:
            return [], np.zeros((0, self.matrix.shape[1]), dtype=np.float32)
        rows = np.flatnonzero(self.store_of == self.stores.index(store))
        return [int(i) for i in self.ids[rows]], np.ascontiguousarray(self.matrix[rows])


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
        return ModelVectors.build([_row(r) for r in conn.execute(self._queries.all_rows, (model,))])

    def _catch_up(self, conn: Connection, model: str, cached: ModelVectors) -> ModelVectors:
        """``cached`` with the rows that changed on the server replaced, the gone ones dropped."""
        on_server: dict[int, int] = {
            int(i): int(rev) for i, rev in conn.execute(self._queries.revs, (model,))
        }
        held = dict(zip(cached.ids.tolist(), cached.revs.tolist(), strict=True))
        changed = [i for i, rev in on_server.items() if held.get(i) != rev]
        if len(changed) > RELOAD_SHARE * max(len(on_server), 1):
            return self._load(conn, model)
        keep = [
            position for position, (i, rev) in enumerate(held.items()) if on_server.get(i) == rev
        ]
        fetched = conn.execute(self._queries.some_rows, (model, changed)).fetchall()
        return ModelVectors.build(cached.rows(keep) + [_row(r) for r in fetched])


def _row(row: Sequence[Any]) -> Row:
    return (
        int(row[0]),
        str(row[1]),
        None if row[2] is None else str(row[2]),
        int(row[3]),
        bytes(row[4]),
    )
