"""The short window's pattern label."""

from __future__ import annotations

import pytest
from receptor_streams import delegate, edit, grep, read, run
from thatch.plugin import ToolCall
from thatch_receptor.actions import action_of
from thatch_receptor.patterns import LABELS, pattern_of


@pytest.mark.parametrize(
    ("calls", "label"),
    [
        ([read(), edit()], "stagnation"),
        ([edit(), run(error="E x"), edit(), run(error="E y"), edit()], "trial_error"),
        ([read(), grep("a"), read(), grep("b"), read()], "wandering"),
        (
            [read(), grep("a"), read(), grep("b"), read(), read(), read(), read(), edit(), run()],
            "exploring",
        ),
        ([read(), edit(), run(), edit(), run()], "implementation"),
        ([delegate(), delegate(), delegate(), read()], "mixed"),
    ],
)
def test_patterns_of_the_short_window(calls: list[ToolCall], label: str) -> None:
    assert pattern_of([action_of(call) for call in calls]) == label
    assert label in LABELS
