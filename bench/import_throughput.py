"""Import throughput: thatch's import path against raw embedding of the same texts.

The import side is what ``thatch import`` does: parse JSON lines with
:func:`thatch.memory.transfer.parse_lines`, then :meth:`thatch.api.Thatch.import_lines`
into an empty home (validation, secret redaction, embedding in batches of 64,
a near-duplicate check per memory, one transaction per batch). The raw side
embeds the same texts with the same embedder object in batches of 64 and
nothing else. Their ratio is how much of the embedding speed the import keeps
(goal: at least 0.8).

With ``--store-size N`` each round's home first holds N synthetic memories in
the import's store (random unit vectors of the model's dimension and id,
written straight through the storage backend in batches of 5,000, so no
embedding time is spent on them): every near-duplicate check of the import
then searches N + the memories imported so far, as importing into a
used home does. The raw side is the same either way. ``--compare-exact``
also imports, in every round, into a second such home whose vector index
keeps every store float32 (the exact search, as before int8 codes; see
``thatch_sqlite.vectors.QUANTIZE_AT``), in turn with the default one.

Every round uses a fresh home and its own embedder (loaded and warmed before
any timing) and times both sides batch by batch: each batch of 64 is
imported and embedded raw back to back, alternating which goes first, so a
change in the machine's load falls on both. The median round is reported.

    uv run python bench/import_throughput.py
    uv run python bench/import_throughput.py --count 500 --rounds 1
    uv run python bench/import_throughput.py --store-size 10000
    uv run python bench/import_throughput.py --store-size 10000 --compare-exact
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence

import numpy as np
import thatch
from synthetic import distinct_texts, unit_vectors
from thatch.api import Thatch
from thatch.memory.transfer import parse_lines
from thatch.plugin.records import NewMemory
from thatch_sqlite import vectors

BATCH = 64
STORE = "bench/import"
FILL_BATCH = 5_000


def prefill(th: Thatch, count: int, seed: int) -> None:
    """``count`` synthetic memories in the import's store, written without embedding."""
    rng = np.random.default_rng(seed)
    model, dim = th.embedder.model_id, th.embedder.dim
    for start in range(0, count, FILL_BATCH):
        size = min(FILL_BATCH, count - start)
        vectors = unit_vectors(size, dim, rng)
        th.memory_storage.write_memories(
            [
                NewMemory(
                    store=STORE,
                    label=f"stored-{start + i}",
                    content=f"stored memory {start + i} about service {rng.integers(10**6)}",
                    branch=None,
                    model=model,
                    embedding=vectors[i],
                )
                for i in range(size)
            ]
        )


def paired_rates(th: Thatch, texts: Sequence[str], raw_first: bool) -> tuple[float, float]:
    """Texts per second of the import and of raw embedding, timed batch by batch.

    For each batch of 64 texts the import (parse_lines + import_lines, one
    batch, one transaction) and the raw embedding of the same texts run back
    to back, alternating which goes first: a change in the machine's load
    then falls on both sides alike.
    """
    lines = [
        json.dumps({"label": f"fact-{i}", "content": text, "store": STORE})
        for i, text in enumerate(texts)
    ]
    spent = {"import": 0.0, "raw": 0.0}
    created = 0
    for number, offset in enumerate(range(0, len(texts), BATCH)):
        batch_lines, batch_texts = lines[offset : offset + BATCH], texts[offset : offset + BATCH]
        sides = ("raw", "import") if (number % 2 == 0) == raw_first else ("import", "raw")
        for side in sides:
            start = time.perf_counter()
            if side == "raw":
                th.embedder.embed_passages(batch_texts)
            else:
                created += th.import_lines(list(parse_lines(batch_lines, "bench"))).created
            spent[side] += time.perf_counter() - start
    if created != len(texts):
        raise SystemExit(f"expected {len(texts)} new memories, import created {created}")
    return len(texts) / spent["import"], len(texts) / spent["raw"]


@contextlib.contextmanager
def index_kind(exact: bool) -> Iterator[None]:
    """Storage opened inside keeps every store float32 when ``exact``."""
    saved = vectors.QUANTIZE_AT
    if exact:
        vectors.QUANTIZE_AT = sys.maxsize
    try:
        yield
    finally:
        vectors.QUANTIZE_AT = saved


def one_round(
    texts: Sequence[str], raw_first: bool, store_size: int, seed: int, exact: bool = False
) -> tuple[float, float]:
    """(import rate, raw rate) in a fresh home with a warmed embedder."""
    with (
        tempfile.TemporaryDirectory(prefix="thatch-import-") as home,
        index_kind(exact),
        thatch.open(home=home) as th,
    ):
        th.memory_storage.list_stores()  # open and migrate the database before timing
        th.embedder.embed_passages(list(texts[:BATCH]))  # load and warm the model
        if store_size:
            prefill(th, store_size, seed)
        return paired_rates(th, texts, raw_first)


def print_results(name: str, results: Sequence[tuple[float, float]]) -> None:
    """The rounds of one kind of index and their median."""
    for index, (imported, raw) in enumerate(results):
        first = "raw" if index % 2 == 0 else "import"
        print(
            f"{name:>7} {index + 1:>5} {first:>6} | {imported:>9.1f} {raw:>9.1f} "
            f"{imported / raw:>6.2f}"
        )
    imported = statistics.median(r[0] for r in results)
    raw = statistics.median(r[1] for r in results)
    ratio = imported / raw
    print(f"{name:>7} {'median':>12} | {imported:>9.1f} {raw:>9.1f} {ratio:>6.2f}")
    print(f"{name}: import >= 0.8 x raw embedding: {'met' if ratio >= 0.8 else 'NOT met'}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the rounds and print texts/s for both sides and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000, help="texts to import (2000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, alternating order (3)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--store-size", type=int, default=0, help="memories already in the store (0)"
    )
    parser.add_argument(
        "--compare-exact", action="store_true", help="also import with a float32-only index"
    )
    args = parser.parse_args(argv)
    texts = distinct_texts(args.count, args.seed)
    words = statistics.mean(len(text.split()) for text in texts)
    print(
        f"{len(texts)} distinct texts, {words:.1f} words on average, into a store of "
        f"{args.store_size:,}; load {os.getloadavg()[0]:.2f}"
    )
    kinds = ("default", "exact") if args.compare_exact else ("default",)
    print(f"{'index':>7} {'round':>5} {'first':>6} | {'import/s':>9} {'raw/s':>9} {'ratio':>6}")
    results: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    for index in range(args.rounds):
        # Both kinds in every round, the kind that goes first alternating too.
        order = kinds if index % 2 == 0 else kinds[::-1]
        for kind in order:
            rates = one_round(texts, index % 2 == 0, args.store_size, args.seed, kind == "exact")
            results[kind].append(rates)
            print(
                f"{kind:>7} round {index + 1}: {rates[0]:.1f} import/s, {rates[1]:.1f} raw/s",
                flush=True,
            )
    for kind in kinds:
        print_results(kind, results[kind])
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
