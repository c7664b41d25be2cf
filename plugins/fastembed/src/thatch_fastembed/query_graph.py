"""Rewrites of the query model's graph: fewer, larger operators, the same arithmetic.

Once its weight products run in int8 (:mod:`thatch_fastembed.int8_products`),
a query's run is mostly small operators, each with a fixed cost in
onnxruntime: it runs 279 of them on a prompt. Three rewrites, each of a
pattern the exporter writes out in full and onnxruntime's own fusions do not
recognise here, each computing what it replaces (up to float rounding):

- **biases**: each product's bias ``Add`` becomes the product's own bias input;
- **GELU**: ``x * 0.5 * (1 + erf(x / sqrt 2))``, five operators, becomes
  onnxruntime's ``Gelu``;
- **attention**: each layer's self-attention, about 26 operators (head
  splits, scaled scores, the mask, softmax, the heads merged again), becomes
  onnxruntime's ``MultiHeadAttention`` on the same query, key and value
  products and the same mask. This one is kept only if the query vectors do
  not move on a probe (texts as queries run: one at a time), so a graph that
  only looks like the pattern is never changed.

onnxruntime then runs 81 operators, and a prompt's run takes about an eighth
less time; with the query session's settings (thatch_fastembed.embedder),
about a third less (docs/benchmarks.md, "The query session since 2026-12-07").
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    import onnx

log = logging.getLogger(__name__)

#: The operator set of onnxruntime's own operators (``DynamicQuantizeMatMul``, ``Gelu``).
MICROSOFT_DOMAIN = "com.microsoft"
#: How far the attention rewrite may move a query vector on the probe (1 - cosine).
ATTENTION_TOLERANCE = 1e-4
#: How long the probe's child process may take (it builds two sessions).
PROBE_TIMEOUT_SECONDS = 120


def fold_all(model: onnx.ModelProto) -> None:
    """Every rewrite below, in order."""
    use_onnxruntime_operators(model)
    fold_biases(model.graph)
    fuse_gelus(model.graph)
    fuse_attentions(model)


def use_onnxruntime_operators(model: onnx.ModelProto) -> None:
    """Declare onnxruntime's operator set in ``model``, once."""
    from onnx import helper

    if not any(entry.domain == MICROSOFT_DOMAIN for entry in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MICROSOFT_DOMAIN, 1))


class _Graph:
    """Who writes and who reads each value of a graph, and its constants."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self.initializers = {tensor.name: tensor for tensor in graph.initializer}
        self.producer = {output: node for node in graph.node for output in node.output}
        self.readers: dict[str, list[onnx.NodeProto]] = {}
        for node in graph.node:
            for name in node.input:
                self.readers.setdefault(name, []).append(node)

    def constant(self, name: str) -> float | None:
        """The value of a one-element constant, else None."""
        from onnx import numpy_helper

        tensor = self.initializers.get(name)
        if tensor is None:
            return None
        values = numpy_helper.to_array(tensor)
        return float(values.reshape(-1)[0]) if values.size == 1 else None

    def only_reader(self, node: onnx.NodeProto, op_type: str) -> onnx.NodeProto | None:
        """The one node reading ``node``'s output, if it is an ``op_type``."""
        after = self.readers.get(node.output[0], [])
        return after[0] if len(after) == 1 and after[0].op_type == op_type else None

    def made_by(self, name: str, op_type: str) -> onnx.NodeProto | None:
        node = self.producer.get(name)
        return node if node is not None and node.op_type == op_type else None

    def other_constant(self, node: onnx.NodeProto, name: str) -> float | None:
        """The constant beside ``name`` among a two-input node's inputs."""
        rest = [value for value in node.input if value != name]
        return self.constant(rest[0]) if len(rest) == 1 else None


def fold_biases(graph: onnx.GraphProto) -> int:
    """Each int8 product followed by ``Add(product, bias)`` made the product with that bias.

    ``DynamicQuantizeMatMul`` adds its optional bias (a vector of one value
    per column) in float32 after the integer product, as the ``Add`` did.
    Returns how many were folded.
    """
    view = _Graph(graph)
    outputs = {value.name for value in graph.output}
    folded: set[int] = set()
    for node in graph.node:
        if node.op_type != "DynamicQuantizeMatMul" or len(node.input) > 3:
            continue
        add = view.only_reader(node, "Add")
        if add is None or node.output[0] in outputs or len(add.input) != 2:
            continue
        bias = [name for name in add.input if name != node.output[0]]
        tensor = view.initializers.get(bias[0]) if len(bias) == 1 else None
        if tensor is None or len(tensor.dims) != 1:
            continue
        # Inputs: A, B, b_scale, b_zero_point (none: symmetric int8), bias.
        node.input.extend(["", bias[0]])
        node.output[0] = add.output[0]
        folded.add(id(add))
    _keep(graph, [node for node in graph.node if id(node) not in folded])
    return len(folded)


def fuse_gelus(graph: onnx.GraphProto) -> int:
    """Each ``Mul(x, Mul(Add(Erf(Div(x, c)), 1), 0.5))`` made ``Gelu(x)``; returns how many.

    Only that exact chain, with its constants checked (c = sqrt 2), and only
    where nothing else reads the chain's inner values.
    """
    from onnx import helper

    view = _Graph(graph)
    gelus: dict[int, onnx.NodeProto] = {}  # the chain's last Mul -> its Gelu
    chains: set[int] = set()  # the chain's other four operators
    for erf in [node for node in graph.node if node.op_type == "Erf"]:
        div = view.made_by(erf.input[0], "Div")
        # The Erf reads the Div: it must be the only one that does.
        if div is None or len(view.readers[div.output[0]]) != 1:
            continue
        x = div.input[0]
        divisor = view.constant(div.input[1])
        if divisor is None or abs(divisor - 2**0.5) > 1e-4:
            continue
        plus_one = view.only_reader(erf, "Add")
        if plus_one is None or view.other_constant(plus_one, erf.output[0]) != 1.0:
            continue
        half = view.only_reader(plus_one, "Mul")
        if half is None or view.other_constant(half, plus_one.output[0]) != 0.5:
            continue
        times_x = view.only_reader(half, "Mul")
        if times_x is None or sorted(times_x.input) != sorted([x, half.output[0]]):
            continue
        gelus[id(times_x)] = helper.make_node(
            "Gelu", [x], [times_x.output[0]], name=f"{erf.name}.gelu", domain=MICROSOFT_DOMAIN
        )
        chains.update(id(node) for node in (div, erf, plus_one, half))
    _keep(graph, [gelus.get(id(node), node) for node in graph.node if id(node) not in chains])
    return len(gelus)


def fuse_attentions(model: onnx.ModelProto) -> int:
    """Each layer's written-out self-attention made ``MultiHeadAttention``; returns how many.

    Found from each ``Softmax``: its scores are ``MatMul(Mul(q, a), Mul(k, b))``
    plus a mask, with ``q`` the query product split into heads
    (``Transpose(Reshape(product, [batch, length, heads, size]))``); the
    weights then multiply the value product split the same way, and the heads
    are merged back (``Reshape(Transpose(...))``). The key and value products
    are found by walking back through their reshapes. The merged output is
    then made by ``MultiHeadAttention(q, k, v, mask)`` with ``heads`` and the
    scale ``a * b``; what only the old operators read goes. Checked on a
    probe afterwards: if the query vectors moved, the model is left as it was.
    """
    from onnx import TensorProto, helper

    graph = model.graph
    view = _Graph(graph)
    mask = next((value.name for value in graph.input if value.name == "attention_mask"), None)
    mask_int32 = f"{mask}.int32" if mask is not None else ""
    fused: dict[int, onnx.NodeProto] = {}  # the heads' merging Reshape -> the attention
    for softmax in [node for node in graph.node if node.op_type == "Softmax"]:
        attention = _attention_at(view, softmax, mask_int32)
        if attention is not None:
            merged, node = attention
            fused[id(merged)] = node
    if not fused:
        return 0
    import tempfile
    from pathlib import Path

    # Both models go to files, one serialized copy in memory at a time: the
    # twin is built in the daemon's first start, whose peak this would raise.
    with tempfile.TemporaryDirectory(prefix="thatch-attention-probe-") as folder:
        before, after = Path(folder, "before.onnx"), Path(folder, "after.onnx")
        before.write_bytes(model.SerializeToString())
        nodes = [fused.get(id(node), node) for node in graph.node]
        if mask is not None:
            cast = helper.make_node(
                "Cast", [mask], [mask_int32], to=TensorProto.INT32, name=f"{mask}.cast_int32"
            )
            nodes.insert(0, cast)
        _keep(graph, _reachable(graph, nodes))
        use_onnxruntime_operators(model)
        after.write_bytes(model.SerializeToString())
        moved = _probe_difference(before, after)
        if moved is None or moved > ATTENTION_TOLERANCE:
            log.info("the attention rewrite moved the query vectors (%s): not kept", moved)
            model.ParseFromString(before.read_bytes())
            return 0
    return len(fused)


def _attention_at(
    view: _Graph, softmax: onnx.NodeProto, mask: str
) -> tuple[onnx.NodeProto, onnx.NodeProto] | None:
    """The heads' merging Reshape of the attention around ``softmax``, and its replacement."""
    from onnx import helper

    scored = view.made_by(softmax.input[0], "Add")
    if scored is None:
        return None
    products = [view.made_by(name, "MatMul") for name in scored.input]
    scores = next((node for node in products if node is not None), None)
    if scores is None:
        return None
    scaled_q, scaled_k = (view.made_by(name, "Mul") for name in scores.input)
    if scaled_q is None or scaled_k is None:
        return None
    q_heads, q_scale = _scaled(view, scaled_q)
    k_heads, k_scale = _scaled(view, scaled_k)
    if q_heads is None or k_heads is None or q_scale is None or k_scale is None:
        return None
    split = _head_split(view, q_heads)
    if split is None:
        return None
    query, heads = split
    key = _through_reshapes(view, k_heads)
    weights = softmax.output[0]
    # Where(IsNaN(weights), 0, weights): a row whose every key is masked gives 0, not NaN.
    readers = view.readers.get(weights, [])
    cleaned = next((node for node in readers if node.op_type == "Where"), None)
    if cleaned is not None:
        weights = cleaned.output[0]
    mixed = next((node for node in view.readers.get(weights, []) if node.op_type == "MatMul"), None)
    if mixed is None or mixed.input[0] != weights:
        return None
    value = _through_reshapes(view, mixed.input[1])
    joined = view.only_reader(mixed, "Transpose")
    merged = view.only_reader(joined, "Reshape") if joined is not None else None
    if merged is None or key is None or value is None:
        return None
    node = helper.make_node(
        "MultiHeadAttention",
        [query, key, value, "", mask],
        [merged.output[0]],
        name=f"{softmax.name}.attention",
        domain=MICROSOFT_DOMAIN,
        num_heads=heads,
        scale=q_scale * k_scale,
    )
    return merged, node


def _scaled(view: _Graph, mul: onnx.NodeProto) -> tuple[str | None, float | None]:
    """The value and the constant of ``Mul(value, constant)``."""
    for position, name in enumerate(mul.input):
        factor = view.constant(name)
        if factor is not None and len(mul.input) == 2:
            return mul.input[1 - position], factor
    return None, None


def _head_split(view: _Graph, name: str) -> tuple[str, int] | None:
    """For ``Transpose(Reshape(product, [b, n, heads, size]))``: the product and ``heads``.

    The exporter may write ``heads`` as -1 (inferred); it is then the
    product's width over ``size``.
    """
    transpose = view.made_by(name, "Transpose")
    reshape = view.made_by(transpose.input[0], "Reshape") if transpose is not None else None
    if reshape is None:
        return None
    shape = view.made_by(reshape.input[1], "Concat")
    if shape is None or len(shape.input) != 4:
        return None
    heads = view.constant(shape.input[2])
    size = view.constant(shape.input[3])
    if heads is None or size is None or size < 1:
        return None
    if heads == -1:
        width = _width(view, reshape.input[0])
        heads = width / size if width is not None else 0
    if heads < 1 or heads != int(heads):
        return None
    return reshape.input[0], int(heads)


def _width(view: _Graph, name: str) -> int | None:
    """The columns of the weight of the product that made ``name``, if it has one."""
    product = view.producer.get(name)
    if product is None or product.op_type not in ("MatMul", "DynamicQuantizeMatMul"):
        return None
    weight = view.initializers.get(product.input[1])
    return int(weight.dims[-1]) if weight is not None and len(weight.dims) == 2 else None


def _through_reshapes(view: _Graph, name: str) -> str | None:
    """The value before the Reshapes and Transposes ``name`` was made by: the product."""
    for _ in range(8):
        node = view.producer.get(name)
        if node is None or node.op_type not in ("Reshape", "Transpose"):
            return name
        name = node.input[0]
    return None


def _reachable(graph: onnx.GraphProto, nodes: list[onnx.NodeProto]) -> list[onnx.NodeProto]:
    """``nodes`` (in order) that the graph's outputs depend on."""
    needed = {value.name for value in graph.output}
    kept = []
    for node in reversed(nodes):
        if any(output in needed for output in node.output):
            kept.append(node)
            needed.update(name for name in node.input if name)
    return kept[::-1]


def _probe_difference(before: Path, after: Path) -> float | None:
    """How far the rewrite moved the model's query vectors on a probe; None if unknown.

    Measured in a child process (``python -m thatch_fastembed.query_graph``):
    building an onnxruntime session of this model takes about 170 MB for a
    moment, and two of them in the daemon's first start would raise its peak
    by that much. The child's answer is 1 - the least cosine, see
    :func:`vector_distance`.
    """
    import subprocess
    import sys

    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__, str(before), str(after)],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("the attention rewrite could not be checked: %s", exc)
        return None
    try:
        return float(done.stdout.strip())
    except ValueError:
        log.info("the attention rewrite could not be checked: %s", done.stderr.strip()[-300:])
        return None


def vector_distance(before: str, after: str) -> float:
    """1 - the least cosine between the two models' query vectors on the probe.

    The probe is what the query session runs: one text at a time, unpadded
    (of 16 and of 5 word pieces); a vector is the mean of the token states
    at unit length, as the embedder makes it. Vectors, not raw states: the
    int8 products quantize their inputs, so float rounding that differs in
    the last bit can move a state by a whole step now and then, and a vector
    hardly at all.
    """
    import numpy as np
    import onnxruntime as ort

    cosine = 1.0
    sessions = [
        ort.InferenceSession(path, providers=["CPUExecutionProvider"]) for path in (before, after)
    ]
    names = [value.name for value in sessions[0].get_inputs()]
    for length in (16, 5):
        ids = (np.arange(length, dtype=np.int64).reshape(1, length) * 37) % 1000 + 1000
        inputs = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        feeds = {name: inputs[name] for name in names}
        first, second = (session.run(None, feeds)[0][0].mean(axis=0) for session in sessions)
        product = first @ second / (np.linalg.norm(first) * np.linalg.norm(second))
        cosine = min(cosine, float(product))
    return 1.0 - cosine


def _keep(graph: onnx.GraphProto, nodes: list[onnx.NodeProto]) -> None:
    """The graph's nodes made ``nodes``, and the constants none of them reads dropped."""
    del graph.node[:]
    graph.node.extend(nodes)
    drop_unread_initializers(graph)


def drop_unread_initializers(graph: onnx.GraphProto) -> None:
    """The constants no node reads any more taken out (onnxruntime warns of each)."""
    still_read = {name for node in graph.node for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in still_read]
    del graph.initializer[:]
    graph.initializer.extend(kept)


if __name__ == "__main__":
    # The probe's child process (see _probe_difference): prints the distance.
    import sys

    print(vector_distance(sys.argv[1], sys.argv[2]))
