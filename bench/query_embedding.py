"""Where a prompt's embedding time goes, and what the model's run could give up.

A prompt hook waits for the daemon to embed the prompt (``embed_query``); on
this machine that run is most of the daemon's part of ``thatch flush-tools``
(bench/hook_latency.py). This script times the model's run alone, on the
bench's hook prompt (bench/hook_payloads.py) tokenized as the embedder does
it (the pack's tokenizer, cut at ``QUERY_MAX_TOKENS``), in one process:

- **settings**: onnxruntime sessions of the installed model, interleaved
  run by run: the shipped query session (the model with int8 weight
  products, ``thatch_fastembed.int8_products``, on ``QUERY_THREADS``
  threads with ``QUERY_SESSION_CONFIG``, leaving out
  ``QUERY_DISABLED_OPTIMIZERS``); the same on two threads; the same with
  onnxruntime's SkipLayerNormalization fusion on; the int8 model without
  its bias, GELU and attention rewrites; the query session as it was on 2026-12-02
  (no rewrites but the products, two threads, the fusion on); the model's
  own file as passages run it (every product in float32) with the query
  session's settings, on two threads, on two threads whose workers spin,
  and on two spinning threads told to stop spinning when a run ends
  (``session.force_spinning_stop``). Each row gives the run's median wall
  time and the process's CPU time per run counted over the run and the
  50 ms after it, where spinning workers keep burning a core.
- **operators** (``--ops``): onnxruntime's own profile of the float32
  session, of the int8 one as it was on 2026-12-02 and of the shipped one,
  time by operator type, with how many of each ran, and the
  multiply-adds of the weight products (from the model's dimensions) over
  their time.
- **int8 against float32** (``--compare``): the query vectors of the
  shipped session compared with those of the float32 session, of the int8
  session as it was on 2026-12-02 and of the shipped one with the layer-norm
  fusion on: the cosine between them on every query of
  bench/data/queries.jsonl and every prompt of the firing set
  (bench/data/firing), and what the change does to what they find — vector
  recall@5 of bench/data's 121 memories, and plain-cosine firing of the
  firing set at the shipped threshold — with the stored side (memories,
  matchers) embedded as passages are, in float32, in both.

The first row checks the script's own path: its shipped-session vectors
against ``embed_query``'s (cosine 1.000 expected).

    uv run python bench/query_embedding.py
    uv run python bench/query_embedding.py --ops --runs 100
    uv run python bench/query_embedding.py --compare
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnx
import onnxruntime as ort
import thatch
from data_sets import DATA, read_jsonl
from hook_payloads import PROMPT
from thatch.plugin.embedder import Embedder
from thatch_fastembed import embedder as shipped
from thatch_fastembed.int8_products import ensure_int8_model, rewrite
from thatch_fastembed.model_pack import PACK_SHA256, find_pack
from tokenizers import Tokenizer

Vectors = npt.NDArray[np.float32]
Feeds = dict[str, npt.NDArray[np.int64]]
#: Time the CPU clock keeps counting after a run: spinning workers burn it.
AFTER_RUN_S = 0.05
#: The decision model's shipped firing threshold (docs/benchmarks.md).
FIRE_THRESHOLD = 0.40
#: Dimensions of all-MiniLM-L6-v2, for the multiply-adds of its weight products.
LAYERS, HIDDEN, INNER = 6, 384, 1536


def feeds_of(tokenizer: Tokenizer, text: str, names: Sequence[str]) -> Feeds:
    """The model's inputs for one text, cut as a query is."""
    ids = tokenizer.encode(text).ids[: shipped.QUERY_MAX_TOKENS]
    length = len(ids)
    inputs = {
        "input_ids": np.asarray([ids], dtype=np.int64),
        "attention_mask": np.ones((1, length), dtype=np.int64),
        "token_type_ids": np.zeros((1, length), dtype=np.int64),
    }
    return {name: inputs[name] for name in names}


def session(
    path: str,
    threads: int,
    config: Mapping[str, str],
    disabled: Sequence[str] = (),
    **options: object,
) -> ort.InferenceSession:
    """An onnxruntime session of ``path`` with these threads, session entries and
    graph rewrites left out."""
    settings = ort.SessionOptions()
    settings.intra_op_num_threads = threads
    settings.inter_op_num_threads = 1
    for key, value in config.items():
        settings.add_session_config_entry(key, value)
    for name, value in options.items():
        setattr(settings, name, value)
    return ort.InferenceSession(
        path, settings, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled)
    )


def shipped_session(path: str, **options: object) -> ort.InferenceSession:
    """A session of ``path`` made by the embedder's own query-session code, with ``options``."""
    settings = shipped.query_session_options()
    for name, value in options.items():
        setattr(settings, name, value)
    return shipped.open_query_session(Path(path), ["CPUExecutionProvider"], settings)


def twin_without_folds(source: Path, folder: str) -> str:
    """The int8-products model without the rewrites of thatch_fastembed.query_graph,
    written in ``folder``."""
    model = rewrite(onnx.load(str(source)), folds=False)
    target = os.path.join(folder, "int8-products-unfolded.onnx")
    onnx.save(model, target)
    return target


def vector(run: ort.InferenceSession, feeds: Feeds) -> Vectors:
    """The query vector: mean of the token states (one unpadded text), unit length."""
    states = run.run(None, feeds)[0][0]
    mean = states.mean(axis=0)
    return (mean / np.linalg.norm(mean)).astype(np.float32)


def timings(
    sessions: Mapping[str, ort.InferenceSession], feeds: Feeds, runs: int
) -> dict[str, tuple[float, float]]:
    """Per session: median wall ms of a run, and median CPU ms over a run and the pause after it."""
    wall: dict[str, list[float]] = {name: [] for name in sessions}
    cpu: dict[str, list[float]] = {name: [] for name in sessions}
    names = list(sessions)
    for number in range(runs + 5):
        # Rotate which session goes first; the first 5 rounds warm up.
        for name in names[number % len(names) :] + names[: number % len(names)]:
            cpu_start, start = time.process_time(), time.perf_counter()
            sessions[name].run(None, feeds)
            elapsed = time.perf_counter() - start
            time.sleep(AFTER_RUN_S)
            if number >= 5:
                wall[name].append(elapsed * 1000)
                cpu[name].append((time.process_time() - cpu_start) * 1000)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in names}


def operator_profile(
    open_session: Callable[..., ort.InferenceSession], feeds: Feeds, runs: int
) -> tuple[dict[str, float], dict[str, int], float]:
    """Mean ms a run by operator type, how many of each run, and the weight products'
    multiply-adds a second (G).

    ``open_session(**options)`` makes the session, with the profiling options given.
    """
    with tempfile.TemporaryDirectory(prefix="thatch-ort-profile-") as folder:
        run = open_session(
            enable_profiling=True, profile_file_prefix=os.path.join(folder, "profile")
        )
        for _ in range(runs):
            run.run(None, feeds)
        events = json.loads(Path(run.end_profiling()).read_text(encoding="utf-8"))
    by_op: collections.Counter[str] = collections.Counter()
    counted: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            by_op[event["args"]["op_name"]] += event["dur"] / 1000 / runs
            counted[event["args"]["op_name"]] += 1
    tokens = feeds["input_ids"].shape[1]
    # Per layer: query, key, value and output (HIDDEN x HIDDEN), the two feed-forward products.
    macs = tokens * LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * INNER)
    matmul_ms = sum(by_op.get(op, 0.0) for op in ("MatMul", "FusedMatMul", "DynamicQuantizeMatMul"))
    each_run = {op: count // runs for op, count in counted.items()}
    return dict(by_op.most_common()), each_run, macs / (matmul_ms / 1000) / 1e9


def recall_at_5(queries: Vectors, memories: Vectors, relevant: Sequence[set[int]]) -> float:
    """Share of each query's relevant memories in its 5 nearest, averaged."""
    best = np.argsort(-(queries @ memories.T), axis=1)[:, :5]
    return float(
        np.mean(
            [len(set(row) & want) / len(want) for row, want in zip(best, relevant, strict=True)]
        )
    )


def firing(
    queries: Vectors, matchers: Vectors, expect: npt.NDArray[np.int64]
) -> tuple[float, float]:
    """Plain cosine at the shipped threshold: task prompts that fire right, unrelated that fire."""
    fired = queries @ matchers.T >= FIRE_THRESHOLD
    related = expect >= 0
    right = fired[np.flatnonzero(related), expect[related]]
    return float(np.mean(right)), float(np.mean(fired[~related].any(axis=1)))


def compare_products(
    embedder: Embedder,
    embed_with: Callable[[ort.InferenceSession, str], Vectors],
    runs: Mapping[str, ort.InferenceSession],
) -> None:
    """Cosines of each session's query vectors to the shipped one's (the last), and what
    each finds."""
    memories = read_jsonl(DATA / "memories.jsonl")
    labels = {str(m["label"]): i for i, m in enumerate(memories)}
    # The queries with an answer (the others are asked to find nothing).
    queries = [q for q in read_jsonl(DATA / "queries.jsonl") if q["relevant"]]
    stored = embedder.embed_passages([str(m["content"]) for m in memories])
    relevant = [{labels[label] for label in q["relevant"]} for q in queries]
    situations = read_jsonl(DATA / "firing" / "situations.jsonl")
    prompts = read_jsonl(DATA / "firing" / "prompts.jsonl")
    index = {str(s["id"]): i for i, s in enumerate(situations)}
    # The task prompts and the unrelated ones, as bench/prediction_firing.py counts them.
    picked = [p for p in prompts if p["kind"] == "task" or str(p["kind"]).startswith("unrelated")]
    expect = np.asarray([index[str(p["expect"][0])] if p["expect"] else -1 for p in picked])
    matchers = embedder.embed_passages([str(s["matcher"]) for s in situations])
    texts = {
        "queries": [str(q["query"]) for q in queries],
        "firing prompts": [str(p["text"]) for p in picked],
    }
    found: dict[str, dict[str, Vectors]] = {}
    for name, run in runs.items():
        found[name] = {
            kind: np.stack([embed_with(run, t) for t in items]) for kind, items in texts.items()
        }
    shipped_name = list(runs)[-1]
    for name in list(runs)[:-1]:
        print(f"\n{shipped_name} against {name}, query vectors:")
        for kind in texts:
            cosines = np.sum(found[name][kind] * found[shipped_name][kind], axis=1)
            print(
                f"  {kind} ({len(cosines)}): cosine min {cosines.min():.6f}, "
                f"p5 {np.percentile(cosines, 5):.6f}, mean {cosines.mean():.6f}"
            )
    print(f"\n  {'':<26} {'R@5 (121 memories)':>20} {'fire @0.40':>11} {'false fire':>11}")
    for name in found:
        r5 = recall_at_5(found[name]["queries"], stored, relevant)
        fire, false_fire = firing(found[name]["firing prompts"], matchers, expect)
        print(f"  {name:<26} {r5:>20.3f} {fire:>11.3f} {false_fire:>11.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="timed runs of each session")
    parser.add_argument("--ops", action="store_true", help="onnxruntime's profile by operator")
    parser.add_argument(
        "--compare", action="store_true", help="int8 query vectors against float32 ones"
    )
    args = parser.parse_args(argv)
    files = find_pack()
    tokenizer = Tokenizer.from_file(str(files.tokenizer))
    # The file pads to 128; one text alone is not padded by the embedder.
    tokenizer.no_padding()
    path = str(files.onnx)
    with (
        tempfile.TemporaryDirectory(prefix="thatch-query-embedding-") as home,
        thatch.open(home=home) as th,
    ):
        twin = ensure_int8_model(files.onnx, PACK_SHA256, Path(home, "int8"))
        if twin is None:
            raise SystemExit("the model with int8 products could not be built (see the log)")
        unfolded = twin_without_folds(files.onnx, home)
        runs = {
            "shipped: int8 products": shipped_session(str(twin)),
            "int8 products, two threads": session(
                str(twin), 2, shipped.QUERY_SESSION_CONFIG, shipped.QUERY_DISABLED_OPTIMIZERS
            ),
            "int8, SkipLayerNorm fused": session(
                str(twin), shipped.QUERY_THREADS, shipped.QUERY_SESSION_CONFIG
            ),
            "int8, without the rewrites": shipped_session(unfolded),
            "int8 as on 2026-12-02": session(unfolded, 2, shipped.QUERY_SESSION_CONFIG),
            "float32 products, same threads": shipped_session(path),
            "float32, two threads": session(
                path, 2, shipped.QUERY_SESSION_CONFIG, shipped.QUERY_DISABLED_OPTIMIZERS
            ),
            "float32, two spinning": session(path, 2, {"session.intra_op.allow_spinning": "1"}),
            "float32, spinning, stop after run": session(
                path,
                2,
                {"session.intra_op.allow_spinning": "1", "session.force_spinning_stop": "1"},
            ),
        }
        names = [item.name for item in runs["shipped: int8 products"].get_inputs()]

        def embed_with(run: ort.InferenceSession, text: str) -> Vectors:
            return vector(run, feeds_of(tokenizer, text, names))

        feeds = feeds_of(tokenizer, PROMPT, names)
        print(
            f"load average {os.getloadavg()[0]:.2f}; "
            f"prompt of {feeds['input_ids'].shape[1]} word pieces"
        )
        check = float(
            embed_with(runs["shipped: int8 products"], PROMPT) @ th.embedder.embed_query(PROMPT)
        )
        print(f"this script's vector against embed_query's: cosine {check:.4f}")
        print(f"\n{'session':<34} {'run ms':>7} {'cpu ms':>7}  (medians of {args.runs})")
        for name, (wall, cpu) in timings(runs, feeds, args.runs).items():
            print(f"{name:<34} {wall:>7.2f} {cpu:>7.2f}")
        print(
            f"cpu: the process's CPU time over a run and the {AFTER_RUN_S * 1000:.0f} ms after it"
        )
        if args.ops:
            profiled: dict[str, Callable[..., ort.InferenceSession]] = {
                "float32": functools.partial(shipped_session, path),
                "int8 as on 2026-12-02": functools.partial(
                    session, unfolded, 2, shipped.QUERY_SESSION_CONFIG
                ),
                "shipped int8": functools.partial(shipped_session, str(twin)),
            }
            for name, open_session in profiled.items():
                by_op, each_run, rate = operator_profile(open_session, feeds, args.runs)
                total = sum(by_op.values())
                print(
                    f"\noperators of the {name} session, ms a run (total {total:.2f}, "
                    f"{sum(each_run.values())} operators):"
                )
                for op, ms in list(by_op.items())[:8]:
                    print(f"  {op:<24} {ms:>6.2f}  {ms / total:>5.1%}  x{each_run[op]}")
                print(f"weight products: {rate:.1f} G multiply-adds a second")
        if args.compare:
            compare_products(
                th.embedder,
                embed_with,
                {
                    "float32": runs["float32 products, same threads"],
                    "int8 as on 2026-12-02": runs["int8 as on 2026-12-02"],
                    "int8, SkipLayerNorm fused": runs["int8, SkipLayerNorm fused"],
                    "shipped int8": runs["shipped: int8 products"],
                },
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
