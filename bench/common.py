"""What the bench scripts share: paths, reading the data sets, writing thresholds.json."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

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
