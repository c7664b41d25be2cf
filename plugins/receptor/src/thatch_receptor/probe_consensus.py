"""The consensus simulation of the predictive probe: energy spreading from the problem.

A reading of the origin's simulation with the problem injected as a node
(which the origin designed and never built):

1. **Merge.** A node at ``merge_cosine`` or more of the problem or of a shown
   node, or shown itself, is merged before the simulation runs (as the
   origin merges at a fixed cosine).
2. **Graph.** Every node, the problem included, links to its ``neighbours``
   nearest nodes by cosine (links are made symmetric); a link weighs its
   cosine, clipped at zero, raised to ``sharpness`` so close links dominate.
3. **Rounds.** The problem node holds energy 1; every other node starts at 0.
   Each of ``rounds`` rounds, every link carries energy with probability
   ``1 - dropout`` (the seeded noise of a run), and a node's energy becomes
   ``(1 - decay) * energy + spread * (weighted mean of its live neighbours'
   energy)``, clipped to [0, 1]. Merged nodes take part (they relay energy)
   but are never classified otherwise.
4. **Votes.** ``runs`` runs, each seeded from ``seed``; a node survives a run
   when its final energy is ``survive`` or more, and passes when it survived
   ``votes`` runs or more. Passing nodes are resonant, by mean final energy,
   best first; one at ``merge_cosine`` of a stronger passing node is merged
   into it; at most ``limit`` are kept, the rest and every node that did not
   pass are loners.

The same seed gives the same result.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from thatch_receptor.probe import (
    MERGE_COSINE,
    RESONANT_LIMIT,
    Embed,
    ProbeNode,
    ProbeResult,
    classify,
    embed_world,
)


@dataclass
class ConsensusProbe:
    """Energy spread from the problem over a top-k cosine graph, votes over seeded runs.

    ``merge_cosine`` (0.85): near-duplicate. ``neighbours`` (5): links per node
    (the origin's top 5). ``sharpness`` (3): power of the cosine a link weighs.
    ``rounds`` (36): rounds per run (the origin harvests at tick 36).
    ``decay`` (0.1): energy lost per round. ``spread`` (0.8): weight of the
    neighbours' mean energy against a node's own, per round. ``dropout`` (0.3): chance a
    link carries nothing in a round. ``runs`` (10) and ``votes`` (4): a node
    passes when it survives 4 of 10 runs (the origin's rule). ``survive``
    (0.3): final energy that survives a run. ``limit`` (3): resonant nodes kept.
    ``seed`` (13): seed of the first run; run r uses ``seed + r``.
    """

    embed: Embed
    merge_cosine: float = MERGE_COSINE
    neighbours: int = 5
    sharpness: float = 3.0
    rounds: int = 36
    decay: float = 0.1
    spread: float = 0.8
    dropout: float = 0.3
    ground: float = 0.05
    runs: int = 10
    votes: int = 4
    survive: float = 0.3
    limit: int = RESONANT_LIMIT
    seed: int = 13
    name: str = "consensus"

    def __post_init__(self) -> None:
        if self.ground <= 0.0:
            raise ValueError(
                f"ground must be above 0 (got {self.ground}): a node with no live link "
                "would divide by zero"
            )
        if not 0 < self.votes <= self.runs:
            raise ValueError(f"votes must be 1 to runs ({self.runs}), got {self.votes}")

    def run(self, problem: Sequence[str], world: Sequence[ProbeNode]) -> ProbeResult:
        """Classify every node of ``world`` against ``problem``."""
        start = time.perf_counter()
        embedded = embed_world(self.embed, problem, world)
        merged = embedded.merged_mask(self.merge_cosine)
        # The problem is the last node of the graph.
        vectors = np.vstack([embedded.vectors, embedded.problem[None, :]])
        weights = self.links(vectors)
        energies = np.stack([self.simulate(weights, self.seed + r) for r in range(self.runs)])
        passed = ((energies >= self.survive).sum(axis=0) >= self.votes) & ~merged
        mean = energies.mean(axis=0)
        ranked = self.rank(embedded.vectors, mean, passed, merged)
        return classify(self.name, embedded, merged, ranked, mean, time.perf_counter() - start)

    def rank(
        self,
        vectors: npt.NDArray[np.float32],
        mean: npt.NDArray[np.float64],
        passed: npt.NDArray[np.bool_],
        merged: npt.NDArray[np.bool_],
    ) -> list[int]:
        """Passing nodes by mean energy, within the limit; marks their near-duplicates merged."""
        ranked: list[int] = []
        for i in np.argsort(-mean, kind="stable").tolist():
            if not passed[i]:
                continue
            if ranked and float((vectors[ranked] @ vectors[i]).max()) >= self.merge_cosine:
                merged[i] = True
            elif len(ranked) < self.limit:
                ranked.append(i)
        return ranked

    def links(self, vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """The symmetric weight matrix of the top-``neighbours`` cosine graph."""
        cosines = np.clip(vectors @ vectors.T, 0.0, 1.0).astype(np.float64)
        np.fill_diagonal(cosines, 0.0)
        k = min(self.neighbours, len(vectors) - 1)
        nearest = np.argsort(-cosines, axis=1, kind="stable")[:, :k]
        linked = np.zeros_like(cosines, dtype=bool)
        np.put_along_axis(linked, nearest, True, axis=1)
        linked |= linked.T
        return np.where(linked, cosines**self.sharpness, 0.0)

    def simulate(self, weights: npt.NDArray[np.float64], seed: int) -> npt.NDArray[np.float64]:
        """One run: the final energy of every node but the problem (the last row)."""
        rng = np.random.default_rng(seed)
        energy = np.zeros(len(weights))
        energy[-1] = 1.0
        for _ in range(self.rounds):
            live = weights * (rng.random(weights.shape) >= self.dropout)
            incoming = (live @ energy) / (live.sum(axis=1) + self.ground)
            mixed = (1.0 - self.spread) * energy + self.spread * incoming
            energy = (1.0 - self.decay) * mixed
            energy[-1] = 1.0
        return energy[:-1]
