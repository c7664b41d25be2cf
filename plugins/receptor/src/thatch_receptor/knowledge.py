"""The probe's world in the daemon: the project's memories and earlier sessions' observations.

For a problem (:class:`thatch_receptor.problem.Problem`) the world is the
memories recall finds for its query — by meaning and by words, as the agent
would find them — and the observations of other sessions closest to it in
meaning. Memories the session was shown lately enter as shown, so the probe
merges them: the agent already has them. :func:`probe_world` runs the probe
(:data:`thatch_receptor.probe.DEFAULT_PROBE` unless ``[receptor] probe`` says
otherwise) and returns its result with the memories it names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import numpy as np

from thatch_receptor.probe import ProbeNode, ProbeResult, make_probe

if TYPE_CHECKING:
    import numpy.typing as npt
    from thatch.plugin import Memory, Runtime

    from thatch_receptor.observations import ObservationStore
    from thatch_receptor.problem import Problem

#: Memories recall brings into the world.
RECALLED = 8
#: Observations of other sessions brought in, the closest in meaning.
OBSERVED = 8
#: Observations of the project scanned for those closest.
OBSERVATION_POOL = 400
#: Prompts back a memory shown to the session counts as known.
SHOWN_WINDOW = 50


@attrs.frozen
class Found:
    """A probe's result, with the memories behind its memory nodes."""

    result: ProbeResult
    memories: dict[str, Memory]

    def best_memory(self) -> Memory | None:
        """The first resonant memory (the one an active delivery shows), or None."""
        for node in self.result.resonant:
            if node.kind == "memory":
                return self.memories[node.id]
        return None

    def resonant_texts(self, limit: int = 3) -> list[str]:
        """The resonant nodes as a note lists them, best first."""
        return [
            f'memory "{self.memories[node.id].label}": {_short(self.memories[node.id].content)}'
            if node.kind == "memory"
            else f"earlier: {node.text}"
            for node in self.result.resonant[:limit]
        ]


def probe_world(
    app: Runtime,
    problem: Problem,
    *,
    session_id: str,
    cwd: str | None,
    store: ObservationStore | None,
    method: str,
) -> Found:
    """Build the world around ``problem`` and run the probe ``method`` on it."""
    th = app.project(cwd)
    embedder = th.embedder
    hits = th.recall(problem.query, limit=RECALLED, record=False)
    shown = app.sessions.shown_recently(session_id, [hit.memory.id for hit in hits], SHOWN_WINDOW)
    memories = {f"m{hit.memory.id}": hit.memory for hit in hits}
    nodes = [
        ProbeNode(
            id=node_id,
            text=f"{memory.label}: {memory.content}",
            kind="memory",
            shown=memory.id in shown,
        )
        for node_id, memory in memories.items()
    ]
    if store is not None:
        nodes += _observation_nodes(
            store, th.repo_store, session_id, embedder.embed_query(problem.query)
        )
    probe = make_probe(method, embedder.embed_passages)
    if not nodes:
        empty = ProbeResult(method=probe.name, merged=(), resonant=(), loner=())
        return Found(result=empty, memories={})
    return Found(result=probe.run(problem.texts, nodes), memories=memories)


def _observation_nodes(
    store: ObservationStore,
    repo: str | None,
    session_id: str,
    query: npt.NDArray[np.float32],
) -> list[ProbeNode]:
    """The other sessions' observations closest to ``query`` (of the same dimension)."""
    observations, vectors = store.world(repo, limit=OBSERVATION_POOL, exclude_session=session_id)
    if not observations or vectors.shape[1:] != query.shape:
        return []
    closest = np.argsort(-(vectors @ query))[:OBSERVED]
    return [
        ProbeNode(id=f"o{observations[i].id}", text=observations[i].text, kind="observation")
        for i in closest
    ]


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
