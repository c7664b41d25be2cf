"""Firing by embedding model: every firing rule on both firing sets, for one model.

Both firing sets (bench/data/firing and bench/data/firing_questions) are
embedded with one model, and for each set the script prints what the model's
ranking allows (the share of task prompts whose situation is the best matcher,
and among the five shown) and every rule of bench/prediction_firing.py at its
own threshold (the best fire@5 with false-fire <= 0.05). The intent axis is
fitted for the model from the same labelled background prompts the shipped
rule uses (thatch.decisions.firing.background), as calibrating a model does.

    uv run python bench/firing_models.py
        the installed default model (all-MiniLM-L6-v2, int8)
    python bench/firing_models.py --sentence-transformers DIR
        any sentence-transformers model folder, embedded in float32 on the CPU.
        thatch does not install sentence-transformers or torch; run it with a
        Python that has both and thatch-core (docs/benchmarks.md, "Firing by
        embedding model", says how the published figures were made).

Prompts are embedded query-side and matchers and statements passage-side,
with the prefixes given by --query-prefix and --passage-prefix (none by
default: the sentence-transformers models compared here use none).
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from firing_measures import (
    FIRING_SETS,
    GOAL_FALSE_FIRE,
    HEADER,
    MAX_WRONG,
    SHOWN,
    FiringSet,
    calibrate,
    embed_set,
    row,
)
from firing_rules import ranking, rules, shipped_axis
from sentence_transformers_folder import SentenceTransformersEmbedder
from thatch.decisions import prompt_map
from thatch.decisions.prompt_map import FiringMaps


def report(
    data: FiringSet,
    axis: npt.NDArray[np.float32],
    background: npt.NDArray[np.float32],
    learnt: FiringMaps | None = None,
) -> tuple[float, float]:
    """Print the ceiling and every rule on one set.

    Returns the best fire@5 of any rule within the false-fire goal, and the
    best of those that show at most MAX_WRONG other situations per task prompt.
    """
    cosines = data.queries @ data.matchers.T
    top1, top5 = ranking(data, cosines)
    print(
        f"ranking: the situation is the best matcher for {top1:.3f} of the task prompts, "
        f"among the {SHOWN} best for {top5:.3f}"
    )
    print(HEADER)
    best = quiet = 0.0
    for rule in rules(data, axis, background, learnt):
        point = calibrate(data, cosines, rule)
        best = max(best, point.fire5)
        if point.wrong <= MAX_WRONG:
            quiet = max(quiet, point.fire5)
        print(row(rule.name, point))
    return best, quiet


def main(argv: Sequence[str] | None = None) -> int:
    """Embed both sets with the chosen model and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sentence-transformers",
        type=Path,
        metavar="DIR",
        help="a sentence-transformers model folder (default: the installed thatch model)",
    )
    parser.add_argument("--query-prefix", default="", help="text put before each prompt")
    parser.add_argument("--passage-prefix", default="", help="text put before each matcher")
    parser.add_argument(
        "--data", type=Path, action="append", help="a firing set folder (default: both sets)"
    )
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        if args.sentence_transformers is None:
            import thatch
            from cached_embedder import CachedEmbedder

            home = stack.enter_context(tempfile.TemporaryDirectory(prefix="thatch-firing-models-"))
            embedder = CachedEmbedder(stack.enter_context(thatch.open(home=home)).embedder)
        else:
            embedder = SentenceTransformersEmbedder(
                args.sentence_transformers, args.query_prefix, args.passage_prefix
            )
        background, axis = shipped_axis(embedder)
        print(f"model {embedder.model_id}")
        for folder in args.data or FIRING_SETS:
            data = embed_set(embedder, folder)  # type: ignore[arg-type]
            print(
                f"\n{folder.name}: {len(data.situations)} preferences, {len(data.prompts)} prompts"
            )
            best, quiet = report(data, axis, background, prompt_map.for_model(embedder.model_id))
            print(
                f"best fire@5 with false-fire <= {GOAL_FALSE_FIRE}: {best:.3f} of any rule, "
                f"{quiet:.3f} of those with wrong <= {MAX_WRONG}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
