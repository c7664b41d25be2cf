"""The firing set embedded, and what one firing rule does on it (shared by the firing benches).

See bench/prediction_firing.py for what each figure means.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from data_sets import DATA, read_jsonl
from thatch.plugin.embedder import Embedder

#: The most lines the prompt nudge shows (thatch.builtin.decisions.DECISION_LIMIT).
SHOWN = 5
GOAL_FALSE_FIRE = 0.05
#: The chosen rule may show at most this many other situations per task prompt.
MAX_WRONG = 0.5
GRID = np.round(np.arange(-0.5, 1.5001, 0.01), 2)
#: The two committed firing sets: imperative tasks, and work asked as questions.
FIRING_SETS = (DATA / "firing", DATA / "firing_questions")

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class FiringSet:
    """The set, embedded: matchers, predictions, prompts and which prompt expects what."""

    situations: list[dict[str, object]]
    prompts: list[dict[str, object]]
    matchers: Matrix
    predictions: Matrix
    queries: Matrix
    #: Index of the expected situation of each related prompt, -1 for unrelated ones.
    expect: npt.NDArray[np.int64]
    kinds: npt.NDArray[np.str_]


@dataclass(frozen=True)
class Rule:
    """A way of firing: a score per (prompt, matcher) and an optional margin over the best."""

    name: str
    score: Matrix
    margin: float | None = None
    #: The cosines the fired matchers are shown by (and the margin taken on), when the
    #: rule moves them (the learnt prompt map); None: those passed to :func:`measure`.
    cosines: Matrix | None = None


@dataclass(frozen=True)
class Figures:
    """What one rule at one threshold does on the set."""

    threshold: float
    fire: float
    fire5: float
    false_fire: float
    ff_ask: float
    ff_task: float
    oblique: float
    lines: float
    wrong: float


def embed_set(embedder: Embedder, folder: Path) -> FiringSet:
    """Read and embed the set (prompts query-side, matchers and predictions passage-side)."""
    situations = read_jsonl(folder / "situations.jsonl")
    prompts = read_jsonl(folder / "prompts.jsonl")
    index = {str(s["id"]): i for i, s in enumerate(situations)}
    expect = np.asarray(
        [index[str(p["expect"][0])] if p["expect"] else -1 for p in prompts]  # type: ignore[index]
    )
    return FiringSet(
        situations=situations,
        prompts=prompts,
        matchers=embedder.embed_passages([str(s["matcher"]) for s in situations]),
        predictions=embedder.embed_passages([str(s["prediction"]) for s in situations]),
        queries=np.stack([embedder.embed_query(str(p["text"])) for p in prompts]),
        expect=expect,
        kinds=np.asarray([str(p["kind"]) for p in prompts]),
    )


def rate(hits: npt.NDArray[np.bool_]) -> float:
    """The share of ``hits`` that are true; 0 for none (a set without that kind of prompt)."""
    return float(np.mean(hits)) if len(hits) else 0.0


def measure(data: FiringSet, cosines: Matrix, rule: Rule, threshold: float) -> Figures:
    """The figures of ``rule`` at ``threshold``; shown matchers are ranked by cosine."""
    if rule.cosines is not None:
        cosines = rule.cosines
    fired = rule.score >= threshold
    if rule.margin is not None:
        best = np.where(fired, cosines, -np.inf).max(axis=1, keepdims=True)
        fired &= cosines >= best - rule.margin
    ranked = np.where(fired, cosines, -np.inf)
    # Rank of each matcher among the fired ones of its prompt (0 = best).
    order = np.argsort(-ranked, axis=1)
    rank = np.empty_like(order)
    rows = np.arange(len(order))[:, None]
    rank[rows, order] = np.arange(order.shape[1])[None, :]
    shown = fired & (rank < SHOWN)

    def share(kind: str, table: npt.NDArray[np.bool_]) -> float:
        picked = np.flatnonzero(data.kinds == kind)
        return float(np.mean(table[picked, data.expect[picked]])) if len(picked) else 0.0

    unrelated = np.char.startswith(data.kinds, "unrelated")
    any_fired = fired.any(axis=1)
    tasks = np.flatnonzero(data.kinds == "task")
    lines = shown[tasks].sum(axis=1)
    right = shown[tasks, data.expect[tasks]]
    return Figures(
        threshold=threshold,
        fire=share("task", fired),
        fire5=share("task", shown),
        false_fire=rate(any_fired[unrelated]),
        ff_ask=rate(any_fired[data.kinds == "unrelated"]),
        ff_task=rate(any_fired[data.kinds == "unrelated_task"]),
        oblique=share("oblique", shown),
        lines=float(np.mean(lines)),
        wrong=float(np.mean(lines - right)),
    )


def calibrate(data: FiringSet, cosines: Matrix, rule: Rule) -> Figures:
    """The rule at its best threshold: most fire@5 with false-fire <= the goal."""
    best: Figures | None = None
    for threshold in GRID.tolist():
        point = measure(data, cosines, rule, threshold)
        if point.false_fire <= GOAL_FALSE_FIRE and (best is None or point.fire5 >= best.fire5):
            best = point
    assert best is not None, "no threshold keeps false-fire under the goal"
    return best


HEADER = (
    f"{'rule':<48} {'thresh':>6} {'fire':>6} {'fire@5':>6} {'ff':>6} {'ff-ask':>6} "
    f"{'ff-task':>7} {'obliq':>6} {'lines':>5} {'wrong':>5}"
)


def row(name: str, point: Figures) -> str:
    """One line of the table."""
    return (
        f"{name:<48} {point.threshold:>6.2f} {point.fire:>6.3f} {point.fire5:>6.3f} "
        f"{point.false_fire:>6.3f} {point.ff_ask:>6.3f} {point.ff_task:>7.3f} "
        f"{point.oblique:>6.3f} {point.lines:>5.2f} {point.wrong:>5.2f}"
    )
