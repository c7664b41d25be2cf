"""The secret corpus (tests/data/secrets): every secret redacted, normal text kept.

The corpus is written by tests/data/secrets/generate.py; the figures are
printed per kind by bench/secrets_corpus.py.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest
from thatch.redact import redact

CORPUS = Path(__file__).parents[1] / "data" / "secrets"
#: Normal texts redaction may change (a false positive), at most.
MAX_FALSE_POSITIVES = 1


def read(name: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in (CORPUS / name).read_text().splitlines() if line.strip()]


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate", CORPUS / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SECRETS = read("secrets.jsonl")
NORMAL = read("normal.jsonl")


def test_the_corpus_is_large_enough_and_matches_its_generator() -> None:
    assert len(SECRETS) >= 53
    assert len(NORMAL) >= 51
    made = generator()
    assert [(e["kind"], e["text"], e["secret"]) for e in SECRETS] == made.secrets()
    assert [(e["kind"], e["text"]) for e in NORMAL] == made.normal()
    for entry in SECRETS:
        assert entry["secret"] in entry["text"], entry["kind"]


@pytest.mark.parametrize("entry", SECRETS, ids=[entry["kind"] for entry in SECRETS])
def test_every_corpus_secret_is_redacted(entry: dict[str, str]) -> None:
    result = redact(entry["text"])
    assert entry["secret"] not in result.text
    assert result.count >= 1
    assert redact(result.text).count == 0


def test_normal_texts_are_kept() -> None:
    changed = [entry for entry in NORMAL if redact(entry["text"]).text != entry["text"]]
    assert len(changed) <= MAX_FALSE_POSITIVES, changed
