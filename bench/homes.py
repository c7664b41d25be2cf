"""The runtime benchmarks' homes: a project folder, a clean environment, memories and matchers.

hook_latency, cold_start, mcp_recall and daemon_memory fill one throw-away
home for one project with ``fill_home``; the others take only the project
and the environment. What only ``fill_home`` needs (thatch, the decision
engine) is imported inside it, so those scripts start without it.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from data_sets import DATA, read_jsonl

if TYPE_CHECKING:
    from thatch.api import Thatch

#: The project the runtime benchmarks work in: a git folder whose origin names the store.
PROJECT_REMOTE = "git@github.com:acme/web.git"
PROJECT_STORE = "acme/web"
MEMORY_BATCH = 5_000


def append_config(home: str | os.PathLike[str], table: str, keys: Mapping[str, str]) -> None:
    """Add ``[table]`` with ``keys`` (name -> TOML value) to the config file of ``home``."""
    from thatch.paths import Paths

    config_file = Paths.resolve(Path(home), {}).config_file
    config_file.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{name} = {value}\n" for name, value in keys.items())
    with config_file.open("a", encoding="utf-8") as out:
        out.write(f"\n[{table}]\n{lines}")


def bench_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment for ``home``: no THATCH_* variable of the user's leaks in."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("THATCH_")}
    return {**env, "THATCH_HOME": str(home), **extra}


def make_project(folder: Path, remote: str = PROJECT_REMOTE) -> Path:
    """An empty git repository at ``folder`` whose ``origin`` gives it a store."""
    folder.mkdir(parents=True)
    for args in (("init", "-q", "-b", "main"), ("remote", "add", "origin", remote)):
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)
    return folder


def load_bench_memories(th: Thatch) -> int:
    """The real memories of bench/data/memories.jsonl, embedded by the model; returns how many."""
    from thatch.memory.writer import MemoryInput

    rows = read_jsonl(DATA / "memories.jsonl")
    th.remember_many(
        MemoryInput(label=str(r["label"]), content=str(r["content"]), store=str(r["store"]))
        for r in rows
    )
    return len(rows)


def write_synthetic_memories(
    th: Thatch, store: str, count: int, rng: np.random.Generator, start: int = 0
) -> None:
    """``count`` synthetic memories in ``store`` (one in ten in global), straight to storage.

    As in recall_latency.py: random unit vectors of the real model's id and
    dimension, and Zipf-distributed sentences so full-text search has work.
    Embedding them would take minutes (about 40 such sentences a second on
    two cores).
    """
    from synthetic import sentences, unit_vectors, vocabulary, write_memories

    model, dim = th.embedder.model_id, th.embedder.dim
    vocab = vocabulary(DATA, 3000, rng)
    for offset in range(0, count, MEMORY_BATCH):
        size = min(MEMORY_BATCH, count - offset)
        vectors = unit_vectors(size, dim, rng)
        texts = sentences(vocab, size, rng)
        write_memories(th.memory_storage, store, start + offset, vectors, texts, model)


def load_bench_decisions(th: Thatch, store: str) -> int:
    """The real set of bench/data/decisions.jsonl through the decision model; returns matchers."""
    from decision_set import load, read_set

    situations, _, _ = read_set(DATA / "decisions.jsonl")
    return load(th.decisions.model, situations, store).matchers


def write_synthetic_matchers(th: Thatch, store: str, count: int, rng: np.random.Generator) -> None:
    """``count`` synthetic matchers in ``store``, each with one or two confirmed predictions.

    As in prediction_latency.py: random unit vectors straight through the
    storage backend, which sit at a cosine near 0 from any prompt, so only
    the real matchers fire while every query still scans them all.
    """
    from synthetic import add_matchers, unit_vectors

    vectors = unit_vectors(count, th.embedder.dim, rng)
    add_matchers(th.decision_storage, store, th.embedder.model_id, 0, vectors, rng)


def fill_home(
    home: Path, project: Path, memories: int, matchers: int, rng: np.random.Generator
) -> list[str]:
    """Fill ``home`` for the project at ``project``: memories and matchers, real ones first.

    The real memories of bench/data (121, five stores) and the real decision
    set (49 matchers, in the project's store) are embedded by the model, so
    prompts about them get recall and decision nudges; synthetic ones make up
    the counts. Returns one line per step, with its time, for the report.
    """
    import thatch

    notes: list[str] = []
    with thatch.open(home=home, cwd=project, environ=bench_env(home)) as th:
        started = time.perf_counter()
        real = load_bench_memories(th)
        if memories > real:
            write_synthetic_memories(th, PROJECT_STORE, memories - real, rng)
        took = time.perf_counter() - started
        notes.append(f"{max(memories, real):,} memories ({real} real) in {took:.1f} s")
        if matchers:
            started = time.perf_counter()
            real = load_bench_decisions(th, PROJECT_STORE)
            if matchers > real:
                write_synthetic_matchers(th, PROJECT_STORE, matchers - real, rng)
            notes.append(
                f"{max(matchers, real):,} matchers ({real} real) in "
                f"{time.perf_counter() - started:.1f} s"
            )
    return notes
