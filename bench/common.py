"""What the bench scripts share: paths, reading the data sets, writing thresholds.json."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from thatch.api import Thatch

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
THRESHOLDS_FILE = ROOT / "plugins" / "fastembed" / "src" / "thatch_fastembed" / "thresholds.json"
#: Key order of a thresholds.json entry; unknown keys follow.
KEY_ORDER = ("recall", "dedup", "prediction", "source")


def read_jsonl(path: Path) -> list[dict[str, object]]:
    """Every non-empty line of a JSON Lines file, parsed."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def update_thresholds(path: Path, model_id: str, values: Mapping[str, object]) -> None:
    """Set ``values`` in ``model_id``'s entry, keeping its other keys and the other models.

    Each calibration script owns some keys (calibrate_thresholds.py: recall,
    dedup, source; prediction_tuning.py: prediction), so neither erases the
    other's numbers.
    """
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entry = {**data.get(model_id, {}), **values}
    rank = {key: index for index, key in enumerate(KEY_ORDER)}
    data[model_id] = dict(sorted(entry.items(), key=lambda item: rank.get(item[0], len(rank))))
    ordered = {key: data[key] for key in sorted(data)}
    path.write_text(json.dumps(ordered, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# -- the runtime benchmarks (hook_latency, mcp_recall, daemon_memory) ------------------------

#: The project the runtime benchmarks work in: a git folder whose origin names the store.
PROJECT_REMOTE = "git@github.com:acme/web.git"
PROJECT_STORE = "acme/web"
#: One synthetic memory in this many goes to the global store (also in the project's scope).
GLOBAL_EVERY = 10
MEMORY_BATCH = 5_000


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
    from thatch.memory import MemoryInput

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
    from recall_latency import sentences, unit_vectors, vocabulary  # sibling script
    from thatch.plugin.records import GLOBAL_STORE, NewMemory

    model, dim = th.embedder.model_id, th.embedder.dim
    vocab = vocabulary(DATA, 3000, rng)
    for offset in range(0, count, MEMORY_BATCH):
        size = min(MEMORY_BATCH, count - offset)
        vectors = unit_vectors(size, dim, rng)
        texts = sentences(vocab, size, rng)
        first = start + offset
        th.storage.write_memories(
            [
                NewMemory(
                    store=GLOBAL_STORE if (first + i) % GLOBAL_EVERY == 0 else store,
                    label=f"synthetic-{first + i}",
                    content=texts[i],
                    branch=None,
                    model=model,
                    embedding=vectors[i],
                )
                for i in range(size)
            ]
        )


def load_bench_decisions(th: Thatch, store: str) -> int:
    """The real set of bench/data/decisions.jsonl through the decision model; returns matchers."""
    from prediction_tuning import load, read_set  # sibling script

    situations, _, _ = read_set(DATA / "decisions.jsonl")
    return load(th.decisions.model, situations, store).matchers


def write_synthetic_matchers(th: Thatch, store: str, count: int, rng: np.random.Generator) -> None:
    """``count`` synthetic matchers in ``store``, each with one or two confirmed predictions.

    As in prediction_latency.py: random unit vectors straight through the
    storage backend, which sit at a cosine near 0 from any prompt, so only
    the real matchers fire while every query still scans them all.
    """
    from prediction_latency import add_synthetic  # sibling script
    from recall_latency import unit_vectors

    vectors = unit_vectors(count, th.embedder.dim, rng)
    add_synthetic(th.storage, th.embedder.model_id, 0, vectors, rng, store=store)


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


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) of ``values``."""
    return float(np.percentile(np.asarray(values), q))


def proc_memory(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM and the other ``Vm*`` lines of /proc/<pid>/status, in kB (Linux only)."""
    sizes: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        name, _, value = line.partition(":")
        if name.startswith(("Vm", "Rss")) and value.strip().endswith("kB"):
            sizes[name] = int(value.split()[0])
    return sizes
