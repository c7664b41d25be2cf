"""The question-worded firing set, bench/data/firing_questions.

Its figures are printed by bench/prediction_firing.py and bench/firing_learned.py
(``--data bench/data/firing_questions``). These checks need no model: the
files have the sizes and kinds the set's README declares, every question names
one of the set's preferences, and no text is shared with the sets the firing
benches fit on or test with.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"
FOLDER = DATA / "firing_questions"

#: The sizes bench/data/firing_questions/README.md declares.
SITUATIONS = 994
ABOUT = {
    "lookup": 99,
    "explain": 78,
    "run-show": 57,
    "chatter": 50,
    "status-meta": 50,
    "off-topic": 48,
}


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def texts(rows_: list[dict[str, object]]) -> set[str]:
    found = set()
    for row in rows_:
        for key in ("text", "matcher", "prediction"):
            if isinstance(row.get(key), str):
                found.add(str(row[key]).strip().lower())
        for task in row.get("tasks", []) or []:  # type: ignore[attr-defined]
            found.add(str(task).strip().lower())
    return found


def test_the_set_has_the_declared_sizes() -> None:
    situations = rows(FOLDER / "situations.jsonl")
    prompts = rows(FOLDER / "prompts.jsonl")
    assert len(situations) == SITUATIONS
    assert Counter(str(p["kind"]) for p in prompts) == {
        "task": SITUATIONS,
        "unrelated": sum(ABOUT.values()),
    }
    assert Counter(str(p["about"]) for p in prompts if p["kind"] == "unrelated") == ABOUT


def test_every_question_names_one_preference_and_each_preference_has_one() -> None:
    situations = rows(FOLDER / "situations.jsonl")
    prompts = rows(FOLDER / "prompts.jsonl")
    ids = [str(s["id"]) for s in situations]
    assert len(set(ids)) == len(ids)
    expected = [p["expect"] for p in prompts if p["kind"] == "task"]
    assert all(isinstance(e, list) and len(e) == 1 for e in expected)
    assert sorted(str(e[0]) for e in expected) == sorted(ids)  # type: ignore[index]
    assert all(p["expect"] == [] for p in prompts if p["kind"] == "unrelated")


def test_no_prompt_repeats_or_appears_in_the_other_firing_sets() -> None:
    situations = rows(FOLDER / "situations.jsonl")
    prompts = rows(FOLDER / "prompts.jsonl")
    matchers = [str(s["matcher"]).strip().lower() for s in situations]
    asked = [str(p["text"]).strip().lower() for p in prompts]
    assert len(set(matchers)) == len(matchers)
    assert len(set(asked)) == len(asked)
    others = texts(rows(DATA / "firing" / "situations.jsonl"))
    others |= texts(rows(DATA / "firing" / "prompts.jsonl"))
    for name in ("situations_a", "situations_b", "unrelated"):
        others |= texts(rows(DATA / "intent_training" / f"{name}.jsonl"))
    # Matchers may recur across sets (a situation is a situation); prompts may
    # not, since firing_learned.py fits on intent_training's prompts.
    assert not set(asked) & others
