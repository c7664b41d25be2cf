"""The receptor sample's labelled runs (``../shared/data/receptor-sample``), read as events."""

from __future__ import annotations

import csv
from pathlib import Path

from data_sets import ROOT
from thatch.plugin.events import Event
from thatch_receptor.trajectories import read_trajectory

SAMPLE = ROOT.parent / "shared" / "data" / "receptor-sample"


class Run:
    """One labelled run: its id, outcome and events."""

    def __init__(self, run_id: str, resolved: bool, events: tuple[Event, ...]) -> None:
        self.run_id = run_id
        self.resolved = resolved
        self.events = events


def read_runs(sample: Path) -> list[Run]:
    """The runs of ``labels.csv`` (``instance_id, resolved, file``), read from their files."""
    labels = sample / "labels.csv"
    if not labels.is_file():
        raise SystemExit(f"{labels}: not found; pass --data, the folder with labels.csv and trajs/")
    with labels.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        Run(row["instance_id"], row["resolved"] == "True", read_trajectory(sample / row["file"]))
        for row in rows
    ]
