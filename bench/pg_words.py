"""Other rankings of the PostgreSQL words search, run against a live schema by the bench only.

The backend ranks with ``ts_rank`` and the class weights {D, C, B, A} =
{0.25, 0.25, 0.25, 1.0} (label four times content, as SQLite's bm25
weights 4, 1) over the query's affordable words (thatch_postgres.wordcounts).
``ts_rank`` knows nothing of how rare a word is, which SQLite's bm25 does;
these variants change the ranking expression, the words chosen, or add a
bm25-like inverse document frequency, with the backend's filters unchanged,
so that bench/recall_quality.py ``--postgres`` can fuse each with the same
vector list and compare quality.

The "split" variants read a table of the bench's own, ``split_words``, whose
vectors are made of the text cut into words as the query is cut
(``thatch_postgres.text.words``: ``\\w+`` of the folded text) instead of the
text as it is: PostgreSQL's parser keeps a dotted name or a path whole
(``taxcalc.charge.retry`` is one "host" lexeme, ``src/app/main.py`` one
"file"), which a query's words then never match.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import psycopg
from thatch.plugin.records import Scope, ScoredId
from thatch_postgres import text, wordcounts

WEIGHTS = "'{0.25, 0.25, 0.25, 1.0}'"
#: The backend's filters and order; ``{rank}`` is the score expression.
_SEARCH = """
    SELECT w.id, {rank} AS score
    FROM {table} AS w, (SELECT to_tsquery('english', %(query)s) AS query) AS q
    WHERE w.search @@ q.query AND NOT w.archived AND w.store = ANY(%(stores)s)
      AND (w.branch IS NULL OR w.branch = %(branch)s)
    ORDER BY score DESC, w.id
    LIMIT %(limit)s
"""
_ROWS = "SELECT count(*) FROM memory_words WHERE NOT archived"
_HOLDING = "SELECT count(*) FROM {table} WHERE search @@ to_tsquery('english', %s)"
_SPLIT_TABLE = (
    "DROP TABLE IF EXISTS split_words",
    "CREATE TABLE split_words (id bigint PRIMARY KEY, store text NOT NULL, branch text,"
    " archived boolean NOT NULL, search tsvector NOT NULL)",
)
_SPLIT_INSERT = """
    INSERT INTO split_words VALUES (%s, %s, %s, %s,
        setweight(to_tsvector('english', %s), 'A') || setweight(to_tsvector('english', %s), 'D'))
"""
_MEMORIES = "SELECT id, store, branch, archived, label, content FROM memories"
_WORD = re.compile(r"\w+")
#: name -> (rank expression, whether the backend's word budget picks the words).
RANKS: dict[str, tuple[str, bool]] = {
    "ts_rank (backend's SQL)": (f"ts_rank({WEIGHTS}, w.search, q.query)", True),
    "ts_rank, all words": (f"ts_rank({WEIGHTS}, w.search, q.query)", False),
    "ts_rank, norm 1 (1+log length)": (f"ts_rank({WEIGHTS}, w.search, q.query, 1)", True),
    "ts_rank, norm 2 (length)": (f"ts_rank({WEIGHTS}, w.search, q.query, 2)", True),
    "ts_rank_cd": (f"ts_rank_cd({WEIGHTS}, w.search, q.query)", True),
    "ts_rank_cd, norm 1": (f"ts_rank_cd({WEIGHTS}, w.search, q.query, 1)", True),
    "ts_rank, label x10": ("ts_rank('{0.1, 0.1, 0.1, 1.0}', w.search, q.query)", True),
}
IDF_NAMES = ("idf x ts_rank per word", "idf x ts_rank per word, norm 1")
#: name -> rank expression, on split_words with all the query's words.
SPLIT_RANKS: dict[str, str] = {
    "split: ts_rank": f"ts_rank({WEIGHTS}, w.search, q.query)",
    "split: ts_rank_cd": f"ts_rank_cd({WEIGHTS}, w.search, q.query)",
}

#: A words search of one query: (query, scope, limit) -> hits, best first.
Search = Callable[[str, Scope, int], list[ScoredId]]


class Searches:
    """The variant words searches on one schema, on a connection of their own."""

    def __init__(self, dsn: str, schema: str) -> None:
        self._conn: psycopg.Connection[Any] = psycopg.connect(
            dsn, autocommit=True, options=f"-c search_path={schema}"
        )
        self._counts = wordcounts.WordCounts()
        self._holding: dict[tuple[str, str], int] = {}
        row = self._conn.execute(_ROWS).fetchone()
        self._rows = int(row[0]) if row else 0

    def close(self) -> None:
        self._conn.close()

    def make_split_table(self) -> None:
        """Fill ``split_words`` from the schema's memories, their text cut as queries are."""
        for step in _SPLIT_TABLE:
            self._conn.execute(step)
        with self._conn.transaction():
            for memory_id, store, branch, archived, label, content in self._conn.execute(
                _MEMORIES
            ).fetchall():
                self._conn.execute(
                    _SPLIT_INSERT,
                    (memory_id, store, branch, archived, split(label), split(content)),
                )
        self._conn.execute("CREATE INDEX ON split_words USING gin (search)")
        self._conn.execute("ANALYZE split_words")

    def all(self) -> dict[str, Search]:
        """Every variant by name."""
        found: dict[str, Search] = {
            name: self._ranked(rank, budget) for name, (rank, budget) in RANKS.items()
        }
        for name, norm in zip(IDF_NAMES, (0, 1), strict=True):
            found[name] = self._idf(norm, "memory_words")
        self.make_split_table()
        for name, rank in SPLIT_RANKS.items():
            found[name] = self._ranked(rank, False, "split_words")
        found["split: idf x ts_rank per word"] = self._idf(0, "split_words")
        return found

    def _words(self, query: str, budget: bool) -> list[str]:
        words = text.words(query)
        return self._counts.affordable(self._conn, words) if budget else words

    def _run(
        self, rank: str, table: str, words: list[str], scope: Scope, limit: int, **extra: Any
    ) -> Any:
        expression = text.tsquery(words)
        if expression is None or not scope.stores:
            return []
        params = {
            "query": expression,
            "stores": list(scope.stores),
            "branch": scope.branch,
            "limit": limit,
            **extra,
        }
        sql = _SEARCH.format(rank=rank, table=table)
        return self._conn.execute(sql, params, prepare=False).fetchall()

    def _ranked(self, rank: str, budget: bool, table: str = "memory_words") -> Search:
        def search(query: str, scope: Scope, limit: int) -> list[ScoredId]:
            rows = self._run(rank, table, self._words(query, budget), scope, limit)
            return [ScoredId(i, float(s)) for i, s in rows]

        return search

    def _idf(self, norm: int, table: str) -> Search:
        """Each affordable word's ts_rank times its bm25 inverse document frequency, summed."""

        def search(query: str, scope: Scope, limit: int) -> list[ScoredId]:
            words = [w for w in self._words(query, True) if self.holding(w, table) > 0]
            if not words:
                return []
            terms = {f"w{i}": text.tsquery([w]) for i, w in enumerate(words)}
            idf = {f"f{i}": self.idf(w, table) for i, w in enumerate(words)}
            rank = " + ".join(
                f"%(f{i})s * ts_rank({WEIGHTS}, w.search, to_tsquery('english', %(w{i})s), {norm})"
                for i in range(len(words))
            )
            rows = self._run(rank, table, words, scope, limit, **terms, **idf)
            return [ScoredId(i, float(s)) for i, s in rows]

        return search

    def holding(self, word: str, table: str) -> int:
        """How many memories of ``table`` hold ``word`` (counted once per word)."""
        if (table, word) not in self._holding:
            sql = _HOLDING.format(table=table)
            row = self._conn.execute(sql, (text.tsquery([word]),)).fetchone()
            self._holding[table, word] = int(row[0]) if row else 0
        return self._holding[table, word]

    def idf(self, word: str, table: str) -> float:
        """bm25's inverse document frequency of ``word``, in the form kept above zero."""
        n = self.holding(word, table)
        return math.log((self._rows - n + 0.5) / (n + 0.5) + 1.0)


def split(value: str) -> str:
    """``value`` folded and cut into words as a query is, joined by spaces."""
    return " ".join(_WORD.findall(text.fold(value)))
