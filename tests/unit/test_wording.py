"""Rewordings are the same statement.

That opposite preferences (the ``opposite`` lines of bench/data/decisions.jsonl)
are never linked is tested with the whole rule, cosine and contrast included,
in tests/unit/test_prediction_wording.py.
"""

from __future__ import annotations

import pytest
from thatch.decisions.wording import same_statement


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "handle error cases before the happy path",
            "handle the error cases before the happy path",
        ),
        ("Fix the flaky test right away.", "fix the flaky tests right away"),
        ("Never squash commits", "Never squash the commits."),
    ],
)
def test_rewordings_are_the_same_statement(first: str, second: str) -> None:
    assert same_statement(first, second)
