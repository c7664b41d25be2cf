"""Per-run scores of real agent runs against their outcome, as ROC AUC.

Reads the mini-swe-agent sample (``../shared/data/receptor-sample``: 40
trajectories and ``labels.csv``, 20 resolved and 20 not) through
``thatch_receptor.trajectories``, scores each run, and prints how well each
score picks out the unresolved runs (ROC AUC, the Mann–Whitney statistic;
0.5 is chance), with the score's mean over unresolved and resolved runs:

- **whole runs**: every run, all its steps;
- **early warning**: the runs of at least ``--early-steps`` steps (20), scored
  on their first 20 steps only, since run length gives the whole-run
  baseline away (unresolved runs are longer).

The baselines always run: ``steps`` (tool calls), ``failures`` (failed calls,
format errors and time-outs included; grep's exit 1 is no failure) and
``failure share`` (failures per step). ``--scorer receptor`` adds the
receptor's frustration peak and mean: each run's events are fed to a fresh
``thatch_receptor.receptor.Receptor`` and its frustration read after every
step. The receptor gets the built-in sources as the daemon builds them, with
the installed model's query embedding (``rephrased-search`` compares meanings
with it); ``--no-embedder`` leaves it out, as ``thatch receptor replay`` does.

``--split`` reports the same tables on two fixed halves instead (each half
holds every other run of each outcome in id order: 10 resolved and 10 not).
The receptor's defaults were chosen looking at all 40 runs, so the spread
between the halves says how far a figure of 20 runs moves by chance alone;
a default that fit one half only would show there as a gap.

    uv run python bench/receptor_outcomes.py
    uv run python bench/receptor_outcomes.py --scorer receptor
    uv run python bench/receptor_outcomes.py --scorer receptor --split
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import statistics
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cached_embedder import query_embedding
from receptor_sample import SAMPLE, Run, read_runs
from roc_auc import roc_auc
from thatch.plugin.events import Event

#: A run's events, in order, to one number: higher should mean "more likely unresolved".
Scorer = Callable[[Sequence[Event]], float]


def steps(events: Sequence[Event]) -> float:
    """The number of tool calls."""
    return float(sum(len(event.tool_calls) for event in events))


def failures(events: Sequence[Event]) -> float:
    """The number of failed tool calls."""
    return float(sum(call.failed for event in events for call in event.tool_calls))


def failure_share(events: Sequence[Event]) -> float:
    """Failed calls per call (0 for a run without calls)."""
    count = steps(events)
    return failures(events) / count if count else 0.0


BASELINES: dict[str, Scorer] = {
    "steps": steps,
    "failures": failures,
    "failure share": failure_share,
}


#: A fresh receptor for one run.
MakeReceptor = Callable[[], Any]


@contextlib.contextmanager
def receptors(embedder: bool) -> Iterator[MakeReceptor]:
    """Fresh receptors with the daemon's built-in sources; exit 2 when there is no receptor.

    ``embedder``: ``rephrased-search`` compares meanings with the installed
    model's query embedding, as in the daemon (each query embedded once).
    """
    try:
        from thatch_receptor.receptor import Receptor
        from thatch_receptor.signals import builtin_sources
    except ImportError as error:
        print(
            f"--scorer receptor: thatch_receptor.receptor.Receptor cannot be imported ({error}); "
            "the receptor core is not there yet. Run without --scorer for the baselines.",
            file=sys.stderr,
        )
        raise SystemExit(2) from error
    if not embedder:
        yield Receptor
        return
    with query_embedding() as embed:
        yield lambda: Receptor(builtin_sources(embed=embed))


def receptor_scorers(make: MakeReceptor) -> dict[str, Scorer]:
    """The receptor's frustration peak and mean over a run."""

    def frustration(events: Sequence[Event]) -> list[float]:
        receptor = make()
        return [axis_value(receptor.feed(event), "frustration") for event in events]

    return {
        "frustration peak": lambda events: max(frustration(events), default=0.0),
        "frustration mean": lambda events: statistics.fmean(frustration(events) or [0.0]),
    }


def variant_scorers(make: MakeReceptor) -> dict[str, Scorer]:
    """Other readings of the same steps, tried after the defaults were measured (--variants).

    They were chosen after seeing these runs, so none of them replaces the
    frustration mean: they show how much the figure moves with the reading.
    """

    def mean_of(events: Sequence[Event], value: Callable[[Mapping[str, float]], float]) -> float:
        receptor = make()
        values = [value(receptor.feed(event).axes) for event in events]
        return statistics.fmean(values or [0.0])

    def last_ten(events: Sequence[Event]) -> float:
        receptor = make()
        values = [receptor.feed(event).axes["frustration"] for event in events]
        return statistics.fmean(values[-10:] or [0.0])

    def at_end(events: Sequence[Event]) -> float:
        receptor = make()
        steps = [receptor.feed(event) for event in events]
        return steps[-1].axes["frustration"] if steps else 0.0

    return {
        "frustration, last 10": last_ten,
        "frustration at end": at_end,
        "frust. + uncertainty": lambda events: mean_of(
            events, lambda axes: axes["frustration"] + axes["uncertainty"]
        ),
        "frust. - flow": lambda events: mean_of(
            events, lambda axes: axes["frustration"] - axes["flow"]
        ),
        "frust. + seeking": lambda events: mean_of(
            events, lambda axes: axes["frustration"] + axes["seeking"]
        ),
    }


def axis_value(step: object, axis: str) -> float:
    """One axis's value in what ``Receptor.feed`` returned (its ``axes`` mapping)."""
    axes = getattr(step, "axes", None)
    if isinstance(axes, Mapping) and axis in axes:
        return float(axes[axis])
    if axes is not None and hasattr(axes, axis):
        return float(getattr(axes, axis))
    raise SystemExit(f"--scorer receptor: a step of the receptor has no axes[{axis!r}]: {step!r}")


def score_table(
    title: str, runs: Sequence[Run], scorers: Mapping[str, Scorer], limit: int | None
) -> None:
    """Print each scorer's AUC for the unresolved outcome, with its mean per outcome."""
    unresolved = [not run.resolved for run in runs]
    print(
        f"\n{title}: {len(runs)} runs ({sum(unresolved)} unresolved, "
        f"{len(runs) - sum(unresolved)} resolved)"
    )
    print(
        f"  {'score':20} {'AUC':>6} {'95% interval':>13} {'mean unresolved':>16} "
        f"{'mean resolved':>14}"
    )
    for name, scorer in scorers.items():
        scores = [scorer(run.events[:limit]) for run in runs]
        bad = [score for score, flag in zip(scores, unresolved, strict=True) if flag]
        good = [score for score, flag in zip(scores, unresolved, strict=True) if not flag]
        low, high = auc_interval(scores, unresolved)
        print(
            f"  {name:20} {roc_auc(scores, unresolved):6.3f} {f'{low:.2f}-{high:.2f}':>13} "
            f"{statistics.fmean(bad):16.3f} {statistics.fmean(good):14.3f}"
        )


#: Resamples of the bootstrap interval, and its fixed seed (the same figures every run).
RESAMPLES = 2000
SEED = 13


def auc_interval(scores: Sequence[float], unresolved: Sequence[bool]) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the AUC over runs drawn again with replacement.

    With a few dozen runs an AUC moves by about a tenth from one sample to
    the next; the interval says how far apart two figures must be to differ.
    """
    import random

    draw = random.Random(SEED)
    pairs = list(zip(scores, unresolved, strict=True))
    values: list[float] = []
    while len(values) < RESAMPLES:
        sample = [draw.choice(pairs) for _ in pairs]
        flags = [flag for _, flag in sample]
        if any(flags) and not all(flags):
            values.append(roc_auc([score for score, _ in sample], flags))
    values.sort()
    return values[int(0.025 * RESAMPLES)], values[int(0.975 * RESAMPLES) - 1]


def halves(runs: Sequence[Run]) -> tuple[list[Run], list[Run]]:
    """Two fixed halves with half of each outcome: each outcome's runs, by id, alternately."""
    first: list[Run] = []
    second: list[Run] = []
    for resolved in (False, True):
        ordered = sorted((run for run in runs if run.resolved == resolved), key=lambda r: r.run_id)
        first += ordered[0::2]
        second += ordered[1::2]
    return first, second


def report(label: str, runs: Sequence[Run], scorers: Mapping[str, Scorer], early: int) -> None:
    """The whole-run and the early-warning tables of ``runs``."""
    score_table(f"{label}whole runs", runs, scorers, None)
    score_table(
        f"{label}early warning, first {early} steps of runs with >= {early}",
        [run for run in runs if steps(run.events) >= early],
        scorers,
        early,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=SAMPLE, help="the sample folder")
    parser.add_argument(
        "--scorer",
        choices=["baselines", "receptor"],
        default="baselines",
        help="receptor: add the receptor's frustration peak and mean to the baselines",
    )
    parser.add_argument(
        "--early-steps", type=int, default=20, help="steps the early warning reads (20)"
    )
    parser.add_argument(
        "--variants",
        action="store_true",
        help="with --scorer receptor: also other readings of the axes, tried afterwards",
    )
    parser.add_argument(
        "--split",
        action="store_true",
        help="report on two fixed halves (each outcome's runs by id, alternately) instead",
    )
    parser.add_argument(
        "--no-embedder",
        action="store_true",
        help="with --scorer receptor: no query embedding (as `thatch receptor replay`)",
    )
    args = parser.parse_args()
    runs = read_runs(args.data)

    print("$ " + shlex.join(["uv", "run", "python", "bench/receptor_outcomes.py", *sys.argv[1:]]))
    with contextlib.ExitStack() as stack:
        scorers = dict(BASELINES)
        if args.scorer == "receptor":
            make = stack.enter_context(receptors(embedder=not args.no_embedder))
            scorers.update(receptor_scorers(make))
            if args.variants:
                scorers.update(variant_scorers(make))
        print("AUC: how well the score picks out the unresolved runs (0.5 = chance)")
        if args.split:
            for name, half in zip("AB", halves(runs), strict=True):
                report(f"half {name}, ", half, scorers, args.early_steps)
        else:
            report("", runs, scorers, args.early_steps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
