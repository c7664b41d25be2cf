"""Queries on the model with int8 weight products (thatch_fastembed.int8_products), real files.

The twin of the installed model is built from its real file; what is checked is
that the graph's 36 weight products are rewritten and nothing else, that its
query vectors stay close to the float32 ones and rank the same texts first,
that stored passages never change, and that every way it can fail leaves
queries working in float32.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from thatch.plugin.config import Config
from thatch.plugin.errors import ConfigError
from thatch_fastembed import int8_products
from thatch_fastembed.embedder import FastEmbedder
from thatch_fastembed.int8_products import (
    NotRewritable,
    ensure_int8_model,
    int8_model_path,
    rewrite,
)
from thatch_fastembed.model_pack import DEFAULT_MODEL_NAME, PACK_SHA256, find_pack
from thatch_fastembed.plugin import thatch_embedder

QUERIES = [
    "which indentation does the user prefer?",
    "how do we deploy to production",
    "test_checkout_total fails about one run in five on CI",
    "the staging database port",
]
PASSAGES = [
    "The user indents with tabs, never spaces.",
    "Deploys go through the release pipeline after a tagged build.",
    "checkout tests are flaky on CI because of the shared fixture clock",
    "The staging database listens on port 6543, not 5432.",
    "Lunch is at noon on Fridays.",
]


def _ops(model: onnx.ModelProto) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in model.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return counts


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[FastEmbedder, FastEmbedder]:
    """The default embedder with int8 query products, and one with float32 ones."""
    cache = tmp_path_factory.mktemp("cache")
    int8 = FastEmbedder(DEFAULT_MODEL_NAME, cache_dir=cache / "int8")
    plain = FastEmbedder(DEFAULT_MODEL_NAME, cache_dir=cache / "plain", query_products="float32")
    return int8, plain


def test_the_rewrite_replaces_the_36_weight_products_and_keeps_every_other_node() -> None:
    original = onnx.load(str(find_pack().onnx))
    before = _ops(original)
    after = _ops(rewrite(onnx.load(str(find_pack().onnx))))
    assert after["DynamicQuantizeMatMul"] == 36
    assert after["MatMul"] == before["MatMul"] - 36  # the attention's own products stay
    # Each product's widening (a Cast and a Mul) goes with it; nothing else changes.
    assert after["Cast"] == before["Cast"] - 36
    assert after["Mul"] == before["Mul"] - 36
    kept = {op: n for op, n in before.items() if op not in {"MatMul", "Cast", "Mul"}}
    assert {op: after[op] for op in kept} == kept


def test_a_graph_without_such_products_is_not_rewritten() -> None:
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 2])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 2])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    with pytest.raises(NotRewritable, match="no int8 weight products"):
        rewrite(onnx.helper.make_model(graph))


@pytest.mark.slow
def test_int8_queries_stay_close_to_float32_ones_and_find_the_same_passages(
    pair: tuple[FastEmbedder, FastEmbedder],
) -> None:
    int8, plain = pair
    stored = int8.embed_passages(PASSAGES)
    # Passages never go through the twin: both embedders store the same vectors.
    np.testing.assert_array_equal(stored, plain.embed_passages(PASSAGES))
    for query in QUERIES:
        fast, exact = int8.embed_query(query), plain.embed_query(query)
        assert float(fast @ exact) > 0.98
        assert np.argmax(stored @ fast) == np.argmax(stored @ exact)
    assert int8.query_model_file == int8_model_path(PACK_SHA256, int8.models_dir)
    assert plain.query_model_file is not None
    assert "int8-products" not in str(plain.query_model_file)


@pytest.mark.slow
def test_the_twin_is_built_once_and_reused(tmp_path: Path) -> None:
    source = find_pack().onnx
    built = ensure_int8_model(source, PACK_SHA256, tmp_path)
    assert built is not None
    assert built.is_file()
    stamp = built.stat().st_mtime_ns
    assert ensure_int8_model(source, PACK_SHA256, tmp_path) == built
    assert built.stat().st_mtime_ns == stamp
    assert [p.name for p in built.parent.iterdir()] == [built.name]  # no leftover part file


@pytest.mark.slow
def test_without_the_onnx_package_queries_run_in_float32(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    embedder = FastEmbedder(DEFAULT_MODEL_NAME, cache_dir=tmp_path)
    with caplog.at_level(logging.INFO, logger=int8_products.__name__):
        vector = embedder.embed_query("which indentation does the user prefer?")
    assert vector.shape == (384,)
    assert embedder.query_model_file is not None
    assert "int8-products" not in str(embedder.query_model_file)
    assert "onnx package is not installed" in caplog.text


@pytest.mark.slow
def test_a_damaged_twin_falls_back_to_float32_and_is_built_again_next_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = FastEmbedder(DEFAULT_MODEL_NAME, cache_dir=tmp_path)
    twin = int8_model_path(PACK_SHA256, embedder.models_dir)
    twin.parent.mkdir(parents=True)
    twin.write_bytes(b"not an onnx model")
    with caplog.at_level(logging.WARNING):
        vector = embedder.embed_query("which indentation does the user prefer?")
    assert vector.shape == (384,)
    assert "int8-products" not in str(embedder.query_model_file)
    assert "failed to load" in caplog.text
    assert not twin.exists()  # removed, so that the next load builds it again
    again = FastEmbedder(DEFAULT_MODEL_NAME, cache_dir=tmp_path)
    again.embed_query("warm")
    assert again.query_model_file == twin
    assert twin.is_file()


@pytest.mark.slow
def test_a_cache_that_cannot_be_written_leaves_queries_in_float32(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = FastEmbedder(DEFAULT_MODEL_NAME, cache_dir=tmp_path)
    # Where the twin's folder should be, a file: it cannot be made.
    int8_model_path(PACK_SHA256, embedder.models_dir).parent.parent.mkdir(parents=True)
    int8_model_path(PACK_SHA256, embedder.models_dir).parent.write_text("in the way")
    with caplog.at_level(logging.WARNING, logger=int8_products.__name__):
        vector = embedder.embed_query("which indentation does the user prefer?")
    assert vector.shape == (384,)
    assert "int8-products" not in str(embedder.query_model_file)
    assert "could not write" in caplog.text


def test_the_config_key_chooses_the_products_and_a_bad_value_is_named(tmp_path: Path) -> None:
    def embedder_for(text: str) -> FastEmbedder:
        config = Config.load(home=tmp_path, environ={})
        config.paths.config_file.parent.mkdir(parents=True, exist_ok=True)
        config.paths.config_file.write_text(text)
        from thatch_fastembed.settings import FASTEMBED_TABLE

        loaded = Config.load(home=tmp_path, environ={}).with_tables([FASTEMBED_TABLE])
        made = thatch_embedder(config=loaded)
        assert isinstance(made, FastEmbedder)
        return made

    assert embedder_for("").query_products == "int8"
    chosen = embedder_for('[embedder.fastembed]\nquery_products = "float32"\n')
    assert chosen.query_products == "float32"
    with pytest.raises(ConfigError, match=r"query_products = 'int4'.*\"int8\".*\"float32\""):
        embedder_for('[embedder.fastembed]\nquery_products = "int4"\n')
