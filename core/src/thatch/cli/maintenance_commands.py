"""Handlers of the upkeep commands: duplicates, hygiene, export, import, reembed, plugins, demo."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext

from thatch.cli import output
from thatch.cli.inputs import open_import_file
from thatch.cli.memory_commands import connect
from thatch.memory.duplicates import pair_key
from thatch.memory.transfer import ParsedLines
from thatch.plugin.records import DuplicatePair, RememberResult
from thatch.safetext import visible
from thatch.serialize import to_json_data


def duplicates(args: argparse.Namespace) -> int:
    with connect(args) as th:
        if args.mark_reviewed:
            first, second = args.mark_reviewed
            store = None if args.store == "all" else args.store
            th.mark_reviewed(first, second, store, args.verdict)
            output.say(f"marked '{first}' and '{second}' as reviewed: {args.verdict}")
            return 0
        pairs = th.duplicates(args.store)
        verdicts = th.review_verdicts(args.store)
    if args.json:
        output.print_json(
            [{**to_json_data(p), "verdict": verdicts.get(pair_key(p))} for p in pairs]
        )
        return 0
    if not pairs:
        output.note("no unreviewed near-duplicates")
    for pair in pairs:
        print(
            f"[{pair.cosine:.3f}] {pair.first.store}: '{pair.first.label}' ~ '{pair.second.label}'"
            + _confirmed(verdicts, pair)
        )
    if pairs:
        output.note(
            "after reviewing a pair: thatch duplicates --mark-reviewed LABEL OTHER "
            "[--verdict same|different]"
        )
    return 0


def _confirmed(verdicts: Mapping[tuple[int, int], str], pair: DuplicatePair) -> str:
    return "  (confirmed the same: merge them)" if verdicts.get(pair_key(pair)) == "same" else ""


def hygiene(args: argparse.Namespace) -> int:
    with connect(args) as th:
        report = th.hygiene(args.store, stale_days=args.days)
        verdicts = th.review_verdicts(args.store)
    if args.json:
        output.print_json(report)
        return 0
    sections = (
        (f"not updated or recalled for {report.stale_days}+ days", report.stale),
        ("tied to a branch that no longer exists", report.orphaned),
    )
    for title, memories in sections:
        print(f"{title}: {len(memories)}")
        for memory in memories:
            print(
                f"  {memory.store} / {memory.label}"
                + (f" [{memory.branch}]" if memory.branch else "")
            )
    print(f"duplicate pairs to review or merge: {len(report.duplicates)}")
    for pair in report.duplicates:
        print(
            f"  {pair.first.store}: '{pair.first.label}' ~ '{pair.second.label}'"
            f" ({pair.cosine:.2f})" + _confirmed(verdicts, pair)
        )
    return 0


def export(args: argparse.Namespace) -> int:
    with connect(args) as th:
        for line in th.export(args.store):
            # The same data (C1 controls as JSON escapes), safe to print on a terminal.
            sys.stdout.write(visible(line) + "\n")
    return 0


def import_file(args: argparse.Namespace) -> int:
    with open_import_file(args.file) as source, connect(args) as th:
        lines = ParsedLines(source.lines, source.name)
        # Every line is checked before any is written: a bad line changes nothing.
        plan = th.check_import(lines, overwrite=args.overwrite)
        with _progress(plan.to_write, "importing") as advance:

            def saved(result: RememberResult) -> None:
                advance(1)
                if args.json:
                    output.print_json_line(
                        {
                            "saved": result.memory.label,
                            "store": result.memory.store,
                            "action": result.action,
                        }
                    )

            totals = th.import_lines(lines, overwrite=args.overwrite, on_saved=saved, plan=plan)
    if args.json:
        output.print_json_line({"done": totals})
    else:
        output.say(
            f"imported {plan.lines} lines: {totals.created} created, {totals.updated} updated, "
            f"{totals.unchanged} unchanged, {totals.redactions} secrets redacted"
        )
    return 0


def _progress(total: int, what: str) -> AbstractContextManager[Callable[[int], None]]:
    """A progress bar on stderr when it is a terminal; a no-op otherwise."""
    if not sys.stderr.isatty() or total == 0:
        return nullcontext(lambda _count: None)
    from tqdm import tqdm

    class _Bar(AbstractContextManager[Callable[[int], None]]):
        def __enter__(self) -> Callable[[int], None]:
            # A terminal that reports no size (a bare pty) gets no bar at all
            # from tqdm, which hides bars below the last row; shutil falls
            # back to 80 × 24 there.
            size = shutil.get_terminal_size()
            self.bar = tqdm(
                total=total,
                desc=what,
                unit="memory",
                file=sys.stderr,
                ncols=size.columns,
                nrows=size.lines,
            )
            update: Callable[[int], None] = self.bar.update
            return update

        def __exit__(self, *exc_info: object) -> None:
            self.bar.close()

    return _Bar()


def reembed(args: argparse.Namespace) -> int:
    with connect(args) as th:
        model = th.embedder.model_id
        with _progress(len(th.stale_vectors()), "re-embedding") as advance:
            done = th.reembed(progress=advance)
    output.say(f"re-embedded {done} memories with {model}")
    return 0


def plugins(args: argparse.Namespace) -> int:
    with connect(args) as th:
        infos = th.describe_plugins()
    if args.json:
        output.print_json(infos)
        return 0
    if not infos:
        output.note("no plugins loaded (is THATCH_LOAD_PLUGINS set to an empty list?)")
    rows = [
        (
            info.name,
            "thatch-core (built in)" if info.builtin else info.distribution or "-",
            info.version or "-",
            ", ".join(info.hooks),
        )
        for info in infos
    ]
    output.print_table(rows, ("NAME", "DISTRIBUTION", "VERSION", "HOOKS"))
    return 0


def demo(args: argparse.Namespace) -> int:
    from thatch.demo import run_demo

    return run_demo()
