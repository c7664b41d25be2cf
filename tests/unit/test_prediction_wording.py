"""The wording rule that links paraphrases and keeps opposites apart (thatch.decisions.wording).

The rule's parts are tested on their own; the rule as a whole on a sample of
every kind of pair of bench/data/wording_pairs.jsonl and of the opposites of
the two held-out sets with the real model (bench/prediction_wording.py
measures all of them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from thatch.decisions.wording import (
    CONTRAST_COSINE,
    LINK_COSINE,
    SUBSET_COSINE,
    SWAP_COSINE,
    conflict,
    normalise,
    opposition,
    order_relation,
    undecided,
    why_not_linked,
)

DATA = Path(__file__).parents[2] / "bench" / "data"
ISSUE_EXAMPLE = (
    "handle error cases before the happy path",
    "deal with the error cases before the happy path",
)


def _rows(name: str) -> list[dict[str, str]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _sample(kind: str, name: str = "wording_pairs.jsonl") -> list[tuple[str, str]]:
    """Every fifth pair of ``kind``: each way of wording a pair (``how``) is in it."""
    return [(row["a"], row["b"]) for row in _rows(name) if row["kind"] == kind][::5]


def _firing_set_opposites() -> list[tuple[str, str]]:
    return [(row["a"], row["b"]) for row in _rows("decisions.jsonl") if row["kind"] == "opposite"]


def _never(first: str, second: str) -> float:
    raise AssertionError(f"no contrast needed for {first!r} / {second!r}")


# -- opposition: the polarity check -------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        ("Squash commits before merging.", "Do not squash commits before merging.", "negation"),
        ("Commit the lockfile.", "Never commit the lockfile.", "negation"),
        ("Indent with tabs.", "Indent with spaces.", "antonym tab/space"),
        ("Always run the tests first.", "Never run the tests first.", "negation"),
        ("Make the function synchronous.", "Make the function asynchronous.", "antonym"),
        ("Prefer composition over inheritance.", "Prefer inheritance over composition.", "order"),
        ("Use pnpm instead of npm.", "Use npm instead of pnpm.", "order"),
        (
            "Handle error cases before the happy path.",
            "Handle the happy path before the error cases.",
            "order",
        ),
        ("Fix the bug first, refactor afterwards.", "Refactor first, fix the bug later.", "order"),
        ("Keep lines at 88 characters.", "Keep lines at 100 characters.", "numbers"),
        (
            "Force push to feature branches when needed.",
            "Never force push, not even to feature branches.",
            "negation",
        ),
        ("Use pnpm.", "Use npm instead of pnpm.", "negation"),
        ("We use uv, not pip.", "We use pip, not uv.", "order"),
        ("Enable verbose output in CI.", "Turn off verbose output in CI.", "negation"),
        ("Show the full stack trace to users.", "Hide the stack trace from users.", "negation"),
        ("Sort keys in JSON output.", "Keep JSON keys in insertion order, unsorted.", "negation"),
        ("Make the fields nullable.", "Make the fields non-nullable.", "negation"),
        ("Use type hints in Python.", "Leave out type hints in Python.", "negation"),
        ("Ask before pushing to remote.", "Push to remote without asking.", "negation"),
    ],
)
def test_opposite_sides_are_found_with_their_reason(first: str, second: str, reason: str) -> None:
    found = opposition(first, second)
    assert found is not None
    assert found.startswith(reason)
    assert opposition(second, first) is not None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ISSUE_EXAMPLE,
        ("Use pnpm instead of npm.", "Install packages with pnpm, not npm."),
        ("Before the happy path, handle the error cases.", "Handle the error cases before it."),
        ("Prefer composition over inheritance.", "Favour composition to inheritance."),
        ("Never squash commits", "Never squash the commits."),
        ("Don't mock the database in tests.", "Tests should hit a real database, not a mock."),
        ("Prefer pytest fixtures to setUp methods.", "Use pytest fixtures rather than setUp."),
        ("I'd rather you used pathlib than os.path.", "Use pathlib instead of os.path."),
        ("If you don't mind, rebase instead of merging.", "Rebase rather than merging."),
        ("Return early instead of nesting ifs.", "Return early."),
        ("Pin the Node version to avoid surprises.", "Pin the Node version."),
        ("Don't add dependencies without asking.", "Ask before adding a dependency."),
        ("Delete dead code.", "Remove code that is never used."),
    ],
)
def test_the_same_side_in_other_words_is_no_opposition(first: str, second: str) -> None:
    assert opposition(first, second) is None


# -- order and qualifiers: opposites the other rules miss --------------------

#: The same things in the other order, or another thing qualified against this one.
ORDER_OPPOSITES = [
    ("Write the code, then the tests", "Write the tests, then the code", "order"),
    ("Deploy to staging, then production", "Deploy to production, then staging", "order"),
    ("Run the tests before pushing", "Push, then run the tests", "order"),
    ("Write the tests before the code", "Write the code, then the tests", "order"),
    ("Write the test first", "Write the code first, then the test", "order"),
    ("Lint, then test.", "Lint after testing.", "order"),
    ("After the review, merge.", "Merge, then ask for a review.", "order"),
    ("Fix it in this PR", "Fix it in a separate PR", "antonym this/separate"),
    ("Use the same branch.", "Use a different branch.", "antonym same/different"),
    ("Add it to the existing module.", "Add it to a new module.", "antonym new/existing"),
]


@pytest.mark.parametrize(("first", "second", "reason"), ORDER_OPPOSITES)
def test_the_other_order_or_qualifier_is_opposite(first: str, second: str, reason: str) -> None:
    assert opposition(first, second) == reason
    assert opposition(second, first) == reason
    assert why_not_linked(first, second, 0.999, _never) == f"opposite wording ({reason})"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Run the tests before pushing", "Run the tests, then push"),
        ("Run the tests before pushing", "Before pushing, run the tests"),
        ("Deploy to staging, then production", "Deploy to staging before production"),
        ("Write the tests before the code", "Write the tests first, then the code"),
        # "Y after X" is "X before Y": the order words are then no antonyms.
        ("Write the code, then the tests", "Write the tests after the code"),
        ("Write the tests before the code.", "Write the code after the tests."),
        ("After the review, merge.", "Merge after the review."),
        # A context clause is not one of the things ordered.
        (
            "When a test fails, read the whole log first.",
            "Read the whole log first when a test fails.",
        ),
    ],
)
def test_the_same_order_in_other_words_is_the_same(first: str, second: str) -> None:
    assert conflict(first, second) is None
    assert conflict(second, first) is None
    assert order_relation(first, second) in ("same", None)


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        ("Indent with spaces.", "Use 4 spaces for indentation.", "a number only one states: 4"),
        ("Keep lines at 88 characters.", "Keep lines at 88 or 100 characters.", "a number only"),
        # Tests before docs and code before tests: both may hold, or not.
        ("Write the tests before the docs.", "Write the code, then the tests.", "their orders"),
        ("Fix this bug in this PR.", "Fix this bug in a separate PR.", "a qualifier only one"),
    ],
)
def test_what_the_words_cannot_decide_is_not_linked(first: str, second: str, reason: str) -> None:
    assert opposition(first, second) is None
    found = undecided(first, second)
    assert found is not None
    assert found.startswith(reason)
    assert undecided(second, first) == found
    assert why_not_linked(first, second, 0.999, _never) == f"not safely the same ({found})"


def test_the_same_number_on_both_sides_decides_nothing() -> None:
    assert undecided("Use 4 spaces for indentation.", "Indent with 4 spaces.") is None


# -- why_not_linked: cosine, polarity, contrast -------------------------------


def test_below_the_link_cosine_nothing_is_linked() -> None:
    reason = why_not_linked(*ISSUE_EXAMPLE, LINK_COSINE - 0.01, _never)
    assert reason == f"cosine {LINK_COSINE - 0.01:.4f} is below {LINK_COSINE}"


def test_an_opposite_is_never_linked_however_close() -> None:
    reason = why_not_linked("Indent with tabs.", "Indent with spaces.", 0.999, _never)
    assert reason == "opposite wording (antonym tab/space)"


def test_one_word_put_for_another_is_never_linked() -> None:
    first, second = "Run make lint before pushing.", "Run make test before pushing."
    reason = why_not_linked(first, second, 0.999, _never)
    assert reason == "one word swapped ('lint' / 'test')"
    assert why_not_linked("Reply in British English.", "Reply in American English.", 0.9, _never)


def test_a_wider_rewording_needs_close_swapped_words() -> None:
    asked: list[tuple[str, str]] = []

    def contrast(value: float) -> Callable[[str, str], float]:
        def similarity(first: str, second: str) -> float:
            asked.append((first, second))
            return value

        return similarity

    first, second = (
        "Use dataclasses for plain records.",
        "Model simple data holders as dataclasses.",
    )
    reason = why_not_linked(first, second, SWAP_COSINE, contrast(CONTRAST_COSINE - 0.01))
    assert reason is not None
    assert reason.startswith("different words ('plain records' / 'model simple data holders'")
    assert why_not_linked(first, second, SWAP_COSINE, contrast(CONTRAST_COSINE)) is None
    assert asked == [("plain records", "model simple data holders")] * 2
    below = why_not_linked(first, second, SWAP_COSINE - 0.01, _never)
    assert below == f"cosine {SWAP_COSINE - 0.01:.4f} is below {SWAP_COSINE}"


def test_a_dropped_clause_needs_no_contrast() -> None:
    first = "Use tabs for indentation, as the rest of the repository does."
    assert why_not_linked(first, "Use tabs for indentation.", SUBSET_COSINE, _never) is None
    below = why_not_linked(first, "Use tabs for indentation.", SUBSET_COSINE - 0.01, _never)
    assert below == f"cosine {SUBSET_COSINE - 0.01:.4f} is below {SUBSET_COSINE}"


def test_the_statements_are_compared_as_normalised() -> None:
    asked: list[tuple[str, str]] = []

    def similarity(first: str, second: str) -> float:
        asked.append((first, second))
        return 0.9

    first, second = "Keep pull requests small.", "Open small PRs."
    assert normalise(second) == "open small pr."
    assert why_not_linked(first, second, LINK_COSINE, similarity) is None
    assert asked == [("keep pr small.", "open small pr.")]


# -- the rule with the real model, on the hand-written pairs ------------------


@pytest.fixture(scope="module")
def similarity(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, str], float]]:
    import thatch

    with thatch.open(home=tmp_path_factory.mktemp("wording-home")) as th:
        embedder = th.embedder

        def cosine(first: str, second: str) -> float:
            vectors = embedder.embed_passages([first, second])
            return float(vectors[0] @ vectors[1])

        yield cosine


def _verdict(first: str, second: str, similarity: Callable[[str, str], float]) -> str | None:
    return why_not_linked(first, second, similarity(first, second), similarity)


@pytest.mark.slow
def test_the_issue_s_paraphrase_is_linked(similarity: Callable[[str, str], float]) -> None:
    assert _verdict(*ISSUE_EXAMPLE, similarity) is None


HELD_OUT_OPPOSITES = _sample("opposite", "wording_pairs_heldout.jsonl") + _sample(
    "opposite", "wording_pairs_heldout2.jsonl"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("first", "second"), _sample("opposite") + _firing_set_opposites() + HELD_OUT_OPPOSITES
)
def test_opposites_are_never_linked(
    first: str, second: str, similarity: Callable[[str, str], float]
) -> None:
    assert _verdict(first, second, similarity) is not None
    assert _verdict(second, first, similarity) is not None


PARAPHRASES_LINKED = [
    pair
    for pair in _sample("paraphrase")
    # The sample's paraphrases the rule keeps apart with the default model
    # (bench/prediction_wording.py --misses): named as similar, not linked.
    if pair[0]
    not in {
        "Explain the why in comments, not the what.",
        # Cosine 0.34: linked only from a cosine floor of 0.3 (docs/benchmarks.md).
        "Don't add new dependencies without asking.",
        # 88 is a number only one states: not safely the same, named as similar.
        "Use Black's default line length.",
    }
]


@pytest.mark.slow
@pytest.mark.parametrize(("first", "second"), PARAPHRASES_LINKED)
def test_paraphrases_are_linked(
    first: str, second: str, similarity: Callable[[str, str], float]
) -> None:
    assert _verdict(first, second, similarity) is None
