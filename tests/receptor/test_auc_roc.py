"""The exact ROC AUC of bench/roc_auc.py (the receptor's outcome measurement uses it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _roc_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("roc_auc", BENCH / "roc_auc.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


roc_auc = _roc_module().roc_auc


def test_perfect_separation_is_1() -> None:
    assert roc_auc([0.9, 0.8, 0.2, 0.1], [True, True, False, False]) == 1.0


def test_reversed_separation_is_0() -> None:
    assert roc_auc([0.1, 0.2, 0.8, 0.9], [True, True, False, False]) == 0.0


def test_all_tied_is_half() -> None:
    assert roc_auc([3.0, 3.0, 3.0, 3.0], [True, False, True, False]) == 0.5


def test_a_tie_counts_half_a_pair() -> None:
    # Pairs (positive, negative): (2,1) win, (2,2) tie, (3,1) win, (3,2) win: 3.5 of 4.
    assert roc_auc([2.0, 3.0, 1.0, 2.0], [True, True, False, False]) == 0.875


def test_one_outcome_only_is_an_error() -> None:
    with pytest.raises(ValueError, match="one positive and one negative"):
        roc_auc([1.0, 2.0], [True, True])
    with pytest.raises(ValueError, match="2 scores for 1 outcomes"):
        roc_auc([1.0, 2.0], [True])
