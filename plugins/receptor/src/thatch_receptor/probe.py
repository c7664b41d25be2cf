"""The predictive probe (stage 2): what accumulated knowledge says about the current problem.

On a trigger the receptor builds a small world from what it has accumulated
(memories, and observations: the short texts of past tool events), injects the
current problem (recent failing commands with their error text, searches,
paths) as one more node, and sorts every other node into one of three lists:

- **merged**: already known or already shown — a near-duplicate of the problem
  itself, something the agent was shown, a near-duplicate of something shown,
  or a near-duplicate of a node that is kept;
- **resonant**: related to the problem and new — worth the agent's attention,
  best first, at most ``limit`` of them;
- **loner**: irrelevant now.

Two methods share the :class:`Probe` interface: the consensus simulation of
:mod:`thatch_receptor.probe_consensus` and the cosine baseline of
:mod:`thatch_receptor.probe_baseline`. :data:`DEFAULT_PROBE` names the one the
receptor uses; ``bench/receptor_probe.py`` measures both on a labelled set
(tests/data/receptor/probe_set.jsonl) and is why it is the one it is.

The embedder is injected as an :data:`Embed` callable (texts to unit vectors),
so the probe needs no model of its own: tests pass
:class:`thatch.testing.WordHashEmbedder`'s ``embed_passages``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

#: Texts to unit vectors, one row per text (an embedder's ``embed_passages``).
Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]
Kind = Literal["memory", "observation"]
Verdict = Literal["merged", "resonant", "loner"]

#: The method the receptor runs. bench/receptor_probe.py measured the
#: simulation ahead of the baseline on the labelled set (41 problems, 235
#: nodes, default model): the solving memory ranked first 0.54 against 0.44
#: (the one item an active delivery shows), recall 0.71 against 0.63,
#: precision of resonant 0.35 against 0.25; ranked first stays 0.44 for every
#: baseline variant swept. It costs about ten times more (about 90 ms against
#: 10 ms a probe, both far below the 3 s of embedding the world's texts).
DEFAULT_PROBE = "consensus"
#: Cosine at or above which two texts say the same thing (the problem, a shown
#: node). On the labelled set with the default model, 0.85 merges 84 % of the
#: near-duplicates and no solving memory; 0.8 merges 94 % and one solution.
MERGE_COSINE = 0.85
#: Resonant nodes kept, best first; the rest become loners (delivery shows one at a time).
RESONANT_LIMIT = 3


@dataclass(frozen=True)
class ProbeNode:
    """One piece of accumulated knowledge in the probe's world."""

    id: str
    text: str
    kind: Kind = "memory"
    #: Whether the agent was already shown it (it can only be merged).
    shown: bool = False


@dataclass(frozen=True)
class ProbeResult:
    """Every node of the world, classified; ``resonant`` best first."""

    method: str
    merged: tuple[ProbeNode, ...]
    resonant: tuple[ProbeNode, ...]
    loner: tuple[ProbeNode, ...]
    #: Each node's score by the method (cosine to the problem, or vote share).
    scores: dict[str, float] = field(default_factory=dict)
    #: Wall time of the probe, embeddings included.
    seconds: float = 0.0

    def verdict(self, node_id: str) -> Verdict | None:
        """Which list holds the node ``node_id`` (None when it was not in the world)."""
        lists: tuple[tuple[Verdict, tuple[ProbeNode, ...]], ...] = (
            ("merged", self.merged),
            ("resonant", self.resonant),
            ("loner", self.loner),
        )
        for name, nodes in lists:
            if any(node.id == node_id for node in nodes):
                return name
        return None


class Probe(Protocol):
    """A method that classifies a world's nodes against the current problem."""

    name: str

    def run(self, problem: Sequence[str], world: Sequence[ProbeNode]) -> ProbeResult:
        """Classify every node of ``world`` against ``problem`` (one text or a few)."""
        ...


@dataclass(frozen=True)
class World:
    """The embedded world: the problem's vector, the nodes and their vectors."""

    problem: npt.NDArray[np.float32]
    nodes: tuple[ProbeNode, ...]
    vectors: npt.NDArray[np.float32]

    @property
    def relevance(self) -> npt.NDArray[np.float32]:
        """Each node's cosine to the problem."""
        return self.vectors @ self.problem

    def merged_mask(self, merge_cosine: float) -> npt.NDArray[np.bool_]:
        """Nodes already known: shown, or at ``merge_cosine`` of the problem or of a shown node."""
        shown = np.array([node.shown for node in self.nodes], dtype=bool)
        known = self.relevance >= merge_cosine
        if shown.any():
            known |= (self.vectors @ self.vectors[shown].T).max(axis=1) >= merge_cosine
        mask: npt.NDArray[np.bool_] = known | shown
        return mask


def embed_world(embed: Embed, problem: Sequence[str], world: Sequence[ProbeNode]) -> World:
    """Embed the problem texts (their mean, normalized, is the problem node) and the nodes."""
    if not problem:
        raise ValueError("the probe needs a problem: pass at least one text")
    vectors = np.asarray(embed([*problem, *(node.text for node in world)]), dtype=np.float32)
    centre = vectors[: len(problem)].mean(axis=0)
    norm = float(np.linalg.norm(centre))
    unit = centre / norm if norm > 0.0 else centre
    return World(problem=unit, nodes=tuple(world), vectors=vectors[len(problem) :])


def classify(
    method: str,
    world: World,
    merged: npt.NDArray[np.bool_],
    ranked: Sequence[int],
    scores: npt.NDArray[np.float32],
    seconds: float,
) -> ProbeResult:
    """A result from the merged mask and the resonant node indices (best first)."""
    resonant = set(ranked)
    return ProbeResult(
        method=method,
        merged=tuple(node for i, node in enumerate(world.nodes) if merged[i]),
        resonant=tuple(world.nodes[i] for i in ranked),
        loner=tuple(
            node for i, node in enumerate(world.nodes) if not merged[i] and i not in resonant
        ),
        scores={node.id: float(scores[i]) for i, node in enumerate(world.nodes)},
        seconds=seconds,
    )


def make_probe(name: str, embed: Embed) -> Probe:
    """The probe method called ``name`` ("baseline" or "consensus") with its default parameters."""
    from thatch_receptor.probe_baseline import BaselineProbe
    from thatch_receptor.probe_consensus import ConsensusProbe

    methods: dict[str, Callable[[Embed], Probe]] = {
        "baseline": BaselineProbe,
        "consensus": ConsensusProbe,
    }
    if name not in methods:
        raise ValueError(f"unknown probe method {name!r}: use one of {', '.join(methods)}")
    return methods[name](embed)
