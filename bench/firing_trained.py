"""Firing with a model trained for it: a work-or-not gate, or a prompt-and-matcher classifier.

Every earlier remedy scored a prompt by the cosine of a general-purpose
sentence model. This script fine-tunes all-MiniLM-L6-v2 (float32, the
sentence-transformers release) for the firing question itself, on
bench/data/intent_training only, and scores both firing sets, which no step
of the training sees:

    python bench/firing_trained.py --base DIR
        the gate: a classifier of the prompt alone, trained to tell the
        1,600 task prompts from the 900 prompts where nothing should fire.
        Cosine ranks the matchers; the gate's probability p is added to it
        (score = cosine + w * (p - 1)), so a prompt that is not work stays
        under the bar whatever words it shares with a preference.
    python bench/firing_trained.py --base DIR --model pair
        a cross-encoder over (prompt, matcher), trained on each task prompt's
        own matcher against its 4 nearest and 2 random other matchers, and on
        each unrelated prompt against its 5 nearest. It scores the 20 best
        matchers by cosine of each prompt.

DIR is a sentence-transformers folder of all-MiniLM-L6-v2 (modules.json,
config.json, model.safetensors, the tokenizer). thatch installs neither torch
nor transformers; run it with a Python that has both beside thatch-core
(docs/benchmarks.md, "A model trained for firing", says how the published
figures were made). Training is seeded; on 2 CPU cores the gate trains in
about 3 minutes, the pair model in about 15.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from data_sets import DATA, read_jsonl
from firing_measures import (
    FIRING_SETS,
    HEADER,
    SHOWN,
    FiringSet,
    Matrix,
    Rule,
    calibrate,
    embed_set,
    row,
)
from sentence_transformers_folder import SentenceTransformersEmbedder

TRAINING = DATA / "intent_training"
#: Weights of the gate's probability and the margins over the best matcher tried.
WEIGHTS = (0.25, 0.5, 1.0, 2.0)
MARGINS: tuple[float | None, ...] = (None, 0.03, 0.05, 0.10)
#: The gate's bars for the "gate, then cosine" rules.
BARS = (0.5, 0.8, 0.9, 0.95)
#: How many of a prompt's best matchers by cosine the pair model scores.
DEPTH = 20
SEED = 7

#: One training example: the prompt (with the matcher for the pair model) and its label.
Example = tuple[tuple[str, ...], float]


def libraries() -> tuple[Any, Any, Any]:
    """torch and the two transformers classes, or a clear exit naming the fix."""
    try:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
    except ImportError as exc:
        raise SystemExit(
            f"bench/firing_trained.py needs torch and transformers ({exc.name} is missing): "
            "run it with a Python that has both beside thatch-core"
        ) from exc
    return torch, AutoModelForSequenceClassification, AutoTokenizer


def training_situations() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The training set's 400 situations and its 900 prompts where nothing should fire."""
    situations = read_jsonl(TRAINING / "situations_a.jsonl")
    situations += read_jsonl(TRAINING / "situations_b.jsonl")
    return situations, read_jsonl(TRAINING / "unrelated.jsonl")


def gate_examples() -> list[Example]:
    """Each task prompt labelled 1, each unrelated prompt 0."""
    situations, unrelated = training_situations()
    tasks = [((str(task),), 1.0) for s in situations for task in s["tasks"]]  # type: ignore[attr-defined]
    return tasks + [((str(u["text"]),), 0.0) for u in unrelated]


def pair_examples(embedder: SentenceTransformersEmbedder, rng: random.Random) -> list[Example]:
    """(prompt, matcher) pairs: a task's own matcher 1, near and random other matchers 0."""
    situations, unrelated = training_situations()
    matchers = [str(s["matcher"]) for s in situations]
    vectors = embedder.embed_passages(matchers)
    examples: list[Example] = []
    for own, situation in enumerate(situations):
        for task in situation["tasks"]:  # type: ignore[attr-defined]
            near = [j for j in np.argsort(-(vectors @ embedder.embed_query(task))) if j != own]
            examples.append(((task, matchers[own]), 1.0))
            picked = near[:4] + rng.sample(near[4:], 2)
            examples += [((task, matchers[j]), 0.0) for j in picked]
    for prompt in unrelated:
        cosines = vectors @ embedder.embed_query(str(prompt["text"]))
        examples += [((str(prompt["text"]), matchers[j]), 0.0) for j in np.argsort(-cosines)[:5]]
    return examples


class Classifier:
    """MiniLM with a one-logit head, fine-tuned on examples of one or two texts."""

    def __init__(self, base: Path, max_length: int) -> None:
        self.torch, model_class, tokenizer_class = libraries()
        self.torch.manual_seed(SEED)
        self.tokenizer = tokenizer_class.from_pretrained(base)
        self.model = model_class.from_pretrained(base, num_labels=1)
        self.max_length = max_length

    def _logits(self, texts: Sequence[tuple[str, ...]]) -> Any:
        columns = list(zip(*texts, strict=True))
        encoded = self.tokenizer(
            *[list(column) for column in columns],
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        return self.model(**encoded).logits.squeeze(-1)

    def train(
        self, examples: list[Example], epochs: int, positive_weight: float, batch: int = 32
    ) -> None:
        """AdamW at 3e-5, a tenth of the steps warming up, then a linear decay to 0."""
        torch = self.torch
        steps = epochs * -(-len(examples) // batch)
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-5, weight_decay=0.01)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda s: min(1.0, s / max(1, steps // 10)) * max(0.0, (steps - s) / steps)
        )
        loss_of = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(positive_weight))
        self.model.train()
        started = time.perf_counter()
        for epoch in range(epochs):
            random.Random(SEED + epoch).shuffle(examples)
            for start in range(0, len(examples), batch):
                chunk = examples[start : start + batch]
                labels = torch.tensor([label for _, label in chunk])
                loss = loss_of(self._logits([texts for texts, _ in chunk]), labels)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                optimizer.zero_grad()
            print(f"epoch {epoch + 1}: {time.perf_counter() - started:.0f} s", flush=True)
        self.model.eval()

    def probabilities(self, texts: Sequence[tuple[str, ...]]) -> npt.NDArray[np.float32]:
        """The sigmoid of the logit of each example, in batches of 64."""
        with self.torch.no_grad():
            logits = [
                self._logits(texts[start : start + 64]).numpy()
                for start in range(0, len(texts), 64)
            ]
        joined = np.concatenate(logits) if logits else np.zeros(0)
        return (1 / (1 + np.exp(-joined))).astype(np.float32)


def gate_rules(cosines: Matrix, gate: npt.NDArray[np.float32]) -> list[Rule]:
    """Cosine plus the gate's weight, with margins, and cosine behind a bar on the gate."""
    p = gate[:, None]
    # cosine + w * (p - 1): the same order as cosine + w * p, shifted into the threshold grid.
    found = [
        Rule(
            f"cosine + {w:g} * gate" + ("" if m is None else f", margin {m:.2f}"),
            cosines + w * (p - 1),
            m,
        )
        for w in WEIGHTS
        for m in MARGINS
    ]
    for bar in BARS:
        behind = np.where(p >= bar, cosines, -1.0).astype(np.float32)
        found += [
            Rule(f"gate >= {bar:g}, then cosine", behind),
            Rule(f"gate >= {bar:g}, then cosine, margin 0.05", behind, 0.05),
        ]
    return found


def pair_scores(classifier: Classifier, data: FiringSet, cosines: Matrix) -> tuple[Matrix, Matrix]:
    """The pair model's probability on each prompt's DEPTH best matchers (0 elsewhere).

    Returns it and the cosines of the same candidates (-inf elsewhere), by which
    the shown lines may be ranked instead.
    """
    candidates = np.argsort(-cosines, axis=1)[:, :DEPTH]
    pairs = [(int(i), int(j)) for i in range(len(cosines)) for j in candidates[i]]
    texts = [(str(data.prompts[i]["text"]), str(data.situations[j]["matcher"])) for i, j in pairs]
    chances = classifier.probabilities(texts)
    scores = np.zeros_like(cosines)
    ranked = np.full_like(cosines, -np.inf)
    for (i, j), chance in zip(pairs, chances, strict=True):
        scores[i, j] = chance
        ranked[i, j] = cosines[i, j]
    return scores, ranked


def report(
    data: FiringSet, cosines: Matrix, ranked_by: Matrix, found: Sequence[Rule]
) -> tuple[float, float]:
    """Print each rule at its best threshold; the best fire and fire@5 within the goal."""
    print(HEADER)
    print(row("plain cosine", calibrate(data, cosines, Rule("plain cosine", cosines))))
    best_fire = best_shown = 0.0
    for rule in found:
        point = calibrate(data, ranked_by, rule)
        best_fire, best_shown = max(best_fire, point.fire), max(best_shown, point.fire5)
        print(row(rule.name, point))
    return best_fire, best_shown


def measure_set(
    folder: Path,
    embedder: SentenceTransformersEmbedder,
    score: Callable[[FiringSet, Matrix], tuple[Matrix, list[Rule]]],
) -> None:
    """Embed one firing set, score it with the trained model and print the table."""
    data = embed_set(embedder, folder)  # type: ignore[arg-type]
    cosines = data.queries @ data.matchers.T
    started = time.perf_counter()
    ranked_by, found = score(data, cosines)
    per_prompt = (time.perf_counter() - started) / len(data.prompts) * 1000
    print(f"\n{folder.name}: {len(data.prompts)} prompts, {per_prompt:.1f} ms each (batched)")
    best_fire, best_shown = report(data, cosines, ranked_by, found)
    print(f"best with false-fire <= 0.05: fire {best_fire:.3f}, fire@{SHOWN} {best_shown:.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    """Train the chosen model on the training set and print both firing sets' tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--base",
        type=Path,
        required=True,
        metavar="DIR",
        help="all-MiniLM-L6-v2 as a sentence-transformers folder",
    )
    parser.add_argument("--model", choices=("gate", "pair"), default="gate")
    args = parser.parse_args(argv)
    embedder = SentenceTransformersEmbedder(args.base)
    classifier = Classifier(args.base, max_length=64 if args.model == "gate" else 96)
    if args.model == "gate":
        examples = gate_examples()
        # Weighted so the 1,600 tasks and 900 unrelated prompts count alike.
        classifier.train(examples, epochs=3, positive_weight=900 / 1600)

        def score(data: FiringSet, cosines: Matrix) -> tuple[Matrix, list[Rule]]:
            gate = classifier.probabilities([(str(p["text"]),) for p in data.prompts])
            return cosines, gate_rules(cosines, gate)
    else:
        examples = pair_examples(embedder, random.Random(SEED))
        classifier.train(examples, epochs=2, positive_weight=2.0)

        def score(data: FiringSet, cosines: Matrix) -> tuple[Matrix, list[Rule]]:
            chances, ranked = pair_scores(classifier, data, cosines)
            found = [Rule("pair model", chances)]
            found += [Rule(f"pair model, margin {m:g}", chances, m) for m in (0.1, 0.3)]
            found += [
                Rule(f"cosine + {w:g} * pair model", cosines + w * (chances - 1))
                for w in (0.5, 1.0)
            ]
            return ranked, found

    print(
        f"{args.model} model: {len(examples)} training examples, "
        f"{sum(label for _, label in examples):.0f} positive"
    )
    for folder in FIRING_SETS:
        measure_set(folder, embedder, score)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
