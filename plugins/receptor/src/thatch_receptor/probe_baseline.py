"""The cosine baseline of the predictive probe: dedup, leader clustering, medoids.

The method the origin's own pre-registered test found better than its
consensus simulation, and far cheaper:

1. **Dedup.** A node at ``merge_cosine`` or more of the problem, of a shown
   node, or shown itself is merged (already known or already shown); so is a
   node at ``merge_cosine`` of a more relevant node that is kept.
2. **Leader clustering.** The other nodes, most relevant first, each join the
   first leader they reach at ``cluster_cosine`` or more, else lead a cluster
   of their own.
3. **Medoids.** Each cluster offers two nodes: its most relevant member and
   its medoid (the member with the highest summed cosine to the others, what
   the cluster typically says: another angle on the same topic).
4. **Relevance.** Those offered at ``resonant_cosine`` or more of the problem
   are resonant, best first, at most ``limit``; every other node is a loner.

Parameters and their defaults are documented on :class:`BaselineProbe`.
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
class BaselineProbe:
    """Cosine dedup plus greedy leader clustering and medoids; relevance by cosine.

    ``merge_cosine`` (0.85): near-duplicate. ``cluster_cosine`` (0.5): joins a
    leader's cluster (the origin's test used 0.5). ``resonant_cosine`` (0.4):
    related enough to show. ``limit`` (3): resonant nodes kept.
    """

    embed: Embed
    merge_cosine: float = MERGE_COSINE
    cluster_cosine: float = 0.5
    resonant_cosine: float = 0.4
    limit: int = RESONANT_LIMIT
    name: str = "baseline"

    def run(self, problem: Sequence[str], world: Sequence[ProbeNode]) -> ProbeResult:
        """Classify every node of ``world`` against ``problem``."""
        start = time.perf_counter()
        embedded = embed_world(self.embed, problem, world)
        relevance = embedded.relevance
        merged = embedded.merged_mask(self.merge_cosine)
        merged |= duplicates(embedded.vectors, relevance, ~merged, self.merge_cosine)
        clusters = leader_clusters(embedded.vectors, relevance, ~merged, self.cluster_cosine)
        offered = {
            i for members in clusters for i in (members[0], medoid(embedded.vectors, members))
        }
        ranked = [
            i
            for i in np.argsort(-relevance, kind="stable").tolist()
            if i in offered and relevance[i] >= self.resonant_cosine
        ][: self.limit]
        return classify(self.name, embedded, merged, ranked, relevance, time.perf_counter() - start)


def duplicates(
    vectors: npt.NDArray[np.float32],
    relevance: npt.NDArray[np.float32],
    candidates: npt.NDArray[np.bool_],
    threshold: float,
) -> npt.NDArray[np.bool_]:
    """A mask of the candidates at ``threshold`` of a more relevant candidate that is kept."""
    mask = np.zeros(len(vectors), dtype=bool)
    kept: list[int] = []
    for i in np.argsort(-relevance, kind="stable").tolist():
        if not candidates[i]:
            continue
        if kept and float((vectors[kept] @ vectors[i]).max()) >= threshold:
            mask[i] = True
        else:
            kept.append(i)
    return mask


def leader_clusters(
    vectors: npt.NDArray[np.float32],
    relevance: npt.NDArray[np.float32],
    candidates: npt.NDArray[np.bool_],
    threshold: float,
) -> list[list[int]]:
    """Greedy leader clustering of the candidate rows, most relevant first."""
    leaders: list[int] = []
    clusters: list[list[int]] = []
    for i in np.argsort(-relevance, kind="stable").tolist():
        if not candidates[i]:
            continue
        if leaders:
            cosines = vectors[leaders] @ vectors[i]
            best = int(np.argmax(cosines))
            if cosines[best] >= threshold:
                clusters[best].append(i)
                continue
        leaders.append(i)
        clusters.append([i])
    return clusters


def medoid(vectors: npt.NDArray[np.float32], members: Sequence[int]) -> int:
    """The member with the highest summed cosine to the cluster's members."""
    block = vectors[list(members)]
    return members[int(np.argmax((block @ block.T).sum(axis=1)))]
