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
from thatch_fastembed import int8_products, query_graph
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
    after = _ops(rewrite(onnx.load(str(find_pack().onnx)), folds=False))
    assert after["DynamicQuantizeMatMul"] == 36
    assert after["MatMul"] == before["MatMul"] - 36  # the attention's own products stay
    # Each product's widening (a Cast and a Mul) goes with it; nothing else changes.
    assert after["Cast"] == before["Cast"] - 36
    assert after["Mul"] == before["Mul"] - 36
    kept = {op: n for op, n in before.items() if op not in {"MatMul", "Cast", "Mul"}}
    assert {op: after[op] for op in kept} == kept


def test_the_folds_leave_one_operator_per_bias_gelu_and_attention() -> None:
    before = _ops(onnx.load(str(find_pack().onnx)))
    after = _ops(rewrite(onnx.load(str(find_pack().onnx))))
    assert after["DynamicQuantizeMatMul"] == 36
    assert after["Gelu"] == 6
    assert after["MultiHeadAttention"] == 6
    # The layer norms and the embeddings' lookups stay as they were.
    assert after["LayerNormalization"] == before["LayerNormalization"]
    assert after["Gather"] == before["Gather"]
    for gone in ("MatMul", "Softmax", "Erf", "Transpose", "Reshape", "Where", "IsNaN"):
        assert gone not in after, gone
    assert sum(after.values()) < sum(before.values()) / 2


def _run(model: onnx.ModelProto, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    return np.asarray(session.run(None, inputs)[0])


@pytest.mark.slow
def test_the_folds_leave_a_query_vector_where_it_was() -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(find_pack().tokenizer))
    tokenizer.no_padding()
    plain = rewrite(onnx.load(str(find_pack().onnx)), folds=False)
    folded = rewrite(onnx.load(str(find_pack().onnx)))
    # As the query session runs them: one text at a time, unpadded.
    for text in [*QUERIES, *PASSAGES, " ".join(PASSAGES)]:
        ids = np.asarray([tokenizer.encode(text).ids], dtype=np.int64)
        mask = np.ones_like(ids)
        # The query vector: the mean of the states, at unit length. Float
        # rounding that differs by one int8 step in an activation moves a
        # state, and the vector hardly: as much as onnxruntime's own layer-norm fusion
        # moves it (docs/benchmarks.md, "The model's run on the prompt").
        vectors = [_run(model, ids, mask)[0].mean(axis=0) for model in (plain, folded)]
        first, second = (vector / np.linalg.norm(vector) for vector in vectors)
        assert float(first @ second) > 0.999, text


@pytest.mark.parametrize("moved", [1.0, None])
def test_an_attention_rewrite_that_moves_the_output_is_not_kept(
    monkeypatch: pytest.MonkeyPatch, moved: float | None
) -> None:
    model = rewrite(onnx.load(str(find_pack().onnx)), folds=False)
    query_graph.fold_biases(model.graph)
    unchanged = model.SerializeToString()
    # The probe found a difference, or could not run: the model stays as it was.
    monkeypatch.setattr(query_graph, "_probe_difference", lambda before, after: moved)
    assert query_graph.fuse_attentions(model) == 0
    assert model.SerializeToString() == unchanged


def _gelu_graph(divisor: float) -> onnx.ModelProto:
    """``y = x * 0.5 * (1 + erf(x / divisor))`` written out, as the exported model has it."""
    helper, numpy_helper = onnx.helper, onnx.numpy_helper
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    constants = [
        numpy_helper.from_array(np.array(value, np.float32), name)
        for name, value in (("c", divisor), ("one", 1.0), ("half", 0.5))
    ]
    nodes = [
        helper.make_node("Div", ["x", "c"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["a"]),
        helper.make_node("Mul", ["half", "a"], ["h"]),
        helper.make_node("Mul", ["x", "h"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "gelu", [x], [y], initializer=constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_written_out_gelu_becomes_one_operator_with_the_same_values() -> None:
    import onnxruntime as ort

    model = _gelu_graph(2**0.5)
    inputs = {"x": np.linspace(-3, 3, 6, dtype=np.float32).reshape(2, 3)}
    expected = ort.InferenceSession(model.SerializeToString()).run(None, inputs)[0]
    assert query_graph.fuse_gelus(model.graph) == 1
    assert _ops(model) == {"Gelu": 1}
    assert [tensor.name for tensor in model.graph.initializer] == []  # the constants go too
    model.opset_import.append(onnx.helper.make_opsetid(query_graph.MICROSOFT_DOMAIN, 1))
    fused = ort.InferenceSession(model.SerializeToString()).run(None, inputs)[0]
    np.testing.assert_allclose(fused, expected, atol=1e-6)


def test_a_chain_with_other_constants_is_not_taken_for_a_gelu() -> None:
    model = _gelu_graph(2.0)
    assert query_graph.fuse_gelus(model.graph) == 0
    assert _ops(model)["Erf"] == 1


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


def test_an_attention_rewrite_whose_probe_cannot_run_is_not_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    model = rewrite(onnx.load(str(find_pack().onnx)), folds=False)
    query_graph.fold_biases(model.graph)
    unchanged = model.SerializeToString()
    # The probe's child process cannot start: nothing tells the rewrite is right.
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    assert query_graph.fuse_attentions(model) == 0
    assert model.SerializeToString() == unchanged


@pytest.mark.slow
def test_the_probe_measures_a_wrong_attention_as_moved(tmp_path: Path) -> None:
    """A rewrite with the wrong scale is caught: the probe sees the vectors move."""
    model = rewrite(onnx.load(str(find_pack().onnx)), folds=False)
    query_graph.fold_biases(model.graph)
    before = tmp_path / "before.onnx"
    before.write_bytes(model.SerializeToString())
    assert query_graph.fuse_attentions(model) == 6
    for node in model.graph.node:
        if node.op_type == "MultiHeadAttention":
            for attribute in node.attribute:
                if attribute.name == "scale":
                    attribute.f *= 2
    after = tmp_path / "after.onnx"
    after.write_bytes(model.SerializeToString())
    assert (
        query_graph.vector_distance(str(before), str(after)) > 100 * query_graph.ATTENTION_TOLERANCE
    )
