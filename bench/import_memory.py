"""Peak memory of ``thatch import``: the real command on files of growing size.

Each size is a fresh home and one ``thatch import FILE`` child of a small
wrapper process, whose ``RUSAGE_CHILDREN`` peak resident size is the
import's alone. The lines are distinct texts (the generator of
import_throughput.py) padded to ``--content-bytes``, so the file grows with
the line count while embedding stays the same per line (the model reads
the first 256 tokens). An import that streams its file keeps the same peak
whatever the size, past the model and SQLite's page cache; one that reads
the file whole grows by about three times the file.

    uv run python bench/import_memory.py
    uv run python bench/import_memory.py --sizes 1000,10000 --content-bytes 4000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from homes import bench_env
from synthetic import distinct_texts

THATCH = Path(sys.executable).with_name("thatch")
#: Runs a command; prints its exit status and the peak resident size of its process tree (KiB).
PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.stderr.buffer.write(done.stderr[-2000:])\n"
)


def write_file(path: Path, count: int, content_bytes: int, seed: int) -> None:
    """``count`` import lines of distinct texts, each padded to about ``content_bytes``."""
    with path.open("w", encoding="utf-8") as handle:
        for n, text in enumerate(distinct_texts(count, seed)):
            padding = " Details follow." * max(0, (content_bytes - len(text)) // 16)
            line = {"label": f"fact-{n}", "content": text + padding, "store": "bench/import"}
            handle.write(json.dumps(line) + "\n")


def peak_import(source: Path) -> tuple[float, float]:
    """(peak RSS in MiB, seconds) of ``thatch import source`` into a fresh home."""
    with tempfile.TemporaryDirectory(prefix="thatch-import-mem-") as home:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", PEAK_RSS, str(THATCH), "import", str(source)],
            capture_output=True,
            text=True,
            env=bench_env(Path(home)),
            check=False,
        )
        took = time.perf_counter() - started
    status, peak = done.stdout.split()
    if status != "0":
        raise SystemExit(f"thatch import {source} exited {status}: {done.stderr}")
    return int(peak) / 1024, took


def main(argv: Sequence[str] | None = None) -> int:
    """Import each size and print lines, file size, peak RSS and time."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="500,2000", help="line counts (500,2000)")
    parser.add_argument("--content-bytes", type=int, default=1000, help="bytes a line (1000)")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    print(f"load {os.getloadavg()[0]:.2f}")
    print(f"{'lines':>8}  {'file MiB':>8}  {'peak RSS MiB':>12}  {'seconds':>8}")
    with tempfile.TemporaryDirectory(prefix="thatch-import-file-") as folder:
        for count in (int(size) for size in args.sizes.split(",")):
            source = Path(folder) / f"{count}.jsonl"
            write_file(source, count, args.content_bytes, args.seed)
            peak, took = peak_import(source)
            size = source.stat().st_size / 2**20
            print(f"{count:>8}  {size:>8.1f}  {peak:>12.1f}  {took:>8.1f}")
            source.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
