"""The embedder's thresholds file, which the calibration scripts write."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from data_sets import ROOT

THRESHOLDS_FILE = ROOT / "plugins" / "fastembed" / "src" / "thatch_fastembed" / "thresholds.json"
#: Key order of a thresholds.json entry; unknown keys follow.
KEY_ORDER = ("recall", "dedup", "prediction", "source")


def update_thresholds(path: Path, model_id: str, values: Mapping[str, object]) -> None:
    """Set ``values`` in ``model_id``'s entry, keeping its other keys and the other models.

    Each calibration script owns some keys (calibrate_thresholds.py: recall,
    dedup, source; prediction_firing.py: prediction), so neither erases the
    other's numbers.
    """
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entry = {**data.get(model_id, {}), **values}
    rank = {key: index for index, key in enumerate(KEY_ORDER)}
    data[model_id] = dict(sorted(entry.items(), key=lambda item: rank.get(item[0], len(rank))))
    ordered = {key: data[key] for key in sorted(data)}
    path.write_text(json.dumps(ordered, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
