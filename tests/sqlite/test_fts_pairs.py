"""Neighbouring query words matched as phrases: safe FTS5 syntax, and bm25 weight for adjacency."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from thatch_sqlite import fts


@pytest.fixture
def index() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    # The tokenizer of the memories index (see migrations.py).
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(content,"
        " tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    yield conn
    conn.close()


def search(conn: sqlite3.Connection, expression: str) -> list[int]:
    rows = conn.execute(
        "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid", (expression,)
    ).fetchall()
    return [rowid for (rowid,) in rows]


def test_pairs_are_neighbours_both_chosen() -> None:
    words = fts.words("where is the sync step for a charge usage")
    chosen = ["sync", "step", "charge", "usage"]
    assert fts.adjacent_pairs(words, chosen) == ["sync step", "charge usage"]
    assert fts.adjacent_pairs(words, []) == []
    assert fts.adjacent_pairs(["one"], ["one"]) == []


def test_expression_quotes_pairs_as_phrases() -> None:
    assert fts.match_expression(["a"], ["a b"]) == '"a" OR "a b"'
    assert fts.match_expression([], ["a b"]) == '"a b"'
    assert fts.match_expression([], []) is None


def test_hostile_text_stays_plain_with_pairs(index: sqlite3.Connection) -> None:
    index.execute("INSERT INTO t (rowid, content) VALUES (1, 'near x and y')")
    words = fts.words('NEAR(x) AND "y* -- col:')
    expression = fts.match_expression(words, fts.adjacent_pairs(words, words))
    assert expression is not None
    assert search(index, expression) == [1]


def test_a_snake_case_identifier_matches_its_words_in_prose(index: sqlite3.Connection) -> None:
    index.executemany(
        "INSERT INTO t (rowid, content) VALUES (?, ?)",
        [
            (1, "what does the charge field mean? and the usage table"),
            (2, "the fix went into `sync_charge_usage`"),
        ],
    )
    words = fts.words("the sync step for a charge usage")
    chosen = ["sync", "step", "charge", "usage"]
    plain = fts.match_expression(chosen)
    paired = fts.match_expression(chosen, fts.adjacent_pairs(words, chosen))
    assert plain is not None
    assert paired is not None
    assert set(search(index, plain)) == set(search(index, paired)) == {1, 2}
    assert search(index, paired)[0] == 2
