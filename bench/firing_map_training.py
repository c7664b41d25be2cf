"""Learning the prompt map of thatch.decisions.prompt_map from labelled prompts.

The map ``A`` moves a prompt's vector to ``normalize(v + A v)`` before it is
compared with the matchers by cosine. It is learnt from situations with the
prompts a user types in them (tasks) and prompts that belong to no situation
(unrelated), by one loss over both: in each batch, every prompt's mapped
cosines to the batch's matchers, times ``scale``, are a softmax's logits
beside one more, ``scale * bar``, that stands for "no situation". A task's
target is its own matcher, an unrelated prompt's is that extra logit. So a
task is pulled above the bar and above the other matchers, and an unrelated
prompt below the bar of every matcher near it. Each batch holds its tasks'
matchers and, as hard negatives, matchers near its prompts by plain cosine.

An unrelated prompt is unrelated to the situations it was written against,
not to every situation: "fix the flaky checkout test" belongs to none of a
set of everyday preferences and to a coding one. So the training data come
in groups (one per training set) and an unrelated prompt is only pushed
away from the matchers of its own group; a task, from every other matcher.

``passage=True`` learns a second map for the matchers as well (scored as
``cosine(map_q(v), map_p(m))``); the shipped rule maps the prompt only, so the
storage search is unchanged. Plain numpy, Adam with a warm-up and a linear
decay, seeded: the same data give the same map.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float64]
Indices = npt.NDArray[np.int64]


@dataclass(frozen=True)
class TrainingSet:
    """Embedded training data: matchers passage-side, prompts query-side."""

    matchers: Matrix
    tasks: Matrix
    #: The row of ``matchers`` each task belongs to.
    situation: Indices
    unrelated: Matrix
    #: The group of each matcher and of each unrelated prompt (None: one group for all).
    matcher_group: Indices | None = None
    unrelated_group: Indices | None = None

    def groups(self) -> tuple[Indices, Indices]:
        """The group of each matcher and of each unrelated prompt."""
        if self.matcher_group is None or self.unrelated_group is None:
            return np.zeros(len(self.matchers), np.int64), np.zeros(len(self.unrelated), np.int64)
        return self.matcher_group, self.unrelated_group


@dataclass(frozen=True)
class Settings:
    """How the map is learnt (the defaults are the shipped map's)."""

    epochs: int = 3
    rate: float = 1e-3
    #: The cosine an unrelated prompt is pushed under (the "no situation" logit).
    bar: float = 0.4
    scale: float = 20.0
    batch: int = 32
    unrelated_per_batch: int = 16
    #: Matchers near each prompt (by plain cosine) added to its batch.
    hard_negatives: int = 2
    #: ``A = U V^T`` of this rank instead of a full matrix.
    rank: int | None = None
    #: Also learn a map of the matchers (not shipped: it needs the matchers' vectors).
    passage: bool = False
    #: Score with ``v + A v`` as it is, not at unit length (a bilinear form).
    unit_query: bool = True
    #: Score with ``m + B m`` as it is, not at unit length.
    unit_passage: bool = True
    seed: int = 7


@dataclass(frozen=True)
class Maps:
    """The learnt query map, and the passage map when one was learnt."""

    query: Matrix
    passage: Matrix | None = None
    unit_query: bool = True
    unit_passage: bool = True


def normalized(vectors: Matrix) -> Matrix:
    """Each row at unit length."""
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def apply(vectors: Matrix, matrix: Matrix | None, unit: bool = True) -> Matrix:
    """``normalize(v + A v)`` of each row (``v + A v`` unless ``unit``); rows as they are
    without a map."""
    if matrix is None:
        return vectors
    moved = vectors + vectors @ matrix.T
    return normalized(moved) if unit else moved


def scores(queries: Matrix, matchers: Matrix, maps: Maps | None) -> Matrix:
    """The score of every (prompt, matcher) pair after the maps: their cosine, or the
    bilinear form for a map learnt with ``unit_query=False``."""
    if maps is None:
        return queries @ matchers.T
    moved = apply(matchers, maps.passage, maps.unit_passage)
    return apply(queries, maps.query, maps.unit_query) @ moved.T


class _Adam:
    """Adam over a dict of arrays, its step size scheduled by the caller."""

    def __init__(self, params: dict[str, Matrix]) -> None:
        self.first = {name: np.zeros_like(value) for name, value in params.items()}
        self.second = {name: np.zeros_like(value) for name, value in params.items()}
        self.steps = 0

    def step(self, params: dict[str, Matrix], grads: dict[str, Matrix], rate: float) -> None:
        self.steps += 1
        for name, grad in grads.items():
            self.first[name] = 0.9 * self.first[name] + 0.1 * grad
            self.second[name] = 0.999 * self.second[name] + 0.001 * grad * grad
            first = self.first[name] / (1 - 0.9**self.steps)
            second = self.second[name] / (1 - 0.999**self.steps)
            params[name] -= rate * first / (np.sqrt(second) + 1e-8)


def _normalized_backward(grad: Matrix, unit: Matrix, norm: Matrix) -> Matrix:
    """The gradient through ``x / |x|`` (``unit`` = the output, ``norm`` = ``|x|``)."""
    return (grad - (grad * unit).sum(axis=1, keepdims=True) * unit) / norm


def _matrix(params: dict[str, Matrix], name: str) -> Matrix:
    if name in params:
        return params[name]
    return params[f"{name}_u"] @ params[f"{name}_v"].T


def train(
    data: TrainingSet,
    settings: Settings = Settings(),
    after_epoch: Callable[[int, Maps], None] | None = None,
) -> Maps:
    """Learn the map(s); ``after_epoch(epoch, maps)`` sees each epoch's result."""
    rng = np.random.default_rng(settings.seed)
    dim = data.matchers.shape[1]
    names = ["query", "passage"] if settings.passage else ["query"]
    params: dict[str, Matrix] = {}
    for name in names:
        if settings.rank is None:
            params[name] = np.zeros((dim, dim))
        else:
            params[f"{name}_u"] = rng.normal(0.0, 0.01, (dim, settings.rank))
            params[f"{name}_v"] = np.zeros((dim, settings.rank))
    adam = _Adam(params)
    # Hard negatives by plain cosine, fixed before training.
    nearest = np.argsort(-(data.tasks @ data.matchers.T), axis=1)
    near_task = nearest[:, : settings.hard_negatives + 4]
    matcher_group, unrelated_group = data.groups()
    # An unrelated prompt's hard negatives come from its own group only.
    own_group = unrelated_group[:, None] == matcher_group[None, :]
    unrelated_cosines = np.where(own_group, data.unrelated @ data.matchers.T, -np.inf)
    near_unrelated = np.argsort(-unrelated_cosines, axis=1)[:, :5]
    batches = len(data.tasks) // settings.batch
    total = settings.epochs * batches
    warm_up = max(1, total // 10)
    for epoch in range(settings.epochs):
        order = rng.permutation(len(data.tasks))
        unrelated_order = rng.permutation(len(data.unrelated))
        for b in range(batches):
            tasks = order[b * settings.batch : (b + 1) * settings.batch]
            first = (epoch * batches + b) * settings.unrelated_per_batch
            others = unrelated_order[
                np.arange(first, first + settings.unrelated_per_batch) % len(data.unrelated)
            ]
            grads = _batch_gradients(
                data, settings, params, tasks, others, near_task, near_unrelated, rng
            )
            done = adam.steps + 1
            rate = settings.rate * min(1.0, done / warm_up) * max(0.0, (total - done) / total)
            adam.step(params, grads, rate)
        if after_epoch is not None:
            after_epoch(epoch + 1, _maps(params, settings))
    return _maps(params, settings)


def _maps(params: dict[str, Matrix], settings: Settings) -> Maps:
    return Maps(
        query=_matrix(params, "query").copy(),
        passage=_matrix(params, "passage").copy() if settings.passage else None,
        unit_query=settings.unit_query,
        unit_passage=settings.unit_passage,
    )


def _batch_gradients(
    data: TrainingSet,
    settings: Settings,
    params: dict[str, Matrix],
    tasks: Indices,
    others: Indices,
    near_task: Matrix,
    near_unrelated: Matrix,
    rng: np.random.Generator,
) -> dict[str, Matrix]:
    """The loss's gradients on one batch, by name of parameter."""
    matchers = [int(m) for m in data.situation[tasks]]
    for task in tasks:
        pool = [int(j) for j in near_task[task] if j != data.situation[task]]
        matchers += [int(j) for j in rng.choice(pool, settings.hard_negatives, replace=False)]
    for other in others:
        picked = rng.choice(near_unrelated[other], settings.hard_negatives, replace=False)
        matchers += [int(j) for j in picked]
    matchers = list(dict.fromkeys(matchers))
    column = {m: c for c, m in enumerate(matchers)}
    prompts = np.concatenate([data.tasks[tasks], data.unrelated[others]])
    query_map = _matrix(params, "query")
    moved = prompts + prompts @ query_map.T
    moved_norm = np.linalg.norm(moved, axis=1, keepdims=True)
    mapped = moved / moved_norm if settings.unit_query else moved
    rows = data.matchers[matchers]
    if settings.passage:
        passage_map = _matrix(params, "passage")
        shifted = rows + rows @ passage_map.T
        shifted_norm = np.linalg.norm(shifted, axis=1, keepdims=True)
        targets_side = shifted / shifted_norm if settings.unit_passage else shifted
    else:
        targets_side = rows
    logits = settings.scale * mapped @ targets_side.T
    logits = np.concatenate([logits, np.full((len(prompts), 1), settings.scale * settings.bar)], 1)
    target = np.asarray([column[m] for m in data.situation[tasks]] + [len(matchers)] * len(others))
    # An unrelated prompt does not see the batch's matchers of other groups.
    matcher_group, unrelated_group = data.groups()
    other_group = unrelated_group[others][:, None] != matcher_group[matchers][None, :]
    logits[len(tasks) :, : len(matchers)][other_group] = -np.inf
    logits -= logits.max(axis=1, keepdims=True)
    softmax = np.exp(logits)
    softmax /= softmax.sum(axis=1, keepdims=True)
    d_logits = softmax
    d_logits[np.arange(len(prompts)), target] -= 1
    d_scores = settings.scale * d_logits[:, : len(matchers)] / len(prompts)
    d_mapped = d_scores @ targets_side
    d_moved = (
        _normalized_backward(d_mapped, mapped, moved_norm) if settings.unit_query else d_mapped
    )
    full = {"query": d_moved.T @ prompts}
    if settings.passage:
        d_targets = d_scores.T @ mapped
        d_shifted = (
            _normalized_backward(d_targets, targets_side, shifted_norm)
            if settings.unit_passage
            else d_targets
        )
        full["passage"] = d_shifted.T @ rows
    grads: dict[str, Matrix] = {}
    for name, grad in full.items():
        if name in params:
            grads[name] = grad
        else:
            grads[f"{name}_u"] = grad @ params[f"{name}_v"]
            grads[f"{name}_v"] = grad.T @ params[f"{name}_u"]
    return grads
