"""Import throughput: thatch's import path against raw embedding of the same texts.

The import side is what ``thatch import`` does: parse JSON lines with
:func:`thatch.memory.transfer.parse_lines`, then :meth:`thatch.api.Thatch.import_lines`
into an empty home (validation, secret redaction, embedding in batches of 64,
a near-duplicate check per memory, one transaction per batch). The raw side
embeds the same texts with the same embedder object in batches of 64 and
nothing else. Their ratio is how much of the embedding speed the import keeps
(goal: at least 0.8).

Every round uses a fresh home and its own embedder (loaded and warmed before
any timing), measures both sides, and alternates which side goes first, so
neither always runs on a warmer machine. The median round is reported.

    uv run python bench/import_throughput.py
    uv run python bench/import_throughput.py --count 500 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence

import thatch
from synthetic import distinct_texts
from thatch.api import Thatch
from thatch.memory.transfer import parse_lines

BATCH = 64
STORE = "bench/import"


def import_rate(th: Thatch, texts: Sequence[str]) -> float:
    """Texts per second through parse_lines + import_lines into ``th``."""
    lines = [
        json.dumps({"label": f"fact-{i}", "content": text, "store": STORE})
        for i, text in enumerate(texts)
    ]
    start = time.perf_counter()
    result = th.import_lines(list(parse_lines(lines, "bench")))
    elapsed = time.perf_counter() - start
    if result.created != len(texts):
        raise SystemExit(f"expected {len(texts)} new memories, import created {result.created}")
    return len(texts) / elapsed


def raw_rate(th: Thatch, texts: Sequence[str]) -> float:
    """Texts per second through embed_passages alone, in batches of 64."""
    start = time.perf_counter()
    for offset in range(0, len(texts), BATCH):
        th.embedder.embed_passages(texts[offset : offset + BATCH])
    return len(texts) / (time.perf_counter() - start)


def one_round(texts: Sequence[str], raw_first: bool) -> tuple[float, float]:
    """(import rate, raw rate) in a fresh home with a warmed embedder."""
    with tempfile.TemporaryDirectory(prefix="thatch-import-") as home, thatch.open(home=home) as th:
        th.memory_storage.list_stores()  # open and migrate the database before timing
        th.embedder.embed_passages(list(texts[:BATCH]))  # load and warm the model
        if raw_first:
            raw = raw_rate(th, texts)
            imported = import_rate(th, texts)
        else:
            imported = import_rate(th, texts)
            raw = raw_rate(th, texts)
    return imported, raw


def main(argv: Sequence[str] | None = None) -> int:
    """Run the rounds and print texts/s for both sides and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000, help="texts to import (2000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, alternating order (3)")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    texts = distinct_texts(args.count, args.seed)
    words = statistics.mean(len(text.split()) for text in texts)
    print(
        f"{len(texts)} distinct texts, {words:.1f} words on average; load {os.getloadavg()[0]:.2f}"
    )
    print(f"{'round':>5} {'first':>6} | {'import/s':>9} {'raw/s':>9} {'ratio':>6}")
    results = []
    for index in range(args.rounds):
        raw_first = index % 2 == 0
        imported, raw = one_round(texts, raw_first)
        results.append((imported, raw))
        first = "raw" if raw_first else "import"
        print(f"{index + 1:>5} {first:>6} | {imported:>9.1f} {raw:>9.1f} {imported / raw:>6.2f}")
    imported = statistics.median(r[0] for r in results)
    raw = statistics.median(r[1] for r in results)
    ratio = imported / raw
    print(f"{'median':>12} | {imported:>9.1f} {raw:>9.1f} {ratio:>6.2f}")
    print(f"goal: import >= 0.8 x raw embedding: {'met' if ratio >= 0.8 else 'NOT met'}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
