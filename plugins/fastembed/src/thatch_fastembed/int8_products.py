"""The installed model with its weight products computed in int8, for query embedding.

The pack stores each weight matrix as int8 with a float scale per column, and
the graph widens it before every product: ``MatMul(x, Mul(Cast(W), scale))``.
So onnxruntime runs all 36 weight products in float32, 69 % of a query's
run (docs/benchmarks.md, "The model's run on the prompt"). Here each of them
becomes onnxruntime's ``DynamicQuantizeMatMul`` on the same int8 ``W`` and
``scale``: the activations are quantized to 8 bits as the product runs, and
the product is computed in integers, about twice as fast. The weights are
untouched, so the model is the same; the query vectors move a little (the
activations lose precision), measured in docs/benchmarks.md.

Rewrites that keep the arithmetic (up to float rounding) follow
(:mod:`thatch_fastembed.query_graph`), since a query's run is mostly small
operators once the products are fast.

Only queries use it: stored passages keep the exact float32 arithmetic, so
what is saved never depends on this file. Building it needs the ``onnx``
package to edit the graph; it is written once per model file under the
cache's models folder and read by onnxruntime alone afterwards.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from thatch_fastembed import query_graph
from thatch_fastembed.model_pack import write_atomic

if TYPE_CHECKING:
    import onnx

log = logging.getLogger(__name__)

#: Bumped whenever the rewrite changes, so that an older file is not reused.
REWRITE_VERSION = 2
#: Whether the twin gets the rewrites of :mod:`thatch_fastembed.query_graph`;
#: off only to time the twin without them (bench/hook_latency.py --variant).
FOLDS = True


class NotRewritable(ValueError):
    """The graph holds no weight product of the pack's shape: nothing to gain."""


def int8_model_path(sha256: str, models_dir: Path) -> Path:
    """Where the int8-products twin of the model file of ``sha256`` is kept."""
    unfolded = "" if FOLDS else "-unfolded"
    return models_dir / "int8-products" / f"{sha256[:16]}-v{REWRITE_VERSION}{unfolded}.onnx"


def ensure_int8_model(source: Path, sha256: str, models_dir: Path) -> Path | None:
    """The twin of ``source``, built now if it is not there yet; None if it cannot be.

    Fails soft: without the ``onnx`` package, or for a graph of another shape,
    the caller keeps the float32 session (slower, never wrong).
    """
    target = int8_model_path(sha256, models_dir)
    if target.is_file():
        return target
    try:
        import onnx
    except ImportError:
        log.info("embedding queries in float32: the onnx package is not installed")
        return None
    try:
        model = rewrite(onnx.load(str(source)), folds=FOLDS)
    except NotRewritable as exc:
        log.info("embedding queries in float32: %s", exc)
        return None
    except Exception as exc:  # a damaged or unexpected file: the float32 session still works
        log.warning("embedding queries in float32: could not rewrite %s (%s)", source, exc)
        return None
    try:
        # A daemon that starts while another writes never reads half a file.
        write_atomic(target, model.SerializeToString())
    except OSError as exc:  # a full disk or a read-only cache: float32 still works
        log.warning("embedding queries in float32: could not write %s (%s)", target, exc)
        return None
    return target


def rewrite(model: onnx.ModelProto, *, folds: bool = True) -> onnx.ModelProto:
    """``model`` with each ``MatMul(x, Mul(Cast(W int8), scale [1, N]))`` computed in int8.

    ``folds``: the rewrites of :mod:`thatch_fastembed.query_graph` that follow
    (biases, GELUs, attentions); the bench leaves them out to time what they give.
    """
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1

    replaced: dict[int, onnx.NodeProto] = {}  # position of the MatMul -> its int8 product
    dropped: set[int] = set()
    positions = {id(node): index for index, node in enumerate(graph.node)}
    scales: list[onnx.TensorProto] = []
    for index, node in enumerate(graph.node):
        if node.op_type != "MatMul" or node.domain:
            continue
        widen = producer.get(node.input[1])
        if widen is None or widen.op_type != "Mul" or uses.get(widen.output[0]) != 1:
            continue
        cast = producer.get(widen.input[0])
        scale = initializers.get(widen.input[1])
        if cast is None or cast.op_type != "Cast" or scale is None or uses.get(cast.output[0]) != 1:
            continue
        weight = initializers.get(cast.input[0])
        if weight is None or weight.data_type != TensorProto.INT8 or len(weight.dims) != 2:
            continue
        columns = weight.dims[1]
        values = numpy_helper.to_array(scale)
        if values.size != columns or values.dtype.name != "float32":
            continue  # onnxruntime's product takes one scale per column, or one in all
        flat = numpy_helper.from_array(values.reshape(columns), f"{scale.name}.per_column")
        scales.append(flat)
        replaced[index] = helper.make_node(
            "DynamicQuantizeMatMul",
            [node.input[0], weight.name, flat.name],
            [node.output[0]],
            name=f"{node.name}.int8",
            domain=query_graph.MICROSOFT_DOMAIN,
        )
        dropped.update((positions[id(widen)], positions[id(cast)]))
    if not replaced:
        raise NotRewritable("the model has no int8 weight products of the expected shape")

    nodes = [
        replaced.get(index, node) for index, node in enumerate(graph.node) if index not in dropped
    ]
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(scales)
    # The per-column scales replace the [1, N] ones wherever nothing else reads those.
    query_graph.drop_unread_initializers(graph)
    query_graph.use_onnxruntime_operators(model)
    if folds:
        query_graph.fold_all(model)
    return model
