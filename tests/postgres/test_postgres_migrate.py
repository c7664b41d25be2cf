"""``thatch migrate``: a SQLite home of 10,000 memories to PostgreSQL and back, nothing lost.

The home is filled through the storage contract with seeded vectors (no
embedding model): what is tested is the copy, not the embedding. The real
``thatch`` console script runs each migration and each export.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pg_cluster import DATABASE_USER, PORT, Server, schema_for
from thatch.plugin.decisions import Provenance
from thatch.plugin.prediction_log import LoggedPrediction
from thatch.plugin.records import NewMemory
from thatch.testing.contracts import beta
from thatch_postgres.storage import PostgresStorage
from thatch_sqlite.storage import SQLiteStorage

THATCH = Path(sys.executable).with_name("thatch")
MEMORIES = 10_000
STORES = ("global", "acme/app", "acme/api")
DIM = 32
T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def vector(seed: int) -> np.ndarray:
    values = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return values / np.linalg.norm(values)


def fill(storage: SQLiteStorage) -> None:
    """Every kind of row each part keeps, through the contract."""
    items = [
        NewMemory(
            store=STORES[i % 3],
            label=f"fact-{i:05d}",
            content=f"fact {i}: the build uses tool {i % 97} — café {i % 5}",
            branch="feature" if i % 11 == 0 else None,
            model="model-b" if i % 13 == 0 else "model-a",
            embedding=vector(i),
        )
        for i in range(MEMORIES)
    ]
    written = []
    for start in range(0, MEMORIES, 1000):
        written += [r.memory for r in storage.write_memories(items[start : start + 1000])]
    for memory in written[::50]:
        storage.set_archived(memory.store, memory.label, True)
    for hour in range(3):
        storage.record_recall([m.id for m in written[hour::7]], T0 + timedelta(hours=hour))
    # Pairs within one store: i and i + 3 share a store.
    for i in range(0, 300, 6):
        storage.mark_reviewed(written[i].id, written[i + 3].id, "same" if i % 12 else "different")

    matchers = [
        storage.add_matcher(STORES[i % 3], f"when the user asks about {i}", "model-a", vector(i))
        for i in range(40)
    ]
    predictions = [
        storage.add_prediction(
            STORES[i % 3], f"the user picks {i}", f"said so {i}", "model-a", vector(900 + i), 0.5
        )
        for i in range(60)
    ]
    for i, prediction in enumerate(predictions):
        storage.link(matchers[i % 40].id, prediction.id, 1.0 + i / 100)
        for step in range(i % 4):
            signal = ("confirm", "soft", "disconfirm")[step % 3]
            storage.add_evidence(
                prediction.id,
                signal=signal,  # type: ignore[arg-type]
                confirm=1.0 if signal == "confirm" else 0.0,
                disconfirm={"soft": 0.25, "disconfirm": 1.0}.get(signal, 0.0),
                detail=f"step {step}",
                session=f"s{step}" if step else None,
                when=T0 + timedelta(minutes=i * 10 + step),
                rule=beta,
            )
    for i in range(0, 60, 3):
        shown = [(predictions[i].id, 0.6, 0.5), (predictions[i + 1].id, 0.7, 0.45)]
        storage.record_fires(f"s{i % 5}" if i % 2 else None, shown, T0 + timedelta(seconds=i))

    storage.record_predictions(
        [
            LoggedPrediction(
                id=f"sess{i // 10}:{i % 10 + 1}",
                session_id=f"sess{i // 10}",
                action="accept" if i % 2 else "correct",
                toward=f"toward {i}",
                confidence=i % 101,
                source="assistant",
                recorded_at=T0 + timedelta(seconds=i // 3),
                fields={"triggers": [f"t{i}"], "n": i},
                store=STORES[i % 3],
                actual="accept" if i % 4 == 0 else None,
                scored_at=T0 + timedelta(days=1) if i % 4 == 0 else None,
            )
            for i in range(300)
        ]
    )


def listing(storage: Any) -> dict[str, Any]:
    """Every part as ids-free rows: equal listings mean the same data."""
    memories = storage.list_memories(None, include_archived=True)
    label = {m.id: (m.store, m.label) for m in memories}
    vectors: dict[tuple[str, str], list[float]] = {}
    for model in ("model-a", "model-b"):
        ids = [m.id for m in memories if m.model == model]
        for row_id, found in storage.embeddings(ids, model).items():
            vectors[label[row_id]] = found.tolist()
    pairs = {
        (label[a], label[b], verdict)
        for store in STORES
        for (a, b), verdict in storage.review_verdicts(store).items()
    }
    matchers = storage.list_matchers()
    predictions = storage.list_predictions()
    matcher_key = {m.id: (m.store, m.description) for m in matchers}
    prediction_key = {p.id: (p.store, p.statement) for p in predictions}

    def trail(entry: Provenance) -> tuple[Any, ...]:
        return (prediction_key[entry.prediction_id], entry.signal, entry.detail, entry.session)

    return {
        "memories": [
            (
                m.store,
                m.label,
                m.content,
                m.branch,
                m.archived,
                m.model,
                m.created_at,
                m.updated_at,
                m.recall_count,
                m.last_recalled_at,
            )
            for m in memories
        ],
        "vectors": vectors,
        "pairs": pairs,
        "matchers": [
            (m.store, m.description, m.model, m.created_at, m.updated_at) for m in matchers
        ],
        "matcher vectors": [
            storage.decision_embeddings("matcher", [m.id], m.model)[m.id].tolist() for m in matchers
        ],
        "predictions": [
            (
                p.store,
                p.statement,
                p.rationale,
                p.model,
                p.confirm_count,
                p.disconfirm_count,
                p.prior,
                p.confidence,
                p.created_at,
                p.updated_at,
            )
            for p in predictions
        ],
        "provenance": [(*trail(e), e.created_at) for e in storage.signals()],
        "edges": sorted(
            (matcher_key[e.matcher_id], prediction_key[e.prediction_id], e.weight)
            for e in storage.edges_from([m.id for m in matchers])
        ),
        "fires": [
            (prediction_key[f.prediction_id], f.session, f.confidence, f.score, f.fired_at)
            for f in storage.fires()
        ],
        "prediction log": [e.to_json() for e in storage.list_prediction_entries()],
    }


def server_url(server: Server) -> str:
    """The throw-away server as a ``postgresql://`` URL (its Unix socket in the query)."""
    return f"postgresql://{DATABASE_USER}@/postgres?host={server.root}&port={PORT}"


def thatch(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "THATCH_HOME": str(home), **(env or {})}
    environment.pop("THATCH_DATABASE_URL", None)
    return subprocess.run(
        [str(THATCH), *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=home,
        timeout=300,
        check=False,
    )


def counts(completed: subprocess.CompletedProcess[str]) -> dict[str, tuple[int, int, int]]:
    """The summary's numbers by part: (in the source, added, already there)."""
    assert completed.returncode == 0, completed.stderr
    found = {}
    for line in completed.stdout.splitlines()[1:]:
        part, _, rest = line.strip().partition("  ")
        numbers = [int(word) for word in rest.replace(",", "").split() if word.isdigit()]
        found[part.strip()] = (numbers[0], numbers[1], numbers[2])
    return found


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "home"
    folder.mkdir()
    storage = SQLiteStorage(folder / "data" / "thatch.db")
    try:
        fill(storage)
    finally:
        storage.close()
    return folder


def test_a_home_goes_to_postgres_and_back_unchanged(
    home: Path, postgres_server: Server, tmp_path: Path
) -> None:
    started = time.monotonic()
    schema = schema_for(tmp_path)
    url = server_url(postgres_server)
    source_file = home / "data" / "thatch.db"
    with SQLiteStorage(source_file) as source:
        before = listing(source)
    exported = thatch(home, "export")
    assert exported.returncode == 0, exported.stderr
    assert len(exported.stdout.splitlines()) == MEMORIES

    first = thatch(home, "migrate", "--to", url, "--to-schema", schema)
    told = counts(first)
    assert told["memories"] == (MEMORIES, MEMORIES, 0)
    assert told["reviewed pairs"] == (50, 50, 0)
    assert told["matchers"] == (40, 40, 0)
    assert told["predictions"] == (60, 60, 0)
    assert told["provenance"][:2] == (len(before["provenance"]),) * 2
    assert told["edges"] == (60, 60, 0)
    assert told["fires"] == (40, 40, 0)
    assert told["prediction log"] == (300, 300, 0)
    # Progress on stderr: each part, every 1,000 rows of the memories.
    progress = first.stderr.splitlines()
    assert "thatch migrate: memories: 1000 of 10000" in progress
    assert "thatch migrate: memories: 10000 of 10000" in progress
    assert "thatch migrate: prediction log: 300 of 300" in progress

    again = counts(thatch(home, "migrate", "--to", url, "--to-schema", schema))
    assert all(added == 0 for _, added, _ in again.values()), again
    assert again["memories"] == (MEMORIES, 0, MEMORIES)

    server = PostgresStorage(postgres_server.dsn(), schema)
    try:
        assert listing(server) == before
    finally:
        server.close()

    back = tmp_path / "back.db"
    returned = counts(
        thatch(home, "migrate", "--from", url, "--from-schema", schema, "--to", f"sqlite:{back}")
    )
    assert returned["memories"] == (MEMORIES, MEMORIES, 0)
    with SQLiteStorage(back) as copy:
        assert listing(copy) == before
        assert copy.integrity_problems() == []
    exported_back = thatch(home, "export", env={"THATCH_DB_PATH": str(back)})
    assert exported_back.returncode == 0, exported_back.stderr
    assert exported_back.stdout == exported.stdout
    assert time.monotonic() - started < 120


def test_a_password_in_the_url_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    refused = thatch(tmp_path, "migrate", "--to", "postgresql://me:secret@db.example/thatch")
    assert refused.returncode == 2
    assert "secret" not in refused.stderr
    assert "~/.pgpass" in refused.stderr
    assert "PGPASSWORD" in refused.stderr
    assert "--to postgresql://me@db.example/thatch" in refused.stderr
    assert list(tmp_path.iterdir()) == []
