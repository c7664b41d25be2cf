"""Composition: ordering, the budget, short forms and the tier-3 fallback."""

from __future__ import annotations

import random

import pytest
from thatch.nudges.compose import compose
from thatch.plugin.nudge import Nudge

SEP = "\n\n"


def _nudge(
    source: str, size: int, *, tier: int = 2, priority: int = 0, short: int | None = None
) -> Nudge:
    return Nudge(
        source=source,
        text=source[0] * size,
        tier=tier,
        priority=priority,
        short_text=None if short is None else source[0].upper() * short,
    )


def _joined(nudges: list[Nudge], separator: str = SEP) -> str:
    return separator.join(n.text for n in nudges)


def test_orders_by_tier_then_priority_then_given_order() -> None:
    given = [
        _nudge("reminder", 5, tier=3),
        _nudge("low", 5, priority=1),
        _nudge("first-of-equals", 5, priority=7),
        _nudge("extraction", 5, tier=1, priority=100),
        _nudge("second-of-equals", 5, priority=7),
    ]
    chosen = compose(given, budget=1000)
    assert [n.source for n in chosen] == [
        "extraction",
        "first-of-equals",
        "second-of-equals",
        "low",
    ]


def test_separators_count_against_the_budget() -> None:
    given = [_nudge("a", 10), _nudge("b", 10)]
    assert [n.source for n in compose(given, budget=22)] == ["a", "b"]
    assert [n.source for n in compose(given, budget=21)] == ["a"]


def test_a_custom_separator_is_counted() -> None:
    given = [_nudge("a", 10), _nudge("b", 10)]
    assert len(compose(given, budget=20, separator="")) == 2
    assert len(compose(given, budget=24, separator="-----")) == 1


def test_short_text_stands_in_when_the_text_does_not_fit() -> None:
    chosen = compose([_nudge("big", 50, short=8)], budget=20)
    assert len(chosen) == 1
    assert chosen[0].text == "B" * 8
    assert chosen[0].source == "big"


def test_a_nudge_that_fits_in_neither_form_is_skipped_and_later_ones_still_tried() -> None:
    given = [_nudge("huge", 90, priority=9, short=60), _nudge("small", 30, priority=1)]
    assert [n.source for n in compose(given, budget=50)] == ["small"]


def test_tier_three_only_when_nothing_else_is_taken() -> None:
    reminder = _nudge("reminder", 10, tier=3)
    assert [n.source for n in compose([reminder, _nudge("recall", 10)], 100)] == ["recall"]
    # The tier-2 nudge exists but does not fit: the reminder takes its place.
    assert [n.source for n in compose([reminder, _nudge("recall", 200)], 100)] == ["reminder"]
    assert [n.source for n in compose([reminder], 100)] == ["reminder"]


def test_blank_texts_are_never_taken() -> None:
    blank = Nudge(source="blank", text="  ", priority=5)
    chosen = compose([blank, _nudge("reminder", 4, tier=3)], budget=100)
    assert [n.source for n in chosen] == ["reminder"]


@pytest.mark.parametrize("budget", [0, -5])
def test_no_budget_means_no_nudges(budget: int) -> None:
    assert compose([_nudge("a", 1), _nudge("r", 1, tier=3)], budget) == []


def test_accepts_any_iterable_once() -> None:
    chosen = compose((n for n in [_nudge("a", 3), _nudge("b", 3)]), budget=100)
    assert len(chosen) == 2


def _random_nudges(rng: random.Random) -> list[Nudge]:
    nudges = []
    for index in range(rng.randint(0, 8)):
        size = rng.randint(0, 400)
        short = rng.choice([None, rng.randint(0, 120)])
        nudges.append(
            Nudge(
                source=f"n{index}",
                text="x" * size,
                tier=rng.choice([1, 2, 2, 3]),
                priority=rng.randint(0, 3),
                short_text=None if short is None else "s" * short,
            )
        )
    return nudges


def _check(given: list[Nudge], budget: int, separator: str) -> None:
    chosen = compose(given, budget, separator)
    by_source = {n.source: n for n in given}

    # Never over the budget.
    assert len(_joined(chosen, separator)) <= budget

    # Each is one of the given nudges, whole or in its short form, never blank.
    for nudge in chosen:
        original = by_source[nudge.source]
        assert nudge.text.strip()
        assert nudge.text in (original.text, original.short_text)
        assert nudge.tier == original.tier
        assert nudge.priority == original.priority

    # Order: tier, then priority descending, then the order given.
    position = {n.source: i for i, n in enumerate(given)}
    keys = [(n.tier, -n.priority, position[n.source]) for n in chosen]
    assert keys == sorted(keys)

    # Tier 3 never comes with tier 1 or 2.
    tiers = {n.tier for n in chosen}
    assert not (3 in tiers and tiers & {1, 2})

    # Greedy: a skipped nudge fit in neither form at its turn, and the full
    # text was used whenever it fit.
    taken = {n.source for n in chosen}
    primary_taken = bool(tiers & {1, 2})
    used = 0
    count = 0
    for nudge in sorted(given, key=lambda n: (n.tier, -n.priority, position[n.source])):
        cost = len(separator) if count else 0
        fits = [
            t
            for t in (nudge.text, nudge.short_text)
            if t is not None and t.strip() and used + cost + len(t) <= budget
        ]
        if nudge.source in taken:
            text = next(n.text for n in chosen if n.source == nudge.source)
            assert text == fits[0]
            used += cost + len(text)
            count += 1
        elif nudge.tier != 3 or not primary_taken:
            assert fits == []


def test_random_sets_respect_every_rule() -> None:
    rng = random.Random(20261130)
    for _ in range(2000):
        given = _random_nudges(rng)
        budget = rng.randint(0, 1200)
        separator = rng.choice(["\n\n", "\n", "", "\n---\n"])
        _check(given, budget, separator)
