from __future__ import annotations

from datetime import UTC, datetime

import pytest
from thatch.decisions.engine import PredictionHit
from thatch.decisions.nudge import HEADER, format_block, line
from thatch.plugin.decisions import Matcher, Prediction

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _hit(situation: str, statement: str, conf: float, tests: int) -> PredictionHit:
    matcher = Matcher(
        id=1, store="global", description=situation, model="m", created_at=NOW, updated_at=NOW
    )
    prediction = Prediction(
        id=2,
        store="global",
        statement=statement,
        rationale="",
        model="m",
        confirm_count=0.0,
        disconfirm_count=0.0,
        prior=0.5,
        confidence=conf,
        created_at=NOW,
        updated_at=NOW,
    )
    return PredictionHit(
        prediction=prediction,
        matcher=matcher,
        cosine=0.8,
        weight=1.0,
        score=0.8 * conf,
        tests=tests,
    )


def test_block_matches_the_documented_format() -> None:
    block = format_block(
        [
            _hit(
                "Reviewing a PR with old tech debt", "Skip it unless it blocks the change", 0.72, 4
            ),
            _hit("The debt is a flaky test", "Fixing it.", 0.5, 0),
        ]
    )
    assert block.splitlines() == [
        HEADER,
        "- [0.72 conf, 4 tests] When reviewing a PR with old tech debt: "
        'you tend to choose "skip it unless it blocks the change"',
        '- [0.50 conf, 0 tests] When the debt is a flaky test: you may prefer "fixing it"',
    ]


def test_singular_test_and_acronyms_kept() -> None:
    text = format_block([_hit("CI is red", "Rerun once before digging in", 0.58, 1)])
    assert '[0.58 conf, 1 test] When CI is red: you tend to choose "rerun once' in text


@pytest.mark.parametrize(
    "statement",
    ["write the ledger test first", "Writing the test first.", "test_<module>.py", "pytest -x"],
)
def test_any_statement_reads_as_a_quoted_choice(statement: str) -> None:
    # A bare verb after "you may prefer" read "you may prefer write the ledger test first".
    untested = line(0.4, 0, "Adding a feature", statement)
    tested = line(0.8, 3, "Adding a feature", statement)
    quoted = statement.rstrip(".")
    quoted = quoted[0].lower() + quoted[1:]
    assert untested.endswith(f'When adding a feature: you may prefer "{quoted}"')
    assert tested.endswith(f'When adding a feature: you tend to choose "{quoted}"')


def test_quotes_in_a_statement_do_not_end_the_quotation() -> None:
    assert line(0.8, 2, "Running tests", 'use "uv run pytest"').endswith(
        "you tend to choose \"use 'uv run pytest'\""
    )


def test_nothing_fired_is_empty() -> None:
    assert format_block([]) == ""
