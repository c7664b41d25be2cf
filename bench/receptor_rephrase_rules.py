"""Which rule of ``rephrased-search`` carries the receptor's reading of the sample runs.

Feeds the 40 runs of ``../shared/data/receptor-sample`` to receptors whose
``rephrased-search`` follows one rule each, all with the installed model's
query embedding (as the daemon runs them), and prints per rule how often the
source read frustration over the 40 runs and the frustration mean's ROC AUC
for the unresolved outcome on whole runs and on the first 20 steps
(``bench/receptor_outcomes.py``'s two tables):

- **words or meaning** (the shipped rule): a query sharing a fifth to a half of
  its words with an earlier one, or close to it in meaning;
- **meaning only**: cosine at least 0.75 and words overlapping under half
  (the daemon's rule until 2026-12-02);
- **words or meaning, code keywords as stop words**: the shipped rule with
  ``def``, ``class``, ``import`` and other keywords of code searches left out
  of the words compared.

It also prints the cosines of the query pairs the shipped rule links.

    uv run python bench/receptor_rephrase_rules.py
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import ClassVar

from cached_embedder import query_embedding
from receptor_sample import SAMPLE, Run, read_runs
from roc_auc import roc_auc
from thatch_receptor.receptor import Receptor
from thatch_receptor.signals import RephrasedSearch, builtin_sources, overlap, words

#: Keywords a code search keeps while it changes the name it looks for.
CODE_KEYWORDS = frozenset(
    {"def", "class", "import", "self", "return", "if", "else", "elif", "function", "func", "fn"}
    | {"var", "let", "const", "async", "await", "struct", "interface", "type", "public"}
    | {"private", "static"}
)
EARLY_STEPS = 20


def _cosine(embed: Callable[[str], Sequence[float]], a: str, b: str) -> float:
    """Cosine of two texts' unit vectors."""
    return sum(x * y for x, y in zip(embed(a), embed(b), strict=True))


class MeaningOnly(RephrasedSearch):
    """The meaning rule alone: what the daemon applied until 2026-12-02."""

    def _rephrases(self, query: str, earlier: str) -> bool:
        if (
            overlap(words(query), words(earlier)) >= self.lexical
            or query.strip() == earlier.strip()
        ):
            return False
        assert self.embed is not None
        return _cosine(self.embed, query, earlier) >= self.similar


class CodeKeywordsStopped(RephrasedSearch):
    """The shipped rule, code keywords left out of the words compared."""

    def _rephrases(self, query: str, earlier: str) -> bool:
        same_words = overlap(words(query) - CODE_KEYWORDS, words(earlier) - CODE_KEYWORDS)
        if same_words >= self.lexical or query.strip() == earlier.strip():
            return False
        if same_words >= self.shared:
            return True
        assert self.embed is not None
        return _cosine(self.embed, query, earlier) >= self.similar


class Recorded(RephrasedSearch):
    """The shipped rule, keeping the cosine of every pair it links."""

    cosines: ClassVar[list[float]] = []

    def _rephrases(self, query: str, earlier: str) -> bool:
        linked = super()._rephrases(query, earlier)
        if linked:
            assert self.embed is not None
            Recorded.cosines.append(_cosine(self.embed, query, earlier))
        return linked


def score(runs: Sequence[Run], make: Callable[[], Receptor]) -> tuple[int, float, float]:
    """How often ``rephrased-search`` read, and the frustration mean's AUC: whole, early."""
    readings = 0
    whole: list[float] = []
    early: list[float] = []
    unresolved_early: list[bool] = []
    for run in runs:
        receptor = make()
        values = []
        for event in run.events:
            step = receptor.feed(event)
            readings += sum(r.source == "rephrased-search" for r in step.readings)
            values.append(step.axes["frustration"])
        whole.append(statistics.fmean(values or [0.0]))
        if len(run.events) >= EARLY_STEPS:
            early.append(statistics.fmean(values[:EARLY_STEPS]))
            unresolved_early.append(not run.resolved)
    unresolved = [not run.resolved for run in runs]
    return readings, roc_auc(whole, unresolved), roc_auc(early, unresolved_early)


def main() -> int:
    runs = read_runs(SAMPLE)
    with query_embedding() as embed:
        rules: dict[str, type[RephrasedSearch]] = {
            "words or meaning (shipped)": Recorded,
            "meaning only (until 2026-12-02)": MeaningOnly,
            "words or meaning, code keywords stopped": CodeKeywordsStopped,
        }
        print("$ uv run python bench/receptor_rephrase_rules.py")
        print(f"{'rephrased-search rule':42} {'readings':>8} {'whole AUC':>10} {'early AUC':>10}")
        for name, rule in rules.items():

            def make(rule: type[RephrasedSearch] = rule) -> Receptor:
                sources = builtin_sources(embed=embed)
                return Receptor(
                    [rule(embed=embed) if s.name == "rephrased-search" else s for s in sources]
                )

            readings, whole, early = score(runs, make)
            print(f"{name:42} {readings:8d} {whole:10.3f} {early:10.3f}")
    low, middle, high = statistics.quantiles(Recorded.cosines, n=4)
    print(
        f"cosine of the {len(Recorded.cosines)} query pairs the shipped rule links: "
        f"quartiles {low:.2f} / {middle:.2f} / {high:.2f}, "
        f"{sum(c >= 0.75 for c in Recorded.cosines)} at or above 0.75"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
