"""What the SQL backends share: records of rows, the checks of writing them, a storage a config."""

from __future__ import annotations

import gc
import json
from datetime import UTC, datetime
from pathlib import Path

import attrs
import numpy as np
import pytest
from thatch.plugin import (
    ArchivedMemoryError,
    Fire,
    LoggedPrediction,
    Matcher,
    Memory,
    NotFoundError,
    Prediction,
    Provenance,
    ScoredId,
)
from thatch.plugin.config import Config
from thatch.plugin.per_config import PerConfig
from thatch.plugin.sql_rows import (
    archived_memory,
    check_signal,
    fire,
    fire_params,
    logged_prediction,
    matcher,
    memory,
    not_found,
    prediction,
    provenance,
    with_archived,
)

CREATED = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
UPDATED = datetime(2025, 3, 2, 8, 30, tzinfo=UTC)


def epoch(moment: datetime) -> float:
    return moment.timestamp()


def from_epoch(value: float) -> datetime:
    return datetime.fromtimestamp(value, tz=UTC)


def test_a_memory_row_with_times_as_stored_or_as_read() -> None:
    expected = Memory(7, "acme", "parser", "keep it strict", None, True, "m", CREATED, UPDATED, 3)
    # As SQLite keeps it: a flag as 0 or 1, times as epoch seconds, never recalled.
    stored = (7, "acme", "parser", "keep it strict", None, 1, "m", epoch(CREATED))
    assert memory((*stored, epoch(UPDATED), 3, None), from_epoch) == expected
    recalled = memory((*stored, epoch(UPDATED), 3, epoch(UPDATED)), from_epoch)
    assert recalled.last_recalled_at == UPDATED
    assert recalled.archived is True
    # As psycopg hands it back: the datetimes kept as they are.
    read = (7, "acme", "parser", "keep it strict", None, True, "m", CREATED, UPDATED, 3, None)
    assert memory(read) == expected


def test_decision_rows_take_their_times_through_moment() -> None:
    assert matcher(
        (1, "acme", "on a parser change", "m", epoch(CREATED), epoch(UPDATED)), from_epoch
    ) == (Matcher(1, "acme", "on a parser change", "m", CREATED, UPDATED))
    row = (2, "acme", "keep it strict", "why", "m", 1.0, 0.5, 0.4, 0.6, CREATED, UPDATED)
    assert prediction(row) == Prediction(*row)
    assert provenance((3, 2, "confirm", "ok", None, epoch(CREATED)), from_epoch) == Provenance(
        3, 2, "confirm", "ok", None, CREATED
    )
    assert fire((4, "s1", 2, 0.6, 0.8, CREATED)) == Fire(4, "s1", 2, 0.6, 0.8, CREATED)


def test_a_log_row_reads_its_fields_and_leaves_an_unscored_one_unscored() -> None:
    shown = ("s1:2:1", "s1", "correct", "keep the parser strict", 80, "assistant")
    entry = LoggedPrediction(*shown, CREATED, {"triggers": ["parser"]}, "acme")
    as_text = (*shown, epoch(CREATED), json.dumps(dict(entry.fields)), "acme", None, None)
    assert logged_prediction(as_text, from_epoch, json.loads) == entry
    scored = (*shown, CREATED, {"triggers": ["parser"]}, "acme", "accept", UPDATED)
    assert logged_prediction(scored) == attrs.evolve(entry, actual="accept", scored_at=UPDATED)
    with pytest.raises(ValueError, match="shorter"):
        logged_prediction(scored[:-1])


def test_fire_params_bind_each_fire_with_the_time_as_given() -> None:
    assert fire_params("s1", [(2, 0.6, 0.8)], 12.5) == [
        {"session": "s1", "id": 2, "confidence": 0.6, "score": 0.8, "when": 12.5}
    ]
    assert fire_params(None, [], CREATED) == []


def test_an_unknown_signal_is_refused_and_errors_say_what_to_do() -> None:
    check_signal("soft")
    with pytest.raises(ValueError, match="unknown signal 'maybe'; expected one of create"):
        check_signal("maybe")
    assert isinstance(not_found("matcher", 5), NotFoundError)
    assert str(not_found("matcher", 5)) == "no matcher with id 5"
    assert "thatch predictions list" in str(not_found("prediction", 5))
    error = archived_memory("acme", "my label")
    assert isinstance(error, ArchivedMemoryError)
    assert "thatch unarchive 'my label' acme" in str(error)


@attrs.define
class Opened:
    closed: bool = False


def test_one_storage_a_config_for_the_parts_it_keeps_in_the_backend(tmp_path: Path) -> None:
    made: list[Opened] = []

    def opener(config: Config) -> Opened:
        made.append(Opened())
        return made[-1]

    storage_for = PerConfig("sqlite", opener)
    config = attrs.evolve(
        Config.load(tmp_path / "home", environ={}),
        storage_backend="sqlite",
        storage_parts={"predictions": "postgres"},
    )
    first = storage_for(config, "memories")
    assert first is not None
    assert storage_for(config, "decisions") is first
    assert storage_for(config, "predictions") is None
    # Closed by core: the next hook opens it again.
    first.closed = True
    again = storage_for(config, "memories")
    assert again is not None
    assert again is not first
    # Another config, another storage.
    other = attrs.evolve(config)
    assert storage_for(other, "memories") is not again
    assert len(made) == 3
    # A collected config's entry goes with it.
    del config, first, again
    gc.collect()
    assert list(storage_for._opened) == [id(other)]


def test_archived_rows_join_the_hits_best_first_and_another_models_are_passed_over() -> None:
    query = np.array([1.0, 0.0], dtype=np.float32)

    def stored(*values: float) -> bytes:
        return np.array(values, dtype="<f4").tobytes()

    def decode(blob: bytes) -> np.ndarray:
        return np.frombuffer(blob, dtype="<f4").astype(np.float32)

    hits = [(1, 0.9), (2, 0.5)]
    archived = [(3, stored(0.7, 0.7)), (4, stored(0.5, 0.0, 0.0)), (5, stored(0.5, 0.9))]
    found = with_archived(hits, archived, query, decode, 3)
    assert [(hit.id, round(hit.score, 3)) for hit in found] == [(1, 0.9), (3, 0.7), (2, 0.5)]
    assert [hit.id for hit in with_archived(hits, [], query, decode, 5)] == [1, 2]
    # Not asked for: the hits as the index ranked them.
    assert with_archived([(2, 0.5), (1, 0.5)], None, query, decode, 1) == [ScoredId(2, 0.5)]
