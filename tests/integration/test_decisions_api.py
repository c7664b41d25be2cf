"""The decision model through the Python API with the real model and SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest
import thatch

SITUATION = "reviewing a pull request that touches old tech debt"
PREFERENCE = "leave the debt alone unless it blocks the change"


def _build_evidence(th: thatch.Thatch, store: str) -> None:
    th.decisions.update(SITUATION, PREFERENCE, "create", store=store)
    for _ in range(16):
        th.decisions.update(SITUATION, PREFERENCE, "confirm", store=store)
    for _ in range(4):
        th.decisions.update(SITUATION, PREFERENCE, "disconfirm", store=store)


def test_population_prior_starts_new_predictions_at_the_store_rate(home: Path) -> None:
    with thatch.open(home) as th:
        _build_evidence(th, "global")
        existing = th.decisions.list("global")[0]
        assert (existing.confirm_count, existing.disconfirm_count) == (16.0, 4.0)
        # The store's 16 / 20 = 0.8, shrunk toward 0.5 by 20 pseudo-units:
        # (16 + 10) / (20 + 20) = 0.65 once the store holds 20 units of evidence.
        new = th.decisions.update(
            "choosing a name for a new module", "prefer a short noun", "create", store="global"
        )
        assert new.outcome == "created"
        assert new.prediction.prior == pytest.approx(0.65)
        assert new.confidence == pytest.approx(0.65)
        confirmed = th.decisions.update(
            "choosing a name for a new module", "prefer a short noun", "confirm", store="global"
        )
        assert confirmed.confidence == pytest.approx((1 + 5 * 0.65) / (1 + 5))
        elsewhere = th.decisions.update(
            "choosing a name for a new module", "prefer a short noun", "create", store="acme/web"
        )
        assert elsewhere.confidence == pytest.approx(0.5)


def test_population_prior_can_be_switched_off(home: Path) -> None:
    (home / "config").mkdir()
    (home / "config" / "config.toml").write_text("[predictions]\npopulation_prior = false\n")
    with thatch.open(home) as th:
        _build_evidence(th, "global")
        new = th.decisions.update(
            "choosing a name for a new module", "prefer a short noun", "create", store="global"
        )
        assert new.confidence == pytest.approx(0.5)


def test_conflicting_predictions_are_all_shown(home: Path) -> None:
    with thatch.open(home) as th:
        th.decisions.update(SITUATION, PREFERENCE, "create", store="global")
        for _ in range(3):
            th.decisions.update(SITUATION, PREFERENCE, "confirm", store="global")
        th.decisions.update(
            "reviewing a pull request where the old debt is a flaky test",
            "fix the flaky test in the same pull request",
            "create",
            store="global",
        )
        # Both predictions hang on one matcher (the second wording is within
        # dedup of the first); the prompt is worded to clear the firing rule.
        hits = th.decisions.query(
            "Please review this pull request that touches the old debt and a flaky test"
        )
        statements = [hit.prediction.statement for hit in hits]
        assert PREFERENCE in statements
        assert "fix the flaky test in the same pull request" in statements
        assert hits == sorted(hits, key=lambda hit: -hit.score)
