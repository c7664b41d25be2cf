"""Stage 1 of the receptor on real runs: observations, then the insights found in them.

Reads the 40 mini-swe-agent runs of ``../shared/data/receptor-sample``,
turns every tool call into an observation
(``thatch_receptor.observations.observations_of``; the repository is the
instance id's ``owner__name`` part, each step a nominal 10 s, the runs one
after another), embeds the texts with the real model, stores them in an
``ObservationStore`` in a throw-away folder, reads them back with
``for_clustering`` and runs ``thatch_receptor.insights.find_insights`` over
all of them at once, as the daemon's scheduled analysis would. Prints:

- the observations, the embedding time and the store's write and read time;
- the insights per run by kind, with each run's outcome, and the totals;
- ``--examples`` insight texts of each kind;
- the time of ``find_insights`` on the sample, and on ``--scale`` times as
  many observations (the sample's vectors repeated with a little noise,
  under new session names), for the cost at thousands of observations.

    uv run python bench/receptor_insights.py [--examples 5] [--cosine 0.85]
        [--min-failures 2] [--min-sessions 3] [--scale 10]
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import attrs
import numpy as np
import numpy.typing as npt
import thatch
from receptor_sample import SAMPLE, Run, read_runs
from thatch.plugin import Embedder
from thatch_receptor.insights import (
    CLUSTER_COSINE,
    MIN_FAILURES,
    MIN_SESSIONS,
    Insight,
    find_insights,
)
from thatch_receptor.observations import Observation, ObservationStore, observations_of

#: Nominal seconds between two steps of a run (the files hold no times).
STEP_SECONDS = 10.0


def repo_of(run_id: str) -> str:
    """``django__django-13033`` -> ``django/django``."""
    return run_id.rsplit("-", 1)[0].replace("__", "/", 1)


def run_observations(runs: Sequence[Run]) -> list[Observation]:
    """Every run's observations, the runs one after another in time."""
    found: list[Observation] = []
    clock = 0.0
    for run in runs:
        for event in run.events:
            clock += STEP_SECONDS
            found += observations_of(event, repo=repo_of(run.run_id), at=clock)
        clock += 3600.0
    return found


def scaled(
    observations: Sequence[Observation], vectors: npt.NDArray[np.float32], times: int
) -> tuple[list[Observation], npt.NDArray[np.float32]]:
    """``times`` copies of the sample under new session names, vectors with a little noise."""
    rng = np.random.default_rng(7)
    span = max(o.at for o in observations) + 3600.0
    many = [
        attrs.evolve(o, session_id=f"{o.session_id}#{copy}", at=o.at + copy * span)
        for copy in range(times)
        for o in observations
    ]
    noisy = np.tile(vectors, (times, 1)) + rng.normal(0, 0.01, (times * len(vectors), 1)).astype(
        np.float32
    )
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    return many, noisy.astype(np.float32)


def embedded(
    embedder: Embedder, observations: Sequence[Observation], cache: Path | None
) -> tuple[npt.NDArray[np.float32], float]:
    """The observations' vectors and the seconds embedding them took (0: read from ``cache``)."""
    if cache is not None and cache.is_file():
        vectors = np.load(cache)
        if len(vectors) == len(observations):
            return vectors, 0.0
    embedder.embed_passages(["warm up"])
    start = time.perf_counter()
    vectors = embedder.embed_passages([o.text for o in observations])
    seconds = time.perf_counter() - start
    if cache is not None:
        np.save(cache, vectors)
    return vectors, seconds


def print_runs(runs: Sequence[Run], insights: Sequence[Insight]) -> None:
    """One line per run: its outcome, observations and insights by kind."""
    per_run: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for insight in insights:
        for session in insight.session_ids:
            per_run[session][insight.kind] += 1
    print(f"\n{'run':40}{'resolved':>10}{'steps':>7}{'struggle':>10}{'recurring':>11}")
    for run in runs:
        counts = per_run[run.run_id]
        print(
            f"{run.run_id:40}{run.resolved!s:>10}{len(run.events):>7}"
            f"{counts['struggle']:>10}{counts['recurring']:>11}"
        )
    by_kind = collections.Counter(i.kind for i in insights)
    with_struggle = {s for i in insights if i.kind == "struggle" for s in i.session_ids}
    resolved = {r.run_id for r in runs if r.resolved}
    print(
        f"\ninsights: {by_kind['struggle']} struggle, {by_kind['recurring']} recurring; "
        f"runs with a struggle insight: {len(with_struggle)} of {len(runs)} "
        f"({len(with_struggle & resolved)} resolved, {len(with_struggle - resolved)} unresolved)"
    )


def print_examples(insights: Sequence[Insight], count: int) -> None:
    """The first ``count`` texts of each kind."""
    for kind in ("struggle", "recurring"):
        chosen = [i for i in insights if i.kind == kind][:count]
        print(f"\n{kind} examples ({len(chosen)}):")
        for insight in chosen:
            print(f"- [{insight.repo}, {len(insight.session_ids)} session(s)] {insight.text}")


def main(argv: Sequence[str] | None = None) -> int:
    """Build the observations, find the insights, print the table and the times."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SAMPLE, help="the sample folder")
    parser.add_argument("--examples", type=int, default=5, help="texts shown per kind (5)")
    parser.add_argument("--cosine", type=float, default=CLUSTER_COSINE, help="cluster cosine")
    parser.add_argument("--min-failures", type=int, default=MIN_FAILURES)
    parser.add_argument("--min-sessions", type=int, default=MIN_SESSIONS)
    parser.add_argument("--scale", type=int, default=10, help="copies for the cost at scale")
    parser.add_argument(
        "--vectors", type=Path, help="an .npy file to reuse the vectors from (written if absent)"
    )
    args = parser.parse_args(argv)
    options = {
        "cluster_cosine": args.cosine,
        "min_failures": args.min_failures,
        "min_sessions": args.min_sessions,
    }

    runs = read_runs(args.data)
    observations = run_observations(runs)
    with tempfile.TemporaryDirectory(prefix="thatch-bench-") as home:
        with thatch.open(home=home) as th:
            model_id = th.embedder.model_id
            vectors, embed_s = embedded(th.embedder, observations, args.vectors)
        store = ObservationStore(Path(home) / "observations.db")
        start = time.perf_counter()
        store.add(observations, vectors)
        write_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        stored, stored_vectors = store.for_clustering(None, None)
        read_ms = (time.perf_counter() - start) * 1000
        store.close()
    print(
        f"model {model_id}; {len(runs)} runs, {len(observations)} observations; "
        f"embedding {embed_s:.1f} s (not below); "
        f"store: add {write_ms:.0f} ms, for_clustering {read_ms:.0f} ms"
    )

    start = time.perf_counter()
    insights = find_insights(stored, stored_vectors, now=0.0, **options)
    sample_ms = (time.perf_counter() - start) * 1000
    print_runs(runs, insights)
    print_examples(insights, args.examples)

    many, many_vectors = scaled(stored, stored_vectors, args.scale)
    start = time.perf_counter()
    find_insights(many, many_vectors, now=0.0, **options)
    scale_ms = (time.perf_counter() - start) * 1000
    print(
        f"\nfind_insights: {sample_ms:.0f} ms on {len(stored)} observations; "
        f"{scale_ms:.0f} ms on {len(many)} ({args.scale}x); parameters {options}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
