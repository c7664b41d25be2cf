"""Synthetic data: random unit vectors, Zipf-like sentences, generated texts, stored as is.

The runtime benchmarks need homes far larger than bench/data: embedding
100k texts with the real model would take far too long, so memories and
matchers are written straight through the storage backend with random unit
vectors of the real model's id and dimension. Random vectors sit at a cosine
near 0 from any text, so they never outrank the real items by meaning, while
every vector search still scans them all.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
from thatch.decisions.confidence import confidence
from thatch.plugin import DecisionStorage, MemoryStorage
from thatch.plugin.records import GLOBAL_STORE, NewMemory

#: One synthetic memory in this many goes to the global store (also in the project's scope).
GLOBAL_EVERY = 10
WRITE_BATCH = 5_000
#: Made-up identifiers added to the vocabulary, built from these pieces.
SYLLABLES = ("ka", "lo", "mi", "ron", "tek", "vas", "zu", "pre", "dal", "nix", "or", "sel")
#: Sentence patterns of the generated texts, and what fills their slots.
TEMPLATES = (
    "The {svc} service reads {env} from {file} and refuses to start when it is missing.",
    "Run `{cmd}` before pushing changes to {svc}; CI runs the same check on every PR.",
    "{svc} talks to {dep} on port {port}; in development both run under docker compose.",
    "Tests of {svc} need {dep} running locally; start it with `{cmd}` first.",
    "{person} owns {file} in {svc}; ask them to review any change to it.",
    "Deploy {svc} by pushing a tag like v{major}.{minor}.{port}; staging follows main.",
    "The error '{err}' from {svc} means {dep} is unreachable; restart it with `{cmd}`.",
    "Logs of {svc} are shipped to {sink} and kept for {days} days.",
    "In {svc}, {person} prefers {pref}; follow that in new code.",
    "Calls from {svc} to {dep} time out after {days} seconds, set in {file}.",
)
SLOTS = {
    "svc": (
        "billing",
        "checkout",
        "search",
        "inventory",
        "notifications",
        "auth",
        "reporting",
        "gateway",
        "scheduler",
        "media",
        "pricing",
        "shipping",
        "ledger",
        "profile",
    ),
    "env": (
        "DATABASE_URL",
        "REDIS_URL",
        "SENTRY_DSN",
        "QUEUE_NAME",
        "S3_BUCKET",
        "LOG_LEVEL",
        "FEATURE_FLAGS_URL",
        "SMTP_HOST",
        "CACHE_TTL",
        "REGION",
    ),
    "file": (
        "config/settings.toml",
        "src/main.py",
        "deploy/values.yaml",
        ".env.example",
        "docker-compose.yml",
        "Makefile",
        "src/app.ts",
        "internal/server.go",
        "pyproject.toml",
    ),
    "cmd": (
        "make test",
        "make lint",
        "pnpm test",
        "docker compose up -d",
        "cargo test",
        "go test ./...",
        "uv run pytest",
        "make migrate",
        "npm run build",
        "make seed",
    ),
    "dep": (
        "Postgres",
        "Redis",
        "Kafka",
        "RabbitMQ",
        "Elasticsearch",
        "MinIO",
        "the auth API",
        "the payments provider",
        "MongoDB",
        "the mail relay",
    ),
    "person": ("Ana", "Bilal", "Chen", "Dara", "Emeka", "Fatima", "Goran", "Hana", "Ivo"),
    "err": (
        "connection refused",
        "timeout exceeded",
        "no such host",
        "certificate expired",
        "too many open files",
        "permission denied",
        "broken pipe",
        "out of memory",
    ),
    "sink": ("Datadog", "Loki", "CloudWatch", "Elastic", "Splunk", "Papertrail"),
    "pref": (
        "small pure functions",
        "early returns",
        "dataclasses over dicts",
        "explicit types",
        "table-driven tests",
        "no global state",
        "composition over inheritance",
    ),
}


def unit_vectors(count: int, dim: int, rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """``count`` random float32 vectors of length 1."""
    matrix = rng.standard_normal((count, dim), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def vocabulary(data: Path, extra: int, rng: np.random.Generator) -> list[str]:
    """Words of bench/data, most frequent first, then ``extra`` made-up identifiers."""
    counts: Counter[str] = Counter()
    for name in ("memories.jsonl", "queries.jsonl"):
        for line in (data / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                counts.update(re.findall(r"\w+", str(row.get("content", row.get("query", "")))))
    words = [word for word, _ in counts.most_common()]
    made_up: set[str] = set()
    while len(made_up) < extra:
        parts = rng.choice(len(SYLLABLES), size=int(rng.integers(2, 4)))
        made_up.add("".join(SYLLABLES[int(i)] for i in parts) + str(int(rng.integers(0, 100))))
    return words + sorted(made_up - set(words))


def sentences(vocab: Sequence[str], count: int, rng: np.random.Generator) -> list[str]:
    """``count`` sentences of 8 to 30 words drawn with probability ~ 1/rank."""
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    lengths = rng.integers(8, 31, size=count)
    picks = rng.choice(len(vocab), size=int(lengths.sum()), p=weights / weights.sum())
    out, start = [], 0
    for length in lengths.tolist():
        out.append(" ".join(vocab[i] for i in picks[start : start + length].tolist()) + ".")
        start += length
    return out


def distinct_texts(count: int, seed: int) -> list[str]:
    """``count`` different sentences about made-up services, from the templates."""
    rng = np.random.default_rng(seed)
    texts: dict[str, None] = {}
    while len(texts) < count:
        template = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
        values = {key: options[int(rng.integers(len(options)))] for key, options in SLOTS.items()}
        values.update(
            port=str(int(rng.integers(1024, 9999))),
            major=str(int(rng.integers(1, 9))),
            minor=str(int(rng.integers(0, 30))),
            days=str(int(rng.integers(2, 90))),
        )
        texts[template.format(**values)] = None
    return list(texts)


def write_memories(
    storage: MemoryStorage,
    store: str,
    start: int,
    vectors: npt.NDArray[np.float32],
    texts: Sequence[str],
    model: str,
) -> None:
    """Synthetic memories ``start`` .. ``start + len(texts)`` in ``store`` (one in ten global)."""
    for offset in range(0, len(texts), WRITE_BATCH):
        storage.write_memories(
            [
                NewMemory(
                    store=GLOBAL_STORE if (start + i) % GLOBAL_EVERY == 0 else store,
                    label=f"synthetic-{start + i}",
                    content=texts[i],
                    branch=None,
                    model=model,
                    embedding=vectors[i],
                )
                for i in range(offset, min(offset + WRITE_BATCH, len(texts)))
            ]
        )


def add_matchers(
    storage: DecisionStorage,
    store: str,
    model: str,
    start: int,
    vectors: npt.NDArray[np.float32],
    rng: np.random.Generator,
) -> None:
    """One matcher per vector, each linked to one or two new predictions with one confirm."""
    dim = vectors.shape[1]
    for offset, vector in enumerate(vectors):
        number = start + offset
        matcher = storage.add_matcher(store, f"synthetic situation {number}", model, vector)
        for extra in range(int(rng.integers(1, 3))):
            prediction = storage.add_prediction(
                store,
                f"synthetic preference {number}.{extra}",
                "",
                model,
                unit_vectors(1, dim, rng)[0],
                0.5,
            )
            storage.link(matcher.id, prediction.id)
            storage.add_evidence(
                prediction.id,
                signal="confirm",
                confirm=1.0,
                disconfirm=0.0,
                detail="",
                session=None,
                when=datetime.now(UTC),
                rule=confidence,
            )
