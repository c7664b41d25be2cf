"""Every firing rule the firing benches compare, and what the model's ranking allows.

Shared by bench/prediction_firing.py (which calibrates the shipped rule) and
bench/firing_models.py (which runs the same rules on another embedding model).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
from firing_measures import SHOWN, Figures, FiringSet, Matrix, Rule, calibrate
from thatch.decisions import firing
from thatch.decisions.prompt_map import FiringMaps


class QueryEmbedder(Protocol):
    """Anything that embeds a prompt query-side: thatch's embedder or a bench stand-in."""

    embed_query: Callable[[str], Matrix]


#: The intent weights and margins of the grid the shipped rule is chosen from.
WEIGHTS = (0.5, 1.0, 1.5, 2.0)
MARGINS: tuple[float | None, ...] = (None, 0.03, 0.05, 0.10)


def mapped_cosines(data: FiringSet, learnt: FiringMaps) -> Matrix:
    """Every prompt's cosine to every matcher after the learnt maps: what
    thatch.decisions.prompt_map computes one pair at a time, for the whole set at once."""
    prompts = np.stack([learnt.prompt(query) for query in data.queries])
    matchers = data.matchers
    if learnt.passage is not None:
        moved = matchers + matchers @ learnt.passage.T
        matchers = moved / np.linalg.norm(moved, axis=1, keepdims=True)
    return (prompts @ matchers.T).astype(np.float32)


def rules(
    data: FiringSet, axis: Matrix, background: Matrix, learnt: FiringMaps | None = None
) -> list[Rule]:
    """Every rule tried, plain cosine first; the learnt maps last, when there are some."""
    cosines = data.queries @ data.matchers.T
    statements = data.queries @ data.predictions.T
    to_background = background @ data.matchers.T
    mean, spread = to_background.mean(axis=0), to_background.std(axis=0)
    p95 = np.percentile(to_background, 95, axis=0)
    intent = (data.queries @ axis)[:, None]
    # The prompt's cosine to the matcher and to the prediction statement, joined.
    joined = {"max": np.maximum(cosines, statements), "mean": (cosines + statements) / 2}
    found = [
        Rule("plain cosine", cosines),
        Rule("hubness: cosine - matcher's background mean", cosines - mean),
        Rule("hubness: cosine - matcher's background p95", cosines - p95),
        # Scaled by 10 so the grid of 0.01 covers z-scores up to 15.
        Rule("hubness: z-score / 10", (cosines - mean) / spread / 10),
        *(
            Rule(f"{name}(cosine to matcher, to prediction)", score)
            for name, score in joined.items()
        ),
    ]
    found += [Rule(f"margin over runner-up {m:.2f}", cosines, m) for m in (0.03, 0.05, 0.10)]
    # The prompt's side of hubness: a prompt near many matchers at once is
    # generic, one near a single matcher is about it.
    best_five = -np.sort(-cosines, axis=1)[:, :5].mean(axis=1, keepdims=True)
    found += [
        Rule("prompt hubness: cosine - half its 5 best's mean", cosines - 0.5 * best_five),
        Rule(
            "prompt hubness: cosine - its 90th percentile",
            cosines - np.percentile(cosines, 90, axis=1, keepdims=True),
        ),
    ]
    found += [
        Rule(f"intent penalty only, weight {w:g}", cosines + w * np.minimum(intent, 0))
        for w in (1.0, 2.0)
    ]
    found += [
        Rule(
            f"intent weight {w:g}" + ("" if m is None else f", margin {m:.2f}"),
            cosines + w * intent,
            m,
        )
        for w in WEIGHTS
        for m in MARGINS
    ]
    found.append(
        Rule("intent weight 1, margin 0.05, - background p95", cosines - p95 + intent, 0.05)
    )
    # The prediction statement beside the intent shift (2026-12-02).
    found += [
        Rule(f"{name}(matcher, prediction) + intent {w:g}, margin 0.03", score + w * intent, 0.03)
        for name, score in joined.items()
        for w in (1.5, 2.0)
    ]
    if learnt is not None:
        moved = mapped_cosines(data, learnt)
        found.append(Rule("learnt maps (the default)", moved, cosines=moved))
    return found


def ranking(data: FiringSet, cosines: Matrix) -> tuple[float, float]:
    """What the model's ranking allows, whatever rule decides which prompts fire.

    The share of task prompts whose situation is the first, and among the
    first five, of all matchers by cosine.
    """
    tasks = np.flatnonzero(data.kinds == "task")
    expected = cosines[tasks, data.expect[tasks]]
    above = (cosines[tasks] > expected[:, None]).sum(axis=1)
    return float(np.mean(above == 0)), float(np.mean(above < SHOWN))


def oracles(data: FiringSet, cosines: Matrix) -> list[tuple[str, Figures]]:
    """Two oracles at their best threshold, plain cosine otherwise.

    One knows every unrelated question (it never fires), one every unrelated
    prompt. No rule that shows the best fired matchers by cosine (as
    :func:`measure` and the engine do) does better than the second.
    """
    silenced = {
        "oracle: no unrelated question fires": data.kinds == "unrelated",
        "oracle: no unrelated prompt fires": np.char.startswith(data.kinds, "unrelated"),
    }
    found = []
    for name, rows in silenced.items():
        score = np.where(rows[:, None], -np.inf, cosines).astype(np.float32)
        found.append((name, calibrate(data, cosines, Rule(name, score))))
    return found


def shipped_axis(embedder: QueryEmbedder) -> tuple[Matrix, Matrix]:
    """The shipped background prompts embedded, and the intent axis fitted on them.

    What calibrating a model does (thatch.decisions.firing), for whichever
    model ``embedder`` runs.
    """
    labelled = firing.background()
    background = np.stack([embedder.embed_query(text) for _, text in labelled])
    return background, firing.intent_axis(background, [label for label, _ in labelled])
