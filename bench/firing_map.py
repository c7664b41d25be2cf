"""The learnt firing maps: trained on labelled prompts, scored on three firing sets they never saw.

The maps (thatch.decisions.prompt_map) move a prompt's and a matcher's vectors
before their cosine is taken. They are learnt (bench/firing_map_training.py)
from two training sets written apart from every firing set:

- bench/data/intent_training: 400 situations of a developer's work, four
  prompts each, and 900 prompts where nothing should fire;
- bench/data/everyday_training: 577 situations of everyday life, about four
  prompts each, and 486 prompts of a coding agent's work.

and scored on bench/data/firing, firing_questions and firing_everyday, which
no step of the training sees: training texts within cosine 0.95 of a
held-out text are left out, and the script says how many. For each set it
prints what the ranking allows (the situation first, among the five shown),
and plain cosine and the maps side by side: at the shipped firing threshold
(the model's calibrated ``prediction`` threshold, 0.40 for the default
model), and each at its own best threshold with false-fire <= 0.05
(docs/benchmarks.md, "Decision-model firing", says what each figure means).
The ``mixed`` column is fire@5 at the shipped threshold when every task
prompt has one of its set's questions joined on ("..., and what is a bloom
filter"): a look-up asked in the same breath should not take a prompt out of
its situation. The training data come in two groups, one a folder: an
unrelated prompt is pushed away only from its own group's matchers
(bench/firing_map_training.py says why).

    uv run python bench/firing_map.py              # the shipped settings (~3 min)
    uv run python bench/firing_map.py --variants   # every variant tried (~15 min)
    uv run python bench/firing_map.py --write      # store the maps for the model

``--write`` saves the two matrices (float16, one .npz file) in
core/src/thatch/decisions/prompt_maps and lists them in that folder's
index.json under the model's id.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import thatch
from cached_embedder import CachedEmbedder
from data_sets import DATA, ROOT, read_jsonl
from firing_map_training import Maps, Settings, TrainingSet, scores, train
from firing_measures import FIRING_SETS, Figures, FiringSet, Rule, calibrate, embed_set, measure
from thatch.decisions import prompt_map
from thatch.plugin.embedder import Embedder

EVERYDAY_SET = DATA / "firing_everyday"
TEST_SETS = (*FIRING_SETS, EVERYDAY_SET)
CODING_TRAINING = DATA / "intent_training"
EVERYDAY_TRAINING = DATA / "everyday_training"
MAPS_FOLDER = ROOT / "core" / "src" / "thatch" / "decisions" / prompt_map.FOLDER
SOURCE = "bench/firing_map.py"
#: Training texts at this cosine or nearer to a held-out text are left out.
TOO_NEAR = 0.95
#: Seeds the pairing of task prompts with look-ups, in training and in the mixed test.
MIXED_SEED = 11
#: The share of training task prompts also learnt with a look-up joined on (a variant).
MIXED_SHARE = 0.3

#: The shipped maps: the prompt's and the matchers'.
SHIPPED = Settings(passage=True)
#: Every variant measured before the shipped one was chosen: (name, training sets, settings).
VARIANTS: tuple[tuple[str, str, Settings], ...] = (
    ("shipped (both maps, 3 epochs, rate 1e-3)", "both", SHIPPED),
    ("both maps, 30% with a look-up joined on", "mixed", SHIPPED),
    ("both maps, matchers not at unit length", "both", Settings(passage=True, unit_passage=False)),
    ("a map of the prompt only", "both", Settings()),
    ("prompt only, 1 epoch", "both", Settings(epochs=1)),
    ("prompt only, 5 epochs", "both", Settings(epochs=5)),
    ("prompt only, rate 3e-4", "both", Settings(rate=3e-4)),
    ("prompt only, rate 2e-3", "both", Settings(rate=2e-3)),
    ("prompt only, seed 1", "both", Settings(seed=1)),
    ("prompt only, seed 2", "both", Settings(seed=2)),
    ("prompt only, rank 32", "both", Settings(rank=32)),
    ("prompt only, bar 0.5", "both", Settings(bar=0.5)),
    ("prompt only, not unit length", "both", Settings(unit_query=False)),
    ("prompt only, coding set alone", "coding", Settings()),
    ("both maps, seed 1", "both", Settings(passage=True, seed=1)),
    ("both maps, 5 epochs", "both", Settings(passage=True, epochs=5)),
    ("both maps, coding set alone", "coding", SHIPPED),
)


def read_training(folder: Path) -> tuple[list[dict[str, object]], list[str]]:
    """The situations (with their ``tasks``) and unrelated prompts of one training folder."""
    situations: list[dict[str, object]] = []
    for path in sorted(folder.glob("situations_*.jsonl")):
        situations += read_jsonl(path)
    return situations, [str(row["text"]) for row in read_jsonl(folder / "unrelated.jsonl")]


def mixed(task: str, question: str) -> str:
    """A task prompt with a look-up asked in the same breath, as users type them."""
    return f"{task.rstrip(' .?!')}, and {question[0].lower()}{question[1:]}"


def embed_training(
    embedder: Embedder,
    folders: Sequence[Path],
    held_out: Sequence[FiringSet],
    mixed_share: float = 0.0,
) -> TrainingSet:
    """The training folders embedded as thatch embeds them (matchers passage-side, prompts
    query-side), one group a folder, less what comes too near the held-out sets.

    A situation whose matcher is within :data:`TOO_NEAR` of a held-out set's
    matcher goes with its prompts ("Writing React components" is in the
    coding training set and in both coding firing sets), and so does every
    prompt within it of a held-out prompt ("what is a bloom filter"), so
    that the scores are of situations and prompts the maps never saw.

    With ``mixed_share``, that share of the task prompts is added again with
    one of its group's unrelated prompts joined on (:func:`mixed`), still
    labelled with the task's situation: a look-up in the same prompt does not
    take the prompt out of its situation.
    """
    situations: list[dict[str, object]] = []
    unrelated: list[str] = []
    matcher_group: list[int] = []
    unrelated_group: list[int] = []
    for group, folder in enumerate(folders):
        folder_situations, folder_unrelated = read_training(folder)
        situations += folder_situations
        unrelated += folder_unrelated
        matcher_group += [group] * len(folder_situations)
        unrelated_group += [group] * len(folder_unrelated)
    test_matchers = np.concatenate([data.matchers for data in held_out])
    test_prompts = np.concatenate([data.queries for data in held_out])
    matchers = embedder.embed_passages([str(s["matcher"]) for s in situations])
    kept = (matchers @ test_matchers.T).max(axis=1) < TOO_NEAR
    tasks = [
        (i, str(task))
        for i, s in enumerate(situations)
        if kept[i]
        for task in s["tasks"]  # type: ignore[attr-defined]
    ]
    rng = random.Random(MIXED_SEED)
    by_group = {
        group: [text for text, g in zip(unrelated, unrelated_group, strict=True) if g == group]
        for group in set(unrelated_group)
    }
    tasks += [
        (i, mixed(task, rng.choice(by_group[matcher_group[i]])))
        for i, task in tasks
        if rng.random() < mixed_share
    ]
    task_vectors = np.stack([embedder.embed_query(text) for _, text in tasks])
    unrelated_vectors = np.stack([embedder.embed_query(text) for text in unrelated])
    far_tasks = (task_vectors @ test_prompts.T).max(axis=1) < TOO_NEAR
    far_unrelated = (unrelated_vectors @ test_prompts.T).max(axis=1) < TOO_NEAR
    # Situation rows renumbered to the kept ones.
    row = np.cumsum(kept) - 1
    print(
        f"training from {', '.join(folder.name for folder in folders)}: left out "
        f"{int((~kept).sum())} situations, {int((~far_tasks).sum())} task prompts and "
        f"{int((~far_unrelated).sum())} unrelated prompts within cosine {TOO_NEAR} of the "
        "held-out sets"
    )
    return TrainingSet(
        matchers=matchers[kept].astype(float),
        tasks=task_vectors[far_tasks].astype(float),
        situation=row[np.asarray([i for i, _ in tasks])][far_tasks],
        unrelated=unrelated_vectors[far_unrelated].astype(float),
        matcher_group=np.asarray(matcher_group)[kept],
        unrelated_group=np.asarray(unrelated_group)[far_unrelated],
    )


def ranking(data: FiringSet, score: np.ndarray) -> tuple[float, float]:
    """The share of task prompts whose situation is first, and among the five shown."""
    tasks = np.flatnonzero(data.kinds == "task")
    own = score[tasks, data.expect[tasks]]
    above = (score[tasks] > own[:, None]).sum(axis=1)
    return float(np.mean(above == 0)), float(np.mean(above < 5))


def figures(data: FiringSet, maps: Maps | None, shipped: float) -> tuple[Figures, Figures]:
    """At the shipped threshold, and at the best threshold with false-fire <= 0.05."""
    score = scores(data.queries.astype(float), data.matchers.astype(float), maps).astype(np.float32)
    rule = Rule("", score)
    return measure(data, score, rule, shipped), calibrate(data, score, rule)


def with_lookups(embedder: Embedder, data: FiringSet) -> FiringSet:
    """The set with each task prompt joined to one of its unrelated questions (:func:`mixed`):
    the prompt still belongs to the task's situation."""
    rng = random.Random(MIXED_SEED)
    questions = [str(p["text"]) for p in data.prompts if p["kind"] == "unrelated"]
    queries = data.queries.copy()
    for row, prompt in enumerate(data.prompts):
        if prompt["kind"] == "task":
            queries[row] = embedder.embed_query(mixed(str(prompt["text"]), rng.choice(questions)))
    return replace(data, queries=queries)


HEADER = (
    f"{'set':<17} {'rule':<38} {'first':>5} {'top5':>5} | {'fire@5':>6} {'ff':>5} {'wrong':>5}"
    f" {'mixed':>5} at the shipped bar | {'bar':>4} {'fire@5':>6} {'ff':>5} {'wrong':>5}"
    " with ff <= 0.05"
)


def report_row(
    set_name: str, name: str, sets: tuple[FiringSet, FiringSet], maps: Maps | None, bar: float
) -> float:
    """Print one row of a set and its :func:`with_lookups` twin; returns the fire@5 at the best
    threshold."""
    data, mixed_data = sets
    score = scores(data.queries.astype(float), data.matchers.astype(float), maps)
    first, top5 = ranking(data, score)
    at_bar, best = figures(data, maps, bar)
    with_lookup, _ = figures(mixed_data, maps, bar)
    print(
        f"{set_name:<17} {name:<38} {first:>5.3f} {top5:>5.3f} | {at_bar.fire5:>6.3f} "
        f"{at_bar.false_fire:>5.3f} {at_bar.wrong:>5.2f} {with_lookup.fire5:>5.3f}"
        f"                    | {best.threshold:>4.2f} {best.fire5:>6.3f} "
        f"{best.false_fire:>5.3f} {best.wrong:>5.2f}"
    )
    return best.fire5


def write(model_id: str, maps: Maps) -> Path:
    """Save the maps of ``model_id`` and list them in the index, keeping other models'."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", model_id) + ".npz"
    target = MAPS_FOLDER / name
    arrays = {"query": maps.query.astype(np.float16)}
    if maps.passage is not None:
        arrays["passage"] = maps.passage.astype(np.float16)
    np.savez(target, **arrays)
    index_path = MAPS_FOLDER / prompt_map.INDEX_FILE
    table = json.loads(index_path.read_text(encoding="utf-8")) if index_path.exists() else {}
    table[model_id] = {"file": name, "source": SOURCE}
    index_path.write_text(json.dumps(dict(sorted(table.items())), indent=1) + "\n", "utf-8")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """Embed, train, score the held-out sets; optionally every variant, and write."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", action="store_true", help="train and score every variant")
    parser.add_argument("--write", action="store_true", help="store the maps for the model")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        home = stack.enter_context(tempfile.TemporaryDirectory(prefix="thatch-firing-map-"))
        th = stack.enter_context(thatch.open(home=home))
        embedder = CachedEmbedder(th.embedder)
        bar = th.thresholds().prediction
        sets = {folder.name: embed_set(embedder, folder) for folder in TEST_SETS}
        print(f"model {embedder.model_id}")
        held_out = list(sets.values())
        twins = {name: (data, with_lookups(embedder, data)) for name, data in sets.items()}
        both_folders = (CODING_TRAINING, EVERYDAY_TRAINING)
        training = {
            "both": embed_training(embedder, both_folders, held_out),
            "mixed": embed_training(embedder, both_folders, held_out, MIXED_SHARE),
            "coding": embed_training(embedder, (CODING_TRAINING,), held_out),
        }
        both = training["both"]
        print(
            f"training: {len(both.matchers)} situations, {len(both.tasks)} task prompts, "
            f"{len(both.unrelated)} unrelated prompts; held out: "
            + ", ".join(
                f"{name} ({len(data.situations)} preferences, {len(data.prompts)} prompts)"
                for name, data in sets.items()
            )
        )
        shipped = train(both, SHIPPED)
        print(f"\nshipped bar {bar:.2f}\n{HEADER}")
        for name, pair in twins.items():
            report_row(name, "plain cosine", pair, None, bar)
            report_row(name, "learnt maps", pair, shipped, bar)
        if args.variants:
            print(f"\nvariants (each trained afresh)\n{HEADER}")
            for variant, which, settings in VARIANTS:
                maps = train(training[which], replace(settings))
                for name, pair in twins.items():
                    report_row(name, variant[:38], pair, maps, bar)
        if args.write:
            print(f"\nwrote {write(embedder.model_id, shipped)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
