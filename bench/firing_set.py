"""Generate the firing set in bench/data/firing from bench/firing_situations.py.

A deterministic generator (``random.Random(SEED)``): it numbers the
hand-written situations, fills the ``{func}``, ``{module}``, ``{file}`` and
``{thing}`` slots of the prompts from the vocabularies there, and writes

- ``situations.jsonl``: one preference per line, ``id``, ``category``,
  ``matcher`` (the situation as the agent records it) and ``prediction``;
- ``prompts.jsonl``: ``text``, ``kind`` and ``expect`` (the situation ids,
  empty for unrelated prompts). ``task``: the work as a user asks for it, where
  the preference of ``expect`` applies; ``oblique``: the problem only, with
  nothing of the situation's vocabulary; ``unrelated``: a question, look-up,
  run or chatter where no preference is a choice to make; ``unrelated_task``:
  a task no preference is about.

bench/prediction_firing.py measures the decision model's firing on it.

    uv run python bench/firing_set.py          # write the JSONL files
    uv run python bench/firing_set.py --check  # fail if they are stale
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence

from data_sets import DATA
from firing_situations import (
    FILES,
    FUNCS,
    MODULES,
    SITUATIONS,
    TASKS,
    THINGS,
    UNRELATED,
    UNRELATED_TASKS,
)

SEED = 3
FOLDER = DATA / "firing"

Row = dict[str, object]


def fill(template: str, rng: random.Random) -> str:
    """The template with each slot filled by a word of its vocabulary."""
    slots = {
        "func": rng.choice(FUNCS),
        "module": rng.choice(MODULES),
        "file": rng.choice(FILES),
        "thing": rng.choice(THINGS),
    }
    return template.format_map(slots)


def build() -> tuple[list[Row], list[Row]]:
    """The situation rows and the prompt rows: tasks, oblique, unrelated, unrelated tasks."""
    rng = random.Random(SEED)
    situations: list[Row] = []
    tasks: list[Row] = []
    oblique: list[Row] = []
    counts: dict[str, int] = {}
    for category, matcher, prediction, related in SITUATIONS:
        counts[category] = counts.get(category, 0) + 1
        ident = f"{category}-{counts[category]:02d}"
        situations.append(
            {"id": ident, "category": category, "matcher": matcher, "prediction": prediction}
        )
        tasks.append({"text": fill(TASKS[matcher], rng), "kind": "task", "expect": [ident]})
        for template in related:
            oblique.append({"text": fill(template, rng), "kind": "oblique", "expect": [ident]})
    unrelated: list[Row] = [
        {"text": fill(template, rng), "kind": "unrelated", "expect": []} for template in UNRELATED
    ]
    unrelated += [
        {"text": text, "kind": "unrelated_task", "expect": []} for text in UNRELATED_TASKS
    ]
    return situations, tasks + oblique + unrelated


def jsonl(rows: Sequence[Row]) -> str:
    """Rows as JSON Lines, keys in the order written."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def files() -> dict[str, str]:
    """File name -> the text the generator writes."""
    situations, prompts = build()
    return {"situations.jsonl": jsonl(situations), "prompts.jsonl": jsonl(prompts)}


def main(argv: Sequence[str] | None = None) -> int:
    """Write the files, or with ``--check`` report whether they are stale."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the files are stale")
    args = parser.parse_args(argv)
    stale = []
    for name, text in files().items():
        path = FOLDER / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            FOLDER.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({text.count(chr(10))} lines)")
    if stale:
        print(f"stale: {', '.join(stale)}; run uv run python bench/firing_set.py")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
