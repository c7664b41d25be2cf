"""The argument parser: every subcommand, its arguments and its handler.

Every number an option takes is bounded by a type of :mod:`thatch.cli.inputs`,
so a huge, negative or non-finite one is refused with its range before
anything runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from thatch.cli import maintenance_commands as maintenance
from thatch.cli import memory_commands as memory
from thatch.cli import migrate_commands as migration
from thatch.cli import plugin_commands as plugins
from thatch.cli import prediction_commands as predictions
from thatch.cli import runtime_commands as runtime
from thatch.cli import setup_commands as setup
from thatch.cli.inputs import (
    MAX_ID,
    MAX_RESULTS,
    clean_arguments,
    finite_number,
    plot_file,
    whole_number,
)
from thatch.memory.hygiene import MAX_STALE_DAYS

if TYPE_CHECKING:
    from thatch.plugin.harness import Harness

STORE_HELP = "a store name, or 'all' (default: this repository's store and global)"
#: Arguments that name files or folders: kept byte for byte, all others are
#: text made storable (see :func:`thatch.cli.inputs.clean_arguments`).
PATH_ARGUMENTS = frozenset({"home", "file", "plot", "project", "plugin", "to", "source"})
RESULTS = whole_number(1, MAX_RESULTS)
PREDICTION_ID = whole_number(1, MAX_ID)


def parse_arguments(
    argv: Sequence[str] | None = None, parser: argparse.ArgumentParser | None = None
) -> argparse.Namespace:
    """``argv`` (default: the process's) parsed, its text arguments cleaned.

    ``parser``: one :func:`build_parser` made, plugin commands maybe added to
    it (see :mod:`thatch.cli.plugin_cli`); by default one is made here.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    parser = parser or build_parser(setup_harnesses(words))
    return clean_arguments(parser.parse_args(words), PATH_ARGUMENTS)


def plugin_command_parents() -> list[argparse.ArgumentParser]:
    """What a plugin's command inherits: ``--home`` and ``--json``, as core's reading commands."""
    return [_reader(_common())]


def setup_harnesses(words: Sequence[str]) -> list[Harness]:
    """The installed harnesses, when ``words`` run ``thatch setup`` (their ``--NAME`` flags).

    Only setup loads plugins to parse its arguments, so every other command
    (``thatch --help`` too) parses as fast as before. A config or plugin that
    fails to load gives no flags here; setup itself then reports the error.
    """
    from thatch.plugin.launcher import subcommand

    if subcommand(words) != "setup":
        return []
    from thatch.plugin.config import Config
    from thatch.plugin.errors import ThatchError
    from thatch.plugins import Plugins

    home = getattr(_common().parse_known_args(words)[0], "home", None)
    try:
        return list(Plugins.load(Config.load(home)).harnesses().values())
    except ThatchError:
        return []


def _common() -> argparse.ArgumentParser:
    # SUPPRESS lets --home appear before or after the subcommand without the
    # subcommand's default overwriting a value given before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--home",
        default=argparse.SUPPRESS,
        help="keep config, data and state under this folder (also THATCH_HOME)",
    )
    return common


def _reader(common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    reader = argparse.ArgumentParser(add_help=False, parents=[common])
    reader.add_argument("--json", action="store_true", help="print JSON")
    return reader


def build_parser(harnesses: Sequence[Harness] = ()) -> argparse.ArgumentParser:
    """The whole ``thatch`` command line; ``thatch setup`` has a flag for each of ``harnesses``."""
    common = _common()
    reader = _reader(common)
    parser = argparse.ArgumentParser(
        prog="thatch",
        description="Memory and a user decision model for AI coding agents, kept on your machine.",
        parents=[common],
    )
    from thatch import __version__

    # `thatch --version` is also how doctor checks that a configured command starts.
    parser.add_argument("--version", action="version", version=f"thatch {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(
        name: str, handler: object, help_text: str, *, reads: bool = False
    ) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name, help=help_text, description=help_text, parents=[reader if reads else common]
        )
        sub.set_defaults(run=handler)
        return sub

    sub = add("remember", memory.remember, "save a memory under a new label", reads=True)
    sub.add_argument("label")
    sub.add_argument("content", help="the fact to remember; '-' reads it from stdin")
    sub.add_argument("--store", help="store to save in (default: this repository's, else global)")
    sub.add_argument("--branch", help="recall this memory only on this git branch")
    sub.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the memory already saved under this label (refused otherwise)",
    )

    sub = add("search", memory.search, "recall memories by meaning and by words", reads=True)
    sub.add_argument("query", help="what to look for; '-' reads one query a line from stdin")
    sub.add_argument("store", nargs="?", help=STORE_HELP)
    sub.add_argument("--limit", type=RESULTS, default=5, help="how many results (default 5)")
    sub.add_argument(
        "--min-cosine", type=finite_number(-1, 1), help="drop results less similar than this"
    )
    sub.add_argument(
        "--mode",
        choices=("hybrid", "vector", "words"),
        default="hybrid",
        help="rank by meaning and words (default), meaning only, or words only",
    )
    sub.add_argument("--archived", action="store_true", help="also search archived memories")

    sub = add("list", memory.list_memories, "list memories", reads=True)
    sub.add_argument("store", nargs="?", help=STORE_HELP)
    sub.add_argument("--archived", action="store_true", help="include archived memories")

    sub = add("show", memory.show, "show one memory", reads=True)
    sub.add_argument("label")
    sub.add_argument("store", nargs="?", help="its store (default: this repository's, else global)")

    for name, handler, text in (
        ("forget", memory.forget, "delete a memory for good"),
        ("archive", memory.archive, "hide a memory from recall, keeping it"),
        ("unarchive", memory.unarchive, "bring an archived memory back"),
    ):
        sub = add(name, handler, text, reads=True)
        sub.add_argument("label")
        sub.add_argument(
            "store", nargs="?", help="its store (default: this repository's, else global)"
        )

    add("stores", memory.stores, "list stores and how many memories each holds", reads=True)

    sub = add(
        "duplicates", maintenance.duplicates, "near-duplicate memories not yet reviewed", reads=True
    )
    sub.add_argument("store", nargs="?", default="all", help="a store name or 'all' (default)")
    sub.add_argument(
        "--mark-reviewed",
        nargs=2,
        metavar=("LABEL", "OTHER"),
        help="record your verdict on this pair (see --verdict)",
    )
    sub.add_argument(
        "--verdict",
        choices=("different", "same"),
        default="different",
        help="with --mark-reviewed: 'different' (default) stops reporting the pair; "
        "'same' keeps it listed as a confirmed duplicate to merge",
    )

    sub = add("hygiene", maintenance.hygiene, "stale, orphaned and duplicate memories", reads=True)
    sub.add_argument("store", nargs="?", default="all", help="a store name or 'all' (default)")
    sub.add_argument(
        "--days",
        type=whole_number(1, MAX_STALE_DAYS),
        default=90,
        help="stale after this many days (default 90)",
    )

    # reads=True: --json is accepted (an export is JSON lines whatever it says).
    sub = add("export", maintenance.export, "write memories as JSON lines to stdout", reads=True)
    sub.add_argument("--store", default="all", help="one store (default: all)")

    sub = add(
        "import", maintenance.import_file, "import memories from a JSON lines file", reads=True
    )
    sub.add_argument(
        "file",
        help='JSON lines {"label", "content", "store", "branch"?, "archived"?, "created_at"?, '
        '"updated_at"?} (an export); - for stdin',
    )
    sub.add_argument(
        "--overwrite",
        action="store_true",
        help="replace memories whose label holds other content (refused otherwise)",
    )

    add("reembed", maintenance.reembed, "re-embed memories made with another model")
    sub = add("migrate", migration.run, migration.HELP, reads=True)
    sub.description = migration.DESCRIPTION
    migration.add_arguments(sub)
    add("plugins", maintenance.plugins, "list loaded plugins and their hooks", reads=True)
    add("demo", maintenance.demo, "remember and recall a few memories in a throw-away home")
    _add_predictions(commands, common, reader)
    _add_runtime(commands, common, reader)
    _add_setup(commands, common, reader, harnesses)
    return parser


def _add_setup(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
    reader: argparse.ArgumentParser,
    harnesses: Sequence[Harness],
) -> None:
    """``thatch setup``, ``install``, ``uninstall`` and ``prime``."""
    sub = commands.add_parser(
        "setup",
        help="turn thatch on for your coding agents (this project, or --global)",
        description=(
            "Write the MCP registration, hooks, instructions and skills each chosen harness "
            "needs. Asks on a terminal; in scripts, name the harnesses. Running it again "
            "changes nothing; --uninstall removes exactly what it added."
        ),
        parents=[reader],
    )
    for harness in harnesses:
        sub.add_argument(
            f"--{harness.name}",
            action="append_const",
            const=harness.name,
            dest="harnesses",
            help=f"set up {harness.title}",
        )
    sub.add_argument(
        "--global",
        dest="global_scope",
        action="store_true",
        help="for all your projects (user-level config) instead of one project",
    )
    sub.add_argument("--project", metavar="DIR", help="the project folder (default: here)")
    sub.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
    sub.add_argument("--uninstall", action="store_true", help="remove what setup added")
    sub.add_argument(
        "--status",
        action="store_true",
        help="show installed harness plugins, detected harnesses and what is set up",
    )
    sub.add_argument("--yes", action="store_true", help="do not ask; set up what is detected")
    setup.add_storage_arguments(sub)
    # No harness named: the flags are built from the installed harnesses, maybe none.
    sub.set_defaults(run=setup.setup, harnesses=None)

    for name, handler, text in (
        ("install", plugins.install, "install a plugin distribution into thatch's environment"),
        ("uninstall", plugins.uninstall, "remove a plugin distribution from thatch's environment"),
    ):
        sub = commands.add_parser(name, help=text, description=text, parents=[common])
        sub.add_argument(
            "plugin", help=f"{', '.join(plugins.KNOWN)}, or a distribution name or path"
        )
        sub.set_defaults(run=handler)

    sub = commands.add_parser(
        "prime",
        help="let an installed agent CLI explore this project and save what it learns",
        description="Run the project-primer workflow once with the first agent CLI on PATH.",
        parents=[common],
    )
    sub.add_argument("--harness", help="the harness to run (default: the first found on PATH)")
    sub.add_argument("--dry-run", action="store_true", help="print the command, do not run it")
    sub.set_defaults(run=plugins.prime)


def _add_runtime(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
    reader: argparse.ArgumentParser,
) -> None:
    """The daemon, the MCP server, the hook commands and ``thatch doctor``."""

    def add(name: str, help_text: str, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text, parents=[parent])
        sub.set_defaults(run=runtime.run_hook_command)
        return sub

    # Named hook commands: what older setups wrote. Which harness serves each,
    # and what its payload means, is that harness plugin's (Harness.commands).
    for name, text in (
        ("reminder", "hook, session start: the project's store, how to recall, hygiene"),
        ("flush-tools", "hook, each prompt: extraction, recall and decision-model nudges"),
        ("flush-predictions", "hook, each prompt: the decision-model nudge alone"),
    ):
        add(name, text + " (payload on stdin)", reader)
    add("buffer-batch", "hook, a batch of tool calls: queue them (payload on stdin)", common)
    add("buffer-tool", "hook, one tool call: queue it (payload on stdin)", common)
    sub = add("hook", "hand a harness's hook payload (stdin) to its plugin", reader)
    sub.add_argument("harness", help="the harness's name ('thatch plugins' lists them)")
    sub.add_argument("event", help="the harness's event name, e.g. UserPromptSubmit")

    sub = commands.add_parser(
        "mcp",
        help="the stdio MCP server a harness starts (tools run in the shared daemon)",
        description="Serve thatch's tools over MCP on stdin/stdout.",
        parents=[common],
    )
    sub.add_argument(
        "--in-process",
        action="store_true",
        help="run the tools in this process instead of the shared daemon",
    )
    sub.set_defaults(run=runtime.mcp)

    group = commands.add_parser(
        "daemon",
        help="the background process that holds the model and answers hooks",
        description="Start, stop or inspect the daemon.",
        parents=[common],
    )
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, handler, text, parent in (
        ("start", runtime.daemon_start, "start the daemon (if it is not running)", common),
        ("stop", runtime.daemon_stop, "stop the daemon", common),
        ("status", runtime.daemon_status, "whether it runs, its sessions and queues", reader),
        ("run", runtime.daemon_run, "run the daemon in the foreground", common),
    ):
        sub = actions.add_parser(name, help=text, description=text, parents=[parent])
        sub.set_defaults(run=handler)
        if name == "run":
            sub.add_argument(
                "--replacing",
                action="store_true",
                help="wait a few seconds for a daemon that is stopping to let go of its lock "
                "(what a newer thatch starts when it replaces an older daemon)",
            )

    sub = commands.add_parser(
        "doctor",
        help="check the daemon, socket, model, database, plugins and harness configs",
        description="Check that thatch works here and say how to fix what does not.",
        parents=[reader],
    )
    sub.set_defaults(run=runtime.doctor)


def _add_predictions(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
    reader: argparse.ArgumentParser,
) -> None:
    """``thatch predictions ...``: the user decision model."""
    group = commands.add_parser(
        "predictions",
        help="the user decision model: what this user tends to decide, and how sure we are",
        description="The user decision model.",
        parents=[common],
    )
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")

    def add(name: str, handler: object, help_text: str) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help_text, description=help_text, parents=[reader])
        sub.set_defaults(run=handler)
        return sub

    sub = add("query", predictions.query, "predictions that fit a context")
    sub.add_argument("context", help="the situation; '-' reads one query a line from stdin")
    sub.add_argument("--store", help=STORE_HELP)
    sub.add_argument("--limit", type=RESULTS, default=10, help="how many predictions (default 10)")
    sub.add_argument("--session", help="log the showing under this session, for calibration")

    sub = add("update", predictions.update, "record the user's feedback on a prediction")
    sub.add_argument("--matcher", required=True, help='the situation, e.g. "reviewing a PR"')
    sub.add_argument("--prediction", help="what the user tends to decide")
    sub.add_argument(
        "--prediction-id",
        type=int,
        help="record on this existing prediction (the similar one an earlier answer named)",
    )
    sub.add_argument(
        "--signal",
        required=True,
        choices=("create", "confirm", "disconfirm", "soft"),
        help="create a preference, or the user confirmed / disconfirmed / hesitated",
    )
    sub.add_argument("--rationale", help="why the user decides so")
    sub.add_argument("--detail", help="what the user said or did")
    sub.add_argument("--store", help="store (default: this repository's, else global)")
    sub.add_argument("--session", help="the agent session the feedback came from")

    sub = add("list", predictions.list_predictions, "list predictions")
    sub.add_argument("store", nargs="?", help=STORE_HELP)

    for name, handler, text in (
        ("show", predictions.show, "one prediction with its situations and provenance"),
        ("delete", predictions.delete, "delete a prediction, its links and provenance"),
    ):
        sub = add(name, handler, text)
        sub.add_argument(
            "id", type=PREDICTION_ID, help="the prediction id (see 'thatch predictions list')"
        )

    sub = add("import", predictions.import_file, "replay update calls from a JSON lines file")
    sub.add_argument(
        "file", help='JSON lines {"matcher", "prediction", "signal", "rationale"?, "store"?}'
    )

    sub = add("calibration", predictions.calibration, "how well confidences match outcomes")
    sub.add_argument("--store", help="one store (default: all)")
    sub.add_argument(
        "--plot", type=plot_file, metavar="FILE.png", help="draw the reliability diagram"
    )
