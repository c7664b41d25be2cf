"""Search by meaning on the server with pgvector, for large stores; the cache for the rest.

Where the server has pgvector (:mod:`thatch_postgres.pgvector`) and
``[storage.postgres] server_search`` is ``"auto"``, a handle asks the
server to rank a model's vectors once the scope holds at least
``server_search_from`` of them (default: 1,000,000, see
:data:`thatch_postgres.settings.DEFAULT_FROM`): one HNSW index per model and length of
vector, queried with the scope as a filter. Below that, or without the
extension, the in-memory copy (:mod:`thatch_postgres.vectors`) searches as
before: exact, and faster than a round trip while it is small.

The HNSW scan hands ``hnsw.ef_search`` candidates to the filter, nearest
first, and the filter keeps those in scope: a scope that holds a share
``s`` of the model's vectors keeps about ``s * ef_search`` of them. So
ef_search is set per query to :data:`EF_SEARCH` divided by that share
(counted per store, :data:`REFRESH_SECONDS` old at most), and a scope so
small a share that it would pass :data:`EF_MAX` (pgvector's most) is
searched on the cache, exactly, instead.

What this handle knows of the server is refreshed every
:data:`REFRESH_SECONDS`, on the search that finds it older: rows missing
from ``memory_vectors`` are added, the counts per store read again, and a
model that reached the threshold gets its index (built once, by one
machine). Searches answered by the server never load the cache; its first
search costs a few milliseconds rather than reading every vector.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import attrs
from psycopg import sql

from thatch_postgres import pgvector
from thatch_postgres.settings import Mode

if TYPE_CHECKING:
    from thatch.plugin import Vector

    from thatch_postgres.connect import Connection

#: What :attr:`ServerSearch.state` reports (thatch doctor's wording).
State = Literal["in use", "available", "absent", "off"]

#: Candidates the HNSW scan keeps for a scope of every vector of the model. Measured on
#: random unit vectors (no clusters: the hardest case) R@20 was 0.93 at 10k and 0.34 at
#: 100k with 400, against 0.77 and 0.21 with 200, for about the same time at 100k.
EF_SEARCH = 400
#: The most candidates pgvector's HNSW scan keeps.
EF_MAX = 1000
#: Seconds a handle trusts what it counted and checked on the server.
REFRESH_SECONDS = 60.0

_COUNTS = """
    SELECT store, count(*) FROM memory_vectors
    WHERE model = %s AND dim = %s AND NOT archived GROUP BY store
"""
_OUT_OF_STEP = """
    SELECT count(*) FROM memory_vectors AS v JOIN memories AS m ON m.id = v.id
    WHERE (v.model, v.dim, v.store, v.branch, v.archived)
        IS DISTINCT FROM (m.model, length(m.embedding) / 4, m.store, m.branch, m.archived)
"""
_EF = "SELECT set_config('hnsw.ef_search', %s, true)"


@attrs.frozen
class _Model:
    """One model's vectors of one length as this handle last saw them on the server."""

    per_store: dict[str, int]
    #: Whether its HNSW index is there and usable.
    indexed: bool
    seen_at: float

    def in_scope(self, stores: Sequence[str]) -> int:
        return sum(self.per_store.get(store, 0) for store in set(stores))


class ServerSearch:
    """One storage handle's use of pgvector: what it found, and its searches."""

    def __init__(self, schema: str, mode: Mode, threshold: int) -> None:
        self.schema = schema
        self.mode: Mode = mode
        self.threshold = threshold
        self._found = pgvector.Found(None, False, False)
        self._models: dict[tuple[str, int], _Model] = {}
        self._queries: dict[tuple[str, int], sql.Composed] = {}
        # One refresh at a time; other searches meanwhile go by what is known.
        self._refreshing = threading.Lock()

    def open(self, conn: Connection) -> None:
        """Look for pgvector; with ``"auto"``, create the extension and table if allowed.

        Never fails for want of pgvector or of the right to create it: the
        handle then searches its cache, as without the extension.
        """
        found = pgvector.detect(conn)
        auto = self.mode == "auto"
        if auto and found.extension is None and found.available:
            pgvector.create_extension(conn)
            # Made here, or by another machine meanwhile (whose make this one's lost to).
            found = pgvector.detect(conn)
        if (
            auto
            and found.extension is not None
            and not found.table
            and pgvector.install(conn, self.schema, found.extension)
        ):
            found = pgvector.detect(conn)
        self._found = found

    @property
    def state(self) -> State:
        """Whether this handle searches on the server, could (pgvector is installable), or not."""
        if self.mode == "off":
            return "off"
        if self.searching:
            return "in use"
        return "available" if self._found.available else "absent"

    @property
    def searching(self) -> bool:
        """Whether large scopes are searched on the server."""
        return self.mode == "auto" and self._keeps_rows

    def may_search(self, model: str, dim: int, stores: Sequence[str]) -> bool:
        """Whether :meth:`search` could answer, told without the server when the counts are fresh.

        False for a scope known to be under the threshold: its search then
        needs no pooled connection at all, as without pgvector (most searches,
        below a million vectors). Counts older than ``REFRESH_SECONDS`` say
        yes, so that :meth:`search` counts again.
        """
        if not self.searching:
            return False
        seen = self._models.get((model, dim))
        if seen is None or time.monotonic() - seen.seen_at >= REFRESH_SECONDS:
            return True
        return self._large_enough(seen, stores)

    def _large_enough(self, seen: _Model, stores: Sequence[str]) -> bool:
        """Whether ``stores`` hold enough of ``seen``'s indexed vectors for the server to rank."""
        return seen.indexed and seen.in_scope(stores) >= self.threshold

    def problems(self, conn: Connection) -> list[str]:
        """What is wrong with the server's rows (for integrity_problems): rows unlike their memory.

        Missing rows are not a problem (they are added later); a row that
        disagrees with its memory is, since the search would trust it.
        """
        if not self._keeps_rows:
            return []
        row = conn.execute(_OUT_OF_STEP).fetchone()
        if not row or not row[0]:
            return []
        return [f"{row[0]} memories are out of step with their pgvector rows (memory_vectors)"]

    @property
    def _keeps_rows(self) -> bool:
        # Whatever the mode: another machine may search these rows, so they are kept.
        return self._found.table and self._found.extension is not None

    def put(self, conn: Connection, rows: Sequence[tuple[int, bytes]]) -> None:
        """Add the server's rows of memories just written (id, stored vector), if it keeps any."""
        if self._keeps_rows and rows:
            assert self._found.extension is not None
            pgvector.put(conn, self.schema, self._found.extension, rows)

    def search(
        self,
        conn: Connection,
        query: Vector,
        model: str,
        stores: Sequence[str],
        branch: str | None,
        limit: int,
    ) -> list[tuple[int, float]] | None:
        """The best ``limit`` (id, cosine) ranked by the server; None: search the cache instead."""
        if not self.searching:
            return None
        dim = len(query)
        seen = self._model(conn, model, dim)
        if seen is None or not self._large_enough(seen, stores):
            return None
        ef = ef_search(limit, sum(seen.per_store.values()), seen.in_scope(stores))
        if ef is None:
            return None
        params = {
            "query": pgvector.vector_param(query),
            "stores": list(stores),
            "branch": branch,
            "limit": limit,
        }
        assert self._found.extension is not None
        with conn.transaction(), pgvector.vector_cursor(conn) as cursor:
            pgvector.use_extension(conn, self.schema, self._found.extension)
            cursor.execute(_EF, (str(ef),))
            # Never prepared: a generic plan would not see that the model and
            # length match the partial index's, and would scan every row.
            rows = cursor.execute(self._query(model, dim), params, prepare=False).fetchall()
        hits = [(int(memory_id), float(score)) for memory_id, score in rows]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits

    def _model(self, conn: Connection, model: str, dim: int) -> _Model | None:
        """What is known of ``model``'s ``dim``-long vectors, refreshed when old."""
        seen = self._models.get((model, dim))
        if seen is not None and time.monotonic() - seen.seen_at < REFRESH_SECONDS:
            return seen
        # Searches while another refreshes go by what is known; the first
        # ones wait for it rather than load the cache.
        if not self._refreshing.acquire(blocking=seen is None):
            return seen
        try:
            seen = self._models.get((model, dim))
            if seen is not None and time.monotonic() - seen.seen_at < REFRESH_SECONDS:
                return seen
            fresh = self._refresh(conn, model, dim)
            self._models[(model, dim)] = fresh
        finally:
            self._refreshing.release()
        return fresh

    def _refresh(self, conn: Connection, model: str, dim: int) -> _Model:
        """Fill the rows missing, count the rest per store, and build the index once due."""
        extension = self._found.extension
        assert extension is not None
        pgvector.fill_gaps(conn, self.schema, extension)
        per_store = {str(store): int(n) for store, n in conn.execute(_COUNTS, (model, dim))}
        indexed = bool(pgvector.index_valid(conn, model, dim))
        if not indexed and sum(per_store.values()) >= self.threshold:
            indexed = pgvector.build_index(conn, self.schema, extension, model, dim)
        return _Model(per_store, indexed, time.monotonic())

    def _query(self, model: str, dim: int) -> sql.Composed:
        """The search of one model and length, in its index's expression and predicate."""
        query = self._queries.get((model, dim))
        if query is None:
            # The length is part of the type (vector(384)), which no
            # parameter can be: hence composed, from an int and a quoted literal.
            query = sql.SQL(
                """
                SELECT id, (embedding::vector({dim}) <#> %(query)s::vector({dim})) * -1
                FROM memory_vectors
                WHERE model = {model} AND dim = {dim} AND NOT archived
                  AND store = ANY(%(stores)s) AND (branch IS NULL OR branch = %(branch)s)
                ORDER BY embedding::vector({dim}) <#> %(query)s::vector({dim})
                LIMIT %(limit)s
                """
            ).format(dim=sql.Literal(dim), model=sql.Literal(model))
            self._queries[(model, dim)] = query
        return query


def ef_search(limit: int, total: int, in_scope: int) -> int | None:
    """``hnsw.ef_search`` for a scope of ``in_scope`` of ``total`` vectors; None: too few for it.

    :data:`EF_SEARCH` candidates (at least twice ``limit``) for the whole
    model, more as the scope's share shrinks, so that about as many remain
    once the filter drops the rest.
    """
    base = max(EF_SEARCH, 2 * limit)
    share = max(in_scope, 1) / max(total, in_scope, 1)
    ef = math.ceil(base / share)
    return ef if ef <= EF_MAX else None
