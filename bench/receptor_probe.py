"""The receptor's predictive probe: the consensus simulation against the cosine baseline.

Runs both methods of thatch_receptor.probe on the labelled set in
tests/data/receptor (probe_set.jsonl, probe_distractors.jsonl; see the README
there) with the real model. Every problem gets the same world: every memory
and observation of the set (each problem's solution, shown memories, their
near-duplicates, near-misses and repeated failures, plus the distractors),
with the problem's own shown memories marked shown. Prints, side by side:

- precision of "resonant": resonant nodes that are the problem's solving memory;
- recall: problems whose solving memory is resonant; top-1: ranked first;
- merged accuracy: the problem's near-duplicates (of a shown memory) and
  repeats (the same failure seen before) classified merged;
- near-misses resonant: related-but-different memories shown as resonant;
- time per probe (embeddings cached; one world's embedding time separately),

and the parameters of each method. ``--grid`` adds a sweep of each method's
main parameters (about a minute).

    uv run python bench/receptor_probe.py [--grid] [--merge COSINE]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import thatch
from data_sets import ROOT, read_jsonl
from measure import percentile
from thatch_receptor.probe import DEFAULT_PROBE, Embed, Kind, Probe, ProbeNode, ProbeResult
from thatch_receptor.probe_baseline import BaselineProbe
from thatch_receptor.probe_consensus import ConsensusProbe

SET = ROOT / "tests" / "data" / "receptor"


@dataclass(frozen=True)
class Problem:
    """One labelled problem: its texts and the ids of its labelled nodes."""

    id: str
    texts: list[str]
    solution: str
    shown: list[str]
    near_duplicates: list[str]
    near_misses: list[str]


@dataclass
class Tally:
    """One method's counts over the set."""

    resonant: int = 0
    resonant_right: int = 0
    found: int = 0
    top_1: int = 0
    duplicates: int = 0
    duplicates_merged: int = 0
    near_misses: int = 0
    near_misses_resonant: int = 0
    solution_merged: int = 0
    milliseconds: list[float] = dataclasses.field(default_factory=list)


def texts_of(row: dict[str, object], field: str) -> list[str]:
    """The text or list of texts under ``field`` of a probe-set line."""
    value = row[field]
    return [str(t) for t in value] if isinstance(value, list) else [str(value)]


def labelled_nodes(row: dict[str, object], field: str, kind: Kind = "memory") -> list[ProbeNode]:
    """The nodes of one field of a problem, with ids ``<problem>/<field>/<n>``."""
    return [
        ProbeNode(id=f"{row['id']}/{field}/{n}", text=text, kind=kind)
        for n, text in enumerate(texts_of(row, field))
    ]


def load_set(folder: Path) -> tuple[list[Problem], list[ProbeNode]]:
    """The problems and the world's nodes (none marked shown yet)."""
    problems: list[Problem] = []
    nodes: list[ProbeNode] = []
    for row in read_jsonl(folder / "probe_set.jsonl"):
        solution, shown, misses = (
            labelled_nodes(row, f) for f in ("solution", "shown", "near_misses")
        )
        duplicates = labelled_nodes(row, "duplicates") + labelled_nodes(
            row, "repeats", "observation"
        )
        nodes += [*solution, *shown, *duplicates, *misses]
        problems.append(
            Problem(
                id=str(row["id"]),
                texts=texts_of(row, "problem"),
                solution=solution[0].id,
                shown=[n.id for n in shown],
                near_duplicates=[n.id for n in duplicates],
                near_misses=[n.id for n in misses],
            )
        )
    nodes += [
        ProbeNode(id=str(r["id"]), text=str(r["text"]))
        for r in read_jsonl(folder / "probe_distractors.jsonl")
    ]
    return problems, nodes


def cached_embedder(embed: Embed, texts: Sequence[str]) -> Embed:
    """An embed callable that looks up the vectors of ``texts``, embedded once."""
    unique = sorted(set(texts))
    table = dict(zip(unique, embed(unique), strict=True))

    def lookup(batch: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.stack([table[text] for text in batch])

    return lookup


def world_for(problem: Problem, nodes: Sequence[ProbeNode]) -> list[ProbeNode]:
    """The shared world with this problem's shown memories marked shown."""
    shown = set(problem.shown)
    return [dataclasses.replace(n, shown=n.id in shown) for n in nodes]


def score(tally: Tally, problem: Problem, result: ProbeResult) -> None:
    """Add one probe's result to the method's counts."""
    resonant = [node.id for node in result.resonant]
    tally.resonant += len(resonant)
    tally.resonant_right += resonant.count(problem.solution)
    tally.found += problem.solution in resonant
    tally.top_1 += resonant[:1] == [problem.solution]
    tally.solution_merged += result.verdict(problem.solution) == "merged"
    tally.duplicates += len(problem.near_duplicates)
    tally.duplicates_merged += sum(result.verdict(i) == "merged" for i in problem.near_duplicates)
    tally.near_misses += len(problem.near_misses)
    tally.near_misses_resonant += sum(i in resonant for i in problem.near_misses)
    tally.milliseconds.append(result.seconds * 1000)


def evaluate(probe: Probe, problems: Sequence[Problem], nodes: Sequence[ProbeNode]) -> Tally:
    """Run the probe on every problem of the set."""
    tally = Tally()
    for problem in problems:
        score(tally, problem, probe.run(problem.texts, world_for(problem, nodes)))
    return tally


def ratio(part: int, whole: int) -> str:
    """``part/whole`` as a three-decimal fraction with the counts."""
    return f"{part / whole:.3f} ({part}/{whole})" if whole else "-"


def print_table(tallies: dict[str, Tally], count: int) -> None:
    """The figures of each method, side by side."""
    rows: list[tuple[str, Callable[[Tally], str]]] = [
        ("precision of resonant", lambda t: ratio(t.resonant_right, t.resonant)),
        ("recall of the solution", lambda t: ratio(t.found, count)),
        ("solution ranked first", lambda t: ratio(t.top_1, count)),
        ("merged accuracy, near-dups", lambda t: ratio(t.duplicates_merged, t.duplicates)),
        ("near-misses resonant", lambda t: ratio(t.near_misses_resonant, t.near_misses)),
        ("solution merged (wrong)", lambda t: ratio(t.solution_merged, count)),
        ("resonant per probe", lambda t: f"{t.resonant / count:.2f}"),
        ("ms per probe, p50", lambda t: f"{percentile(t.milliseconds, 50):.2f}"),
        ("ms per probe, p95", lambda t: f"{percentile(t.milliseconds, 95):.2f}"),
    ]
    names = list(tallies)
    print(f"{'':28}" + "".join(f"{name:>24}" for name in names))
    for label, cell in rows:
        print(f"{label:28}" + "".join(f"{cell(tallies[name]):>24}" for name in names))


def parameters(probe: Probe) -> str:
    """The probe's parameters as ``name=value`` pairs."""
    return ", ".join(
        f"{f.name}={getattr(probe, f.name)}"
        for f in dataclasses.fields(probe)  # type: ignore[arg-type]
        if f.name not in ("embed", "name")
    )


def print_grid(problems: Sequence[Problem], nodes: Sequence[ProbeNode], embed: Embed) -> None:
    """Precision, recall and top-1 of each method around its defaults."""
    variants: list[tuple[str, Probe]] = [
        (
            f"baseline cluster={c} resonant={r}",
            BaselineProbe(embed, cluster_cosine=c, resonant_cosine=r),
        )
        for c in (0.4, 0.5, 0.6)
        for r in (0.3, 0.4, 0.5)
    ]
    variants += [
        (f"consensus neighbours={k} survive={s}", ConsensusProbe(embed, neighbours=k, survive=s))
        for k in (3, 5, 8)
        for s in (0.2, 0.3, 0.4)
    ]
    count = len(problems)
    print(f"\n{'variant':42}{'precision':>20}{'recall':>12}{'top-1':>12}")
    for label, probe in variants:
        t = evaluate(probe, problems, nodes)
        precision = ratio(t.resonant_right, t.resonant)
        print(f"{label:42}{precision:>20}{t.found / count:>12.3f}{t.top_1 / count:>12.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run both methods and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SET, help="folder of the probe set")
    parser.add_argument(
        "--merge", type=float, default=None, help="merge cosine of both methods (default: theirs)"
    )
    parser.add_argument(
        "--grid", action="store_true", help="also sweep each method's main parameters"
    )
    args = parser.parse_args(argv)

    problems, nodes = load_set(args.data)
    with tempfile.TemporaryDirectory(prefix="thatch-bench-") as home, thatch.open(home=home) as th:
        embedder = th.embedder
        texts = [n.text for n in nodes] + [t for p in problems for t in p.texts]
        embedder.embed_passages(texts[:8])  # load the model before timing
        start = time.perf_counter()
        embed = cached_embedder(embedder.embed_passages, texts)
        world_ms = (time.perf_counter() - start) * 1000 * len(nodes) / len(set(texts))
        print(
            f"model {embedder.model_id}; {len(problems)} problems; world of {len(nodes)} nodes; "
            f"embedding one world: {world_ms:.0f} ms (not in the times below)\n"
        )
    extra = {} if args.merge is None else {"merge_cosine": args.merge}
    probes: list[Probe] = [BaselineProbe(embed, **extra), ConsensusProbe(embed, **extra)]
    tallies = {probe.name: evaluate(probe, problems, nodes) for probe in probes}
    print_table(tallies, len(problems))
    print()
    for probe in probes:
        print(f"{probe.name}: {parameters(probe)}")
    print(f"default (DEFAULT_PROBE): {DEFAULT_PROBE}")
    if args.grid:
        print_grid(problems, nodes, embed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
