"""Which of a query's words a words search can afford, from the planner's estimate of their counts.

The server reads and ranks every memory that holds any word of the query
(``ts_rank`` has no shortcut for the best few), and a prompt's common
words ("run", "test", the project's name) are in a third of a large
table: at 100k memories such a search ranked 30,000 rows. So, as the
SQLite backend does, the words are taken rarest first while the memories
holding them add up to at most :data:`MAX_POSTINGS`; a word in more
memories than that alone is left out. A common word carries little
meaning to rank by anyway (``ts_rank`` weighs it as much as a rare one).

How many memories hold a word is estimated from what ``ANALYZE`` (run by
autovacuum) keeps in ``pg_stats`` of the ``search`` column of
``memory_words`` (the table the words search reads): its most common
lexemes, each with the share of rows holding it, times the table's row
estimate. That costs nothing when writing and one small read every
:data:`REFRESH_SECONDS`. A table of word counts kept by a trigger would be
exact, but every memory saved would update a row per word, and the rows of
common words would be a hot spot that every writer on every machine locks.
A lexeme not among the most common is rarer than the least common one kept;
it is counted at half that share, as the planner itself estimates it. A
table not analyzed yet has no statistics, and every word is kept: it is
new or small (autovacuum analyzes a table within a minute of a bulk load).

A word's lexemes come from the server's own stemming (``to_tsvector``),
asked once per word and kept: stemming never changes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from thatch.plugin import word_budget

from thatch_postgres import text

if TYPE_CHECKING:
    from thatch_postgres.connect import Connection

#: Most memories one words search may rank (as the SQLite backend's budget).
MAX_POSTINGS = 5000

#: Seconds the statistics are used before they are read again.
REFRESH_SECONDS = 300.0

#: Words whose lexemes are kept; past it the memo starts again.
MAX_WORDS = 10_000

# The search column's most common lexemes and their shares (followed by the
# smallest and largest share and the share of nulls), and the row estimate
# (-1 or 0 before the first VACUUM or ANALYZE).
_STATISTICS = """
    SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples
    FROM pg_class AS c
    LEFT JOIN pg_stats AS s
        ON s.schemaname = current_schema() AND s.tablename = 'memory_words' AND s.attname = 'search'
    WHERE c.oid = 'memory_words'::regclass
"""
_LEXEMES = "SELECT w, tsvector_to_array(to_tsvector('english', w)) FROM unnest(%s::text[]) AS w"


class WordCounts:
    """Estimated memories per word of one schema, read now and then; safe to share."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._lexemes: dict[str, tuple[str, ...]] = {}
        self._counts: dict[str, float] = {}
        # Estimated memories of a lexeme not among the most common (0: no statistics).
        self._rare = 0.0
        self._read_at: float | None = None

    def affordable(self, conn: Connection, words: Sequence[str]) -> list[str]:
        """The rarest of ``words`` whose memories add up to at most :data:`MAX_POSTINGS`.

        Stop words (no lexeme) are left out; the chosen keep the query's
        order. Equally common words are taken in the query's order.
        """
        lexemes = self._lexemes_of(conn, words)
        counts, rare = self._estimates(conn)
        estimated = {
            word: sum(counts.get(lexeme, rare) for lexeme in lexemes[word])
            for word in words
            if lexemes[word]
        }
        chosen = set(word_budget.affordable(estimated, MAX_POSTINGS))
        return [word for word in words if word in chosen]

    def _lexemes_of(self, conn: Connection, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        with self._lock:
            known = {word: self._lexemes[word] for word in words if word in self._lexemes}
        missing = [word for word in words if word not in known]
        if missing:
            found = {
                str(word): tuple(lexemes or ())
                for word, lexemes in conn.execute(_LEXEMES, (missing,)).fetchall()
            }
            with self._lock:
                if len(self._lexemes) + len(found) > MAX_WORDS:
                    self._lexemes.clear()
                self._lexemes.update(found)
            known.update(found)
        return known

    def _estimates(self, conn: Connection) -> tuple[dict[str, float], float]:
        now = self._clock()
        with self._lock:
            if self._read_at is not None and now - self._read_at < REFRESH_SECONDS:
                return self._counts, self._rare
        row = conn.execute(_STATISTICS).fetchone()
        counts: dict[str, float] = {}
        rare = 0.0
        if row is not None and row[0] and row[1] and row[2] > 0:
            elems, shares, rows = row[0], row[1], float(row[2])
            counts = {str(e): float(s) * rows for e, s in zip(elems, shares, strict=False)}
            rare = float(shares[len(elems)]) / 2 * rows
        with self._lock:
            self._counts, self._rare, self._read_at = counts, rare, now
        return counts, rare


def tsquery(conn: Connection, counts: WordCounts, query: str) -> str | None:
    """The ``to_tsquery`` text of the affordable words of ``query``; None when there are none."""
    return text.tsquery(counts.affordable(conn, text.words(query)))
