"""The receptor's ready items: one active at a time, never in deep work, stale ones dropped."""

from __future__ import annotations

from thatch_receptor.deliveries import (
    ACTIVE_MAX_AGE_SECONDS,
    ACTIVE_MAX_CALLS,
    MAX_NOTES,
    Deliveries,
    Delivery,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def item(
    deliveries: Deliveries,
    mode: str = "active",
    *,
    session: str = "s",
    at_call: int = 0,
    created_at: float = 1_000.0,
    pattern: str = "trial_error",
) -> Delivery:
    return Delivery(
        id=deliveries.new_id(),
        session_id=session,
        mode=mode,  # type: ignore[arg-type]
        text=f"text {mode}",
        rule="error-context",
        trigger="error_context",
        pattern=pattern,
        reason="frustration and seeking in trial and error",
        created_at=created_at,
        at_call=at_call,
    )


def test_a_session_holds_one_active_item_and_hands_it_over_once() -> None:
    deliveries = Deliveries(Clock())
    first, second = item(deliveries), item(deliveries)
    deliveries.add(first)
    deliveries.add(second)  # the newer one replaces the one not yet shown
    assert deliveries.take_active("s", calls=1, in_flow=False, via="tool") == second
    assert deliveries.take_active("s", calls=2, in_flow=False, via="tool") is None
    assert [handed.delivery for handed in deliveries.handed("s")] == [second]


def test_nothing_active_is_handed_over_during_deep_work_and_it_waits() -> None:
    deliveries = Deliveries(Clock())
    ready = item(deliveries)
    deliveries.add(ready)
    assert deliveries.take_active("s", calls=1, in_flow=True, via="tool") is None
    assert deliveries.pending_active("s") == ready
    assert deliveries.take_active("s", calls=2, in_flow=False, via="tool") == ready


def test_a_stale_active_item_is_dropped_by_calls_or_by_age() -> None:
    clock = Clock()
    deliveries = Deliveries(clock)
    deliveries.add(item(deliveries, at_call=3))
    assert (
        deliveries.take_active("s", calls=3 + ACTIVE_MAX_CALLS + 1, in_flow=False, via="tool")
        is None
    )
    deliveries.add(item(deliveries))
    clock.now += ACTIVE_MAX_AGE_SECONDS + 1
    assert deliveries.take_active("s", calls=1, in_flow=False, via="tool") is None
    assert deliveries.handed("s") == []


def test_notes_accumulate_until_read_and_are_read_once() -> None:
    deliveries = Deliveries(Clock())
    for _ in range(MAX_NOTES + 2):
        deliveries.add(item(deliveries, "notification"))
    assert deliveries.unread("s") == MAX_NOTES
    assert len(deliveries.take_notes("s")) == MAX_NOTES
    assert deliveries.take_notes("s") == []
    assert deliveries.unread("s") == 0


def test_an_offer_is_answered_once_and_other_sessions_keep_theirs() -> None:
    deliveries = Deliveries(Clock())
    mine, theirs = item(deliveries, "passive"), item(deliveries, "passive", session="t")
    deliveries.add(mine)
    deliveries.add(theirs)
    assert deliveries.answer(mine.id) == mine
    assert deliveries.answer(mine.id) is None
    assert deliveries.offers("t") == [theirs]


def test_silent_items_are_kept_but_never_handed_over() -> None:
    deliveries = Deliveries(Clock())
    deliveries.add(item(deliveries, "silent"))
    assert deliveries.take_active("s", calls=1, in_flow=False, via="tool") is None
    assert deliveries.unread("s") == 0
    assert deliveries.offers("s") == []
