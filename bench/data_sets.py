"""Where the bench data sets are and how their JSON Lines files are read."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"


def read_jsonl(path: Path) -> list[dict[str, object]]:
    """Every non-empty line of a JSON Lines file, parsed."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_queries(path: Path) -> list[str]:
    """The query texts of a queries.jsonl file."""
    return [str(row["query"]) for row in read_jsonl(path)]
