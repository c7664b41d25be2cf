"""bench/firing_models.py: the firing rules on another embedding model.

The script's figures come from a real model (docs/benchmarks.md, "Firing by
embedding model"); these checks need none. They cover what a user of the
script meets first (clear errors for a missing package or a wrong folder, the
prefixes reaching the model) and the two figures it sums each set up with.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import numpy as np
import pytest
from bench_scripts import bench_script


@pytest.fixture(scope="module")
def script() -> Iterator[ModuleType]:
    """bench/firing_models.py, imported as the bench scripts import each other."""
    with bench_script("firing_models") as module:
        yield module


@pytest.fixture(scope="module")
def folder_module() -> Iterator[ModuleType]:
    """bench/sentence_transformers_folder.py, the embedder both model benches share."""
    with bench_script("sentence_transformers_folder") as module:
        yield module


class FakeSentenceTransformer:
    """Records the texts it is asked to encode; each text's vector is its length, one-hot."""

    seen: ClassVar[list[str]] = []

    def __init__(self, folder: str, device: str) -> None:
        self.folder = folder

    def encode(
        self, texts: Sequence[str], batch_size: int, normalize_embeddings: bool
    ) -> np.ndarray:
        FakeSentenceTransformer.seen.extend(texts)
        vectors = np.zeros((len(texts), 64), dtype=np.float64)
        vectors[np.arange(len(texts)), [len(text) % 64 for text in texts]] = 1.0
        return vectors


def fake_package(monkeypatch: pytest.MonkeyPatch) -> None:
    package = ModuleType("sentence_transformers")
    package.SentenceTransformer = FakeSentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", package)


def test_a_missing_package_names_the_option_and_the_fix(
    folder_module: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # None in sys.modules makes the import fail as an absent package does.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(SystemExit) as raised:
        folder_module.SentenceTransformersEmbedder(tmp_path)
    message = str(raised.value)
    assert f"--sentence-transformers {tmp_path}" in message
    assert "install it" in message
    assert "drop the option" in message


def test_a_folder_without_modules_json_is_refused(
    folder_module: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_package(monkeypatch)
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(SystemExit) as raised:
        folder_module.SentenceTransformersEmbedder(tmp_path)
    assert "no modules.json" in str(raised.value)
    assert str(tmp_path) in str(raised.value)


def test_prefixes_reach_the_model_and_vectors_are_float32(
    folder_module: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_package(monkeypatch)
    (tmp_path / "modules.json").write_text("[]", encoding="utf-8")
    FakeSentenceTransformer.seen.clear()
    embedder = folder_module.SentenceTransformersEmbedder(tmp_path, "query: ", "passage: ")
    query = embedder.embed_query("fix it")
    passages = embedder.embed_passages(["a", "bb"])
    assert FakeSentenceTransformer.seen == ["query: fix it", "passage: a", "passage: bb"]
    assert query.dtype == np.float32
    assert passages.shape == (2, 64)
    assert embedder.model_id == f"sentence-transformers:{tmp_path.name}"


def tiny_set(script: ModuleType, unrelated_near: bool) -> object:
    """Two situations, a task prompt on each, two unrelated prompts; 8-d one-hot vectors.

    ``script`` is asked for so that bench/ is on the path for firing_measures.
    """
    from firing_measures import FiringSet

    eye = np.eye(8, dtype=np.float32)
    # Unrelated prompts either sit on a matcher (nothing can tell them apart)
    # or far from both (any threshold above 0 keeps them silent).
    unrelated = [eye[0], eye[1]] if unrelated_near else [eye[6], eye[7]]
    return FiringSet(
        situations=[{"id": "a"}, {"id": "b"}],
        prompts=[{"text": str(i)} for i in range(4)],
        matchers=np.stack([eye[0], eye[1]]),
        predictions=np.stack([eye[2], eye[3]]),
        queries=np.stack([eye[0], eye[1], *unrelated]),
        expect=np.asarray([0, 1, -1, -1]),
        kinds=np.asarray(["task", "task", "unrelated", "unrelated"]),
    )


@pytest.mark.parametrize(("unrelated_near", "expected"), [(False, 1.0), (True, 0.0)])
def test_the_summary_reads_what_the_rules_allow(
    script: ModuleType,
    capsys: pytest.CaptureFixture[str],
    unrelated_near: bool,
    expected: float,
) -> None:
    data = tiny_set(script, unrelated_near)
    eye = np.eye(8, dtype=np.float32)
    # Generic prompts that lean on one matcher each, so every matcher's
    # background cosines have a spread (the z-score rule divides by it).
    background = np.stack([eye[0] + eye[4], eye[1] + eye[5], eye[4], eye[5]]) / np.sqrt(
        [[2.0], [2.0], [1.0], [1.0]]
    )
    axis = eye[5]
    best, quiet = script.report(data, axis, background)
    assert (best, quiet) == (expected, expected)
    printed = capsys.readouterr().out
    assert "among the 5 best for 1.000" in printed
    assert "plain cosine" in printed
