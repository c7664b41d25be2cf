"""The in-memory search state of one connection, kept current with the file.

Two things are cached: the vector index (loading 100k vectors takes most of a
second) and how many memories hold each query word (to choose affordable
full-text terms, see :mod:`thatch_sqlite.fts`). A large store's vectors are
held as int8 codes; the exact float32 vectors of its search candidates are
read back from the file here. The index follows every
commit, this handle's and other processes'; the counts are recounted every
:data:`COUNT_DRIFT` changes.

Whether anything changed is cheap to ask: ``PRAGMA data_version`` moves when
another connection commits, and :meth:`SearchCache.wrote` counts this
handle's own commits. What changed is in the ``search_changes`` log that
triggers fill: only those memories are re-read. Commits that change nothing
searchable (recall counts, reviews) add nothing to the log and cost nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
from thatch.plugin import release_free_memory

from thatch_sqlite import fts
from thatch_sqlite.vectors import VectorIndex

if TYPE_CHECKING:
    import numpy.typing as npt

    from thatch_sqlite.vectors import Matrix

#: Cached document counts kept before starting over; bounds a daemon's memory.
_MAX_COUNTS = 50_000
#: Changes after which word counts are counted again. A count only decides
#: which words a text search can afford, and each change moves a count by at
#: most one, so counts this far behind are still good enough; recounting on
#: every change would make the first search after each write pay again.
COUNT_DRIFT = 500


class Follower:
    """State of one connection kept current with the file. The caller holds its lock.

    Subclasses say in :meth:`_catch_up` how to apply what changed since the
    last sync; this class decides when that is needed.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        # Own commits so far, and the (data_version, commits) last synced at.
        self._commits = 0
        self._synced: tuple[int, int] | None = None

    def wrote(self) -> None:
        """Note a commit by this connection (data_version does not see those)."""
        self._commits += 1

    def clear(self) -> None:
        self._synced = None

    def _sync(self) -> None:
        # data_version is read before the data, so a commit racing this sync
        # shows up as a new version next time instead of being missed.
        version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        if self._synced == (version, self._commits):
            return
        # One read transaction: the log and the rows come from one snapshot.
        self._conn.execute("BEGIN")
        try:
            self._catch_up()
        finally:
            self._conn.execute("COMMIT")
        self._synced = (version, self._commits)

    def _catch_up(self) -> None:
        """Apply the changes committed since the last sync."""
        raise NotImplementedError


class SearchCache(Follower):
    """Vector index and word counts of one connection. The caller holds its lock."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._vectors = VectorIndex(self._stored_vectors)
        self._doc_counts: dict[str, int] = {}
        # Last search_changes entry applied, and the one the counts date from.
        self._seq = 0
        self._counts_seq = 0

    def clear(self) -> None:
        super().clear()
        self._vectors.clear()
        self._doc_counts.clear()

    def vectors(self, model: str) -> VectorIndex:
        """The vector index, current and with ``model`` loaded."""
        self._sync()
        if not self._vectors.loaded(model):
            # Read after _sync, so these rows are at least as new as _seq: a
            # change also in the log is applied twice, which is harmless.
            self._load_vectors(model)
        return self._vectors

    def _load_vectors(self, model: str) -> None:
        # The usual vector length of the model (length() of a blob reads
        # only the record header) and how many rows have it.
        # Read around the memory map: scanning every vector through it would
        # leave the whole table resident in this (possibly long-lived) process.
        with without_mmap(self._conn):
            usual = self._conn.execute(
                "SELECT length(embedding), count(*) FROM memories"
                " WHERE model = ? AND archived = 0 GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
                (model,),
            ).fetchone()
            if usual is None:
                self._vectors.load(model, (), (), (), ())
                return
            size, count = usual
            # Rows per store: a large store is coded as it streams in, never
            # held as float32 (see VectorIndex.load_sorted).
            sizes = dict(
                self._conn.execute(
                    "SELECT store, count(*) FROM memories"
                    " WHERE model = ? AND archived = 0 AND length(embedding) = ? GROUP BY store",
                    (model, size),
                ).fetchall()
            )
            # One query per store rather than ORDER BY store: SQLite would
            # sort every row, vectors included, in a temporary b-tree first.
            rows = itertools.chain.from_iterable(
                self._conn.execute(
                    "SELECT id, store, branch, embedding FROM memories"
                    " WHERE store = ? AND model = ? AND archived = 0 AND length(embedding) = ?",
                    (store, model, size),
                )
                for store in sizes
            )
            self._vectors.load_sorted(model, rows, count, size // 4, sizes)
        release_free_memory()

    def _stored_vectors(
        self, model: str, ids: Sequence[int], dim: int
    ) -> tuple[npt.NDArray[np.int64], Matrix]:
        # Looked up by primary key (the unary + keeps SQLite off the model
        # index, which would walk every memory of the model). A memory
        # archived or deleted by another process since the last sync is left
        # out, so a search never returns it.
        rows = self._conn.execute(
            "SELECT id, embedding FROM memories WHERE +model = ? AND +archived = 0"
            " AND length(embedding) = ? AND id IN (SELECT value FROM json_each(?))",
            (model, 4 * dim, json.dumps(list(ids))),
        ).fetchall()
        found = np.fromiter((row[0] for row in rows), np.int64, len(rows))
        # One join and one conversion for all the rows, not a numpy call per row.
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4")
        return found, matrix.astype(np.float32, copy=False).reshape(len(rows), dim)

    def doc_counts(self, words: Sequence[str]) -> dict[str, int]:
        """How many memories (archived too) hold each word, counting to just past the budget."""
        self._sync()
        if len(self._doc_counts) > _MAX_COUNTS:
            self._doc_counts.clear()
        counts = {}
        for word in words:
            key = word.casefold()
            count = self._doc_counts.get(key)
            if count is None:
                # LIMIT: a common word costs at most MAX_POSTINGS steps to rule out.
                count = self._conn.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM memories_fts"
                    " WHERE memories_fts MATCH ? LIMIT ?)",
                    (fts.phrase(word), fts.MAX_POSTINGS + 1),
                ).fetchone()[0]
                self._doc_counts[key] = count
            counts[word] = count
        return counts

    def _catch_up(self) -> None:
        oldest, latest = self._conn.execute(
            "SELECT coalesce(min(seq), 0), coalesce(max(seq), 0) FROM search_changes"
        ).fetchone()
        if latest == self._seq:
            return
        if oldest > self._seq + 1:
            # The log was trimmed past what this handle saw: start over.
            self._vectors.clear()
            self._doc_counts.clear()
        elif self._vectors.loaded():
            self._apply_changes()
        if latest - self._counts_seq > COUNT_DRIFT or not self._doc_counts:
            self._doc_counts.clear()
            self._counts_seq = latest
        self._seq = latest

    def _apply_changes(self) -> None:
        changed = [
            row[0]
            for row in self._conn.execute(
                "SELECT DISTINCT memory_id FROM search_changes WHERE seq > ?", (self._seq,)
            )
        ]
        rows = self._conn.execute(
            "SELECT id, store, branch, archived, model, embedding FROM memories"
            " WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(changed),),
        ).fetchall()
        gone = set(changed)
        for memory_id, store, branch, archived, model, blob in rows:
            if not archived:
                gone.discard(memory_id)
                vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
                # put() moves a memory whose store or model changed.
                self._vectors.put(memory_id, store, model, branch, vector)
        for memory_id in gone:  # deleted or archived
            self._vectors.remove(memory_id)


@contextlib.contextmanager
def without_mmap(conn: sqlite3.Connection) -> Iterator[None]:
    """Read through SQLite's own page cache (not the memory map) inside the block."""
    size = conn.execute("PRAGMA mmap_size").fetchone()[0]
    conn.execute("PRAGMA mmap_size = 0")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA mmap_size = {int(size)}")
