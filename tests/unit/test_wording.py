from __future__ import annotations

import json
from pathlib import Path

import pytest
from thatch.decisions.wording import same_statement

DECISIONS = Path(__file__).parents[2] / "bench" / "data" / "decisions.jsonl"


def _opposites() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in DECISIONS.read_text().splitlines() if line.strip()]
    return [(row["a"], row["b"]) for row in rows if row["kind"] == "opposite"]


@pytest.mark.parametrize(("first", "second"), _opposites())
def test_opposite_preferences_are_never_the_same_statement(first: str, second: str) -> None:
    assert not same_statement(first, second)


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
