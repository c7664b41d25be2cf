"""The receptor's delivery discipline on real agent runs: how often it would interrupt.

Reads the 40 mini-swe-agent runs of ``../shared/data/receptor-sample``
(``receptor_sample.read_runs``), feeds each to a fresh
``thatch_receptor.receptor.Receptor``, and decides on every firing with a
``thatch_receptor.interpret.Interpreter`` on the built-in rules, one session
interpreter per run. Prints, for the default ``InterpretSettings`` (and with
``--grid`` for each variant of the thresholds and the cooldown):

- active deliveries per 100 tool calls over all runs (goal: at most 5);
- active deliveries while layer A (flow) held (goal: 0);
- the decisions by mode;
- the most active deliveries in one run.

``--grid`` ends with a stress test: every built-in rule made active, so that
only the thresholds, deep work and the cooldown hold deliveries back.

The receptor's steps do not depend on the interpretation, so each run is fed
once and every variant decides on the same compositions.

    uv run python bench/receptor_delivery.py
    uv run python bench/receptor_delivery.py --grid
"""

from __future__ import annotations

import argparse
import itertools
import shlex
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import attrs
from receptor_sample import SAMPLE, Run, read_runs
from thatch.plugin import DELIVERY_MODES, FiringComposition, InterpretationRule
from thatch_receptor.interpret import Interpreter, InterpretSettings
from thatch_receptor.receptor import Receptor
from thatch_receptor.rules import JsonRule, rules_for

#: (tool calls so far, composition) of every firing of one run, in order.
Firings = list[tuple[int, FiringComposition]]

DELIVER_THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7)
SILENT_THRESHOLDS = (0.35, 0.45)
COOLDOWNS = (0, 5, 10, 20)


def firings_of(run: Run) -> Firings:
    """Feed a run to a fresh receptor; its compositions with the tool calls made so far."""
    receptor = Receptor()
    found: Firings = []
    calls = 0
    for event in run.events:
        calls += len(event.tool_calls)
        found += [(calls, composition) for composition in receptor.feed(event).compositions]
    return found


def all_active() -> tuple[InterpretationRule, ...]:
    """The built-in rules, each made active: what the discipline alone lets through."""
    return tuple(
        attrs.evolve(rule, mode="active") if isinstance(rule, JsonRule) else rule
        for rule in rules_for(None)
    )


class Tally:
    """The decisions of one settings variant over every run."""

    def __init__(
        self,
        settings: InterpretSettings,
        runs: Sequence[Firings],
        rules: Sequence[InterpretationRule] | None = None,
    ) -> None:
        interpreter = Interpreter(rules_for(None) if rules is None else rules, settings)
        self.settings = settings
        self.modes: Counter[str] = Counter()
        self.active_in_flow = 0
        self.most_active = 0
        for firings in runs:
            decide = interpreter.session().decide
            decisions = [decide(composition, tool_calls=calls) for calls, composition in firings]
            self.modes.update(decision.mode for decision in decisions)
            active = [d for d in decisions if d.mode == "active"]
            self.active_in_flow += sum(d.composition.in_flow for d in active)
            self.most_active = max(self.most_active, len(active))

    def per_100(self, calls: int) -> float:
        return 100.0 * self.modes["active"] / max(calls, 1)

    def row(self, calls: int) -> str:
        s = self.settings
        modes = " ".join(f"{self.modes[mode]:>5}" for mode in DELIVERY_MODES)
        return (
            f"  {s.deliver_threshold:7.2f} {s.silent_threshold:6.2f} {s.active_cooldown_calls:8} "
            f"{self.per_100(calls):9.2f} {self.active_in_flow:7} {modes} {self.most_active:8}"
        )


def header() -> str:
    modes = " ".join(f"{mode[:5]:>5}" for mode in DELIVERY_MODES)
    return (
        f"  {'deliver':>7} {'silent':>6} {'cooldown':>8} {'active/100':>9} {'in flow':>7} "
        f"{modes} {'run max':>8}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=SAMPLE, help="the sample folder")
    parser.add_argument(
        "--grid", action="store_true", help="also every variant of thresholds and cooldown"
    )
    args = parser.parse_args()

    runs = read_runs(args.data)
    calls = sum(len(event.tool_calls) for run in runs for event in run.events)
    firings = [firings_of(run) for run in runs]
    variants = [InterpretSettings()]
    if args.grid:
        variants += [
            InterpretSettings(deliver, silent, cooldown)
            for deliver, silent, cooldown in itertools.product(
                DELIVER_THRESHOLDS, SILENT_THRESHOLDS, COOLDOWNS
            )
        ]

    print("$ " + shlex.join(["uv", "run", "python", "bench/receptor_delivery.py", *sys.argv[1:]]))
    print(
        f"{len(runs)} runs, {calls} tool calls, {sum(map(len, firings))} firings "
        f"({sum(c.in_flow for f in firings for _, c in f)} while flow held)"
    )
    print("goals: active/100 <= 5, in flow = 0 (first row: the defaults)")
    print(header())
    for settings in variants:
        print(Tally(settings, firings).row(calls))
    if args.grid:
        print("\nstress: every built-in rule active, so only thresholds and discipline hold back")
        print(header())
        for cooldown in COOLDOWNS:
            settings = InterpretSettings(active_cooldown_calls=cooldown)
            print(Tally(settings, firings, all_active()).row(calls))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
