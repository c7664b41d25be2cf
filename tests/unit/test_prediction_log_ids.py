"""A prediction log entry's id is stable: the same block in the same session, the same id."""

from __future__ import annotations

from datetime import UTC, datetime

from thatch.plugin import LoggedPrediction, entry_id

TEXT = "Prediction: the user keeps pytest\n  (confidence 0.8)"


def test_the_same_block_gets_the_same_id_however_it_is_wrapped() -> None:
    assert entry_id("s1", TEXT) == entry_id("s1", " ".join(TEXT.split()))
    assert entry_id("s1", TEXT) != entry_id("s2", TEXT)
    assert entry_id("s1", TEXT) != entry_id("s1", TEXT + " more")
    # The separator keeps session and text apart.
    assert entry_id("s1", "a b") != entry_id("s1 a", "b")


def test_a_shown_entry_is_new_and_unscored() -> None:
    when = datetime(2025, 3, 1, tzinfo=UTC)
    entry = LoggedPrediction.shown("s1", TEXT, when, store="global")
    assert entry == LoggedPrediction(
        id=entry_id("s1", TEXT), session_id="s1", text=TEXT, recorded_at=when, store="global"
    )
    assert (entry.outcome, entry.scored_at) == (None, None)
