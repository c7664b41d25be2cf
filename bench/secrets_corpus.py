"""Secret redaction against the corpus: secrets caught, normal texts changed, throughput.

Reads tests/data/secrets/secrets.jsonl (fake secrets in context; each must
be gone from ``redact(text)``) and tests/data/secrets/normal.jsonl (ordinary
developer text; each should come back unchanged), prints one line per
secret kind and per changed normal text, then the totals. Throughput is
measured on a 1 MB mix of the normal texts with a secret every 40 lines
(best of five runs).

    uv run python bench/secrets_corpus.py
    uv run python bench/secrets_corpus.py --verbose   # also print what each text became
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from data_sets import ROOT, read_jsonl
from thatch.redact import redact

CORPUS = ROOT / "tests" / "data" / "secrets"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--verbose", action="store_true", help="print every redacted text")
    args = parser.parse_args()

    secrets = read_jsonl(CORPUS / "secrets.jsonl")
    normal = read_jsonl(CORPUS / "normal.jsonl")

    by_kind: dict[str, list[bool]] = defaultdict(list)
    for entry in secrets:
        text, secret = str(entry["text"]), str(entry["secret"])
        result = redact(text).text
        caught = secret not in result
        by_kind[str(entry["kind"])].append(caught)
        if args.verbose or not caught:
            print(f"  {'caught' if caught else 'MISSED'} {entry['kind']}: {result!r}")
    print("secrets, by kind:")
    for kind, results in by_kind.items():
        print(f"  {kind:32} {sum(results)}/{len(results)}")

    changed = 0
    for entry in normal:
        text = str(entry["text"])
        result = redact(text)
        if result.text != text:
            changed += 1
            print(f"  false positive ({entry['kind']}, {', '.join(result.kinds)}): {text!r}")

    lines = [str(entry["text"]) for entry in normal]
    mixed = []
    for index in range(40_000):
        mixed.append(lines[index % len(lines)])
        if index % 40 == 0:
            mixed.append(str(secrets[(index // 40) % len(secrets)]["text"]))
    text = "\n".join(mixed)[:1_000_000]
    # Best of five: the machine's other load only ever adds time.
    seconds = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        redact(text)
        seconds = min(seconds, time.perf_counter() - start)

    caught = sum(sum(results) for results in by_kind.values())
    print(f"secrets caught:  {caught}/{len(secrets)}")
    print(f"false positives: {changed}/{len(normal)}")
    print(
        f"throughput:      {len(text) / seconds / 1e6:.1f} MB/s ({seconds * 1000:.0f} ms for 1 MB)"
    )


if __name__ == "__main__":
    main()
