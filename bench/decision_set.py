"""The decision set of bench/data/decisions.jsonl: read, checked, and replayed into a store.

Each line is a situation (a matcher and its preferences, each with the
signals it receives), a probe (a prompt and the situations it should fire)
or an opposite pair (two preferences that contradict each other); see
bench/data/DECISIONS.md.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from thatch.decisions.engine import DecisionModel
from thatch.plugin import DecisionStorage


@dataclass(frozen=True)
class Preference:
    """One prediction of a situation and the feedback it receives."""

    statement: str
    rationale: str
    signals: tuple[str, ...]
    #: How the agent worded the situation when it recorded this preference.
    matcher: str | None = None


@dataclass(frozen=True)
class Situation:
    """A matcher of the set with its preferences."""

    id: str
    matcher: str
    preferences: tuple[Preference, ...]


@dataclass(frozen=True)
class Probe:
    """A user prompt and the situations it should fire (none for a negative)."""

    text: str
    expect: tuple[str, ...]
    type: str


@dataclass(frozen=True)
class Opposite:
    """Two preferences that contradict each other in one situation."""

    matcher: str
    a: str
    b: str


@dataclass
class Loaded:
    """What loading the set into one store produced."""

    store: str
    #: Prediction id -> the situations whose preferences it holds.
    owners: dict[int, set[str]] = field(default_factory=dict)
    outcomes: Counter[str] = field(default_factory=Counter)
    matchers: int = 0
    #: (situation, the wording used, the matcher it was merged into, edge weight).
    reused_matchers: list[tuple[str, str, str, float]] = field(default_factory=list)
    #: (situation, statement, statement of the prediction it was merged into).
    merged_predictions: list[tuple[str, str, str]] = field(default_factory=list)


def read_set(path: Path) -> tuple[list[Situation], list[Probe], list[Opposite]]:
    """Situations, probes and opposite pairs of a decisions.jsonl file, checked."""
    situations: list[Situation] = []
    probes: list[Probe] = []
    opposites: list[Opposite] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        row = json.loads(raw)
        if row["kind"] == "situation":
            preferences = tuple(
                Preference(
                    statement=p["statement"],
                    rationale=p.get("rationale", ""),
                    signals=tuple(p["signals"]),
                    matcher=p.get("matcher"),
                )
                for p in row["predictions"]
            )
            situations.append(Situation(row["id"], row["matcher"], preferences))
        elif row["kind"] == "probe":
            probes.append(Probe(row["text"], tuple(row["expect"]), row["type"]))
        elif row["kind"] == "opposite":
            opposites.append(Opposite(row["matcher"], row["a"], row["b"]))
        else:
            raise ValueError(f"{path} line {number}: unknown kind {row['kind']!r}")
    ids = [s.id for s in situations]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: situation ids repeat")
    unknown = {x for probe in probes for x in probe.expect} - set(ids)
    if unknown:
        raise ValueError(f"{path}: probes expect unknown situations {sorted(unknown)}")
    return situations, probes, opposites


def load(model: DecisionModel, situations: Sequence[Situation], store: str) -> Loaded:
    """Replay every preference's signals through ``model.update`` into ``store``."""
    loaded = Loaded(store)
    descriptions: dict[int, str] = {}
    statements: dict[int, str] = {}
    for situation in situations:
        for preference in situation.preferences:
            wording = preference.matcher or situation.matcher
            for signal in preference.signals:
                result = model.update(
                    wording,
                    preference.statement,
                    signal,
                    store=store,
                    rationale=preference.rationale,
                )
                loaded.outcomes[result.outcome] += 1
                if result.matcher_created:
                    loaded.matchers += 1
                    descriptions[result.matcher.id] = result.matcher.description
                elif result.edge_created and result.matcher.description != wording:
                    weight = edge_weight(model.storage, result.matcher.id, result.prediction.id)
                    loaded.reused_matchers.append(
                        (situation.id, wording, result.matcher.description, weight)
                    )
                pid = result.prediction.id
                if result.prediction_created:
                    statements[pid] = preference.statement
                elif statements[pid] != preference.statement and signal == preference.signals[0]:
                    loaded.merged_predictions.append(
                        (situation.id, preference.statement, statements[pid])
                    )
                loaded.owners.setdefault(pid, set()).add(situation.id)
    return loaded


def edge_weight(storage: DecisionStorage, matcher_id: int, prediction_id: int) -> float:
    """The weight of one edge."""
    edges = storage.edges_to(prediction_id)
    return next(edge.weight for edge in edges if edge.matcher_id == matcher_id)
