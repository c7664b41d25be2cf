"""``thatch migrate``: copy this home's data (or ``--from``'s) to another storage backend."""

from __future__ import annotations

import argparse
import sys

from thatch.cli import output
from thatch.migrate import PartCount, migrate, places
from thatch.migrate.copy import PROGRESS_EVERY
from thatch.plugin.errors import InvalidInputError

HELP = "copy memories, the decision model and the prediction log to another storage backend"
DESCRIPTION = (
    "Copy every memory (vectors, archived flags, recall counts, reviewed duplicate pairs), "
    "the decision model (matchers, predictions with their counts and evidence, edges, "
    "fires) and the prediction log from this home's storage (or --from) to --to. "
    "Running it again adds only what the target lacks: memories are matched by store "
    "and label, matchers and predictions by store, text and creation time, prediction-log "
    "rows by id and session. Each part is counted at the end. The config file is not "
    "changed: point it at the new place with thatch setup --storage."
)
PLACE = "postgresql://user@host:5432/database (no password), sqlite:PATH or a file path"


def add_arguments(sub: argparse.ArgumentParser) -> None:
    """``migrate``'s options, on the subparser the parser made for it."""
    sub.add_argument("--to", required=True, metavar="TARGET", help=f"where to copy to: {PLACE}")
    sub.add_argument(
        "--from",
        dest="source",
        metavar="SOURCE",
        help="where to copy from (default: this home's configured storage)",
    )
    sub.add_argument(
        "--to-schema",
        metavar="NAME",
        help="the server schema to write (default: [storage.postgres] schema, else thatch)",
    )
    sub.add_argument("--from-schema", metavar="NAME", help="the server schema to read")


def run(args: argparse.Namespace) -> int:
    from thatch.api import StorageParts
    from thatch.config import plugin_tables

    # Every input is checked before anything is opened: a bad one changes nothing.
    target_place = places.parse(args.to, "--to", args.to_schema)
    source_place = None
    if args.source is not None:
        source_place = places.parse(args.source, "--from", args.from_schema)
    elif args.from_schema is not None:
        raise InvalidInputError(
            "--from-schema names the schema of a --from server; add --from postgresql://..."
        )
    home, plugins = plugin_tables.load(getattr(args, "home", None))
    declared = list(plugins.config_tables().values())
    if source_place is None:
        places.refuse_empty_home(home)
        source_config = home
    else:
        source_config = places.checked(source_place, home, declared, "--from")
    target_config = places.checked(target_place, home, declared, "--to")
    places.refuse_same(source_config, target_config, target_place.describe())
    source = StorageParts(source_config, plugins)
    target = StorageParts(target_config, plugins)
    shown = _Progress()
    try:
        counts = migrate(source, target, shown)
    finally:
        source.close()
        target.close()
    if args.json:
        output.print_json({"to": target_place.describe(), "parts": counts})
    else:
        _show(counts, target_place.describe())
    return 0


class _Progress:
    """Each part's progress on stderr: every :data:`PROGRESS_EVERY` rows and when it is done."""

    def __init__(self) -> None:
        self._shown: dict[str, int] = {}

    def __call__(self, part: str, done: int, total: int) -> None:
        last = self._shown.get(part, -1)
        if done == last:
            return
        if done == total or done // PROGRESS_EVERY > max(last, 0) // PROGRESS_EVERY:
            self._shown[part] = done
            print(f"thatch migrate: {part}: {done} of {total}", file=sys.stderr)


def _show(counts: list[PartCount], target: str) -> None:
    print(f"migrated to {target}:")
    width = max(len(count.part) for count in counts)
    for count in counts:
        kept = count.found - count.added
        print(
            f"  {count.part:<{width}}  {count.source} in the source, {count.added} added, "
            f"{kept} already there"
        )
