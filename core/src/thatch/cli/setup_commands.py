"""``thatch setup``: choose harnesses, then write (or preview, or undo) their config."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

from thatch.cli.output import emit, note
from thatch.cli.plugin_commands import HARNESS_PLUGINS
from thatch.instructions.briefing import BRIEFING
from thatch.plugin import launcher
from thatch.plugin.config import STORAGE_PARTS, Config
from thatch.plugin.errors import ConfigError, InvalidInputError, PluginMissingError
from thatch.plugin.harness import Harness
from thatch.plugin.setup import Scope, SetupContext
from thatch.plugins import Plugins
from thatch.setup import diff, engine, storage
from thatch.setup.planner import FileEdit

#: Exit status when there is nothing to do until the user names a harness.
NEEDS_CHOICE = 2


def add_storage_arguments(sub: argparse.ArgumentParser) -> None:
    """``--storage``, ``--dsn`` and ``--schema``: which backend keeps thatch's data."""
    sub.add_argument(
        "--storage",
        choices=storage.BACKENDS,
        help="keep memories, the decision model and the prediction log in this backend "
        "(written into thatch's config file; copy existing data with thatch migrate)",
    )
    sub.add_argument(
        "--dsn",
        help="with --storage postgres: the server, postgresql://user@host:5432/database "
        "(never a password: use ~/.pgpass, PGPASSWORD or a service file)",
    )
    sub.add_argument(
        "--schema", help="with --storage postgres: the schema (default: thatch; one per team)"
    )


def setup(args: argparse.Namespace) -> int:
    home = getattr(args, "home", None)
    config = Config.load(home)
    plugins = Plugins.load(config)
    targets = plugins.harnesses()
    state_dir = config.paths.state_dir
    if args.status:
        return emit(args.json, _status(targets, args, config), _show_status)
    if args.uninstall and args.storage is not None:
        raise InvalidInputError(
            "--storage is not undone by --uninstall; run thatch setup --storage sqlite instead"
        )
    if args.storage is None and (args.dsn is not None or args.schema is not None):
        raise InvalidInputError("--dsn and --schema go with --storage postgres; add it")
    storage_result = None
    if args.storage is not None:
        storage_result = _set_storage(args, config, plugins)
        if not args.harnesses and not args.yes:
            return emit(args.json, storage_result, lambda _: None)
    chosen_launcher = launcher.choose()
    asking = not args.harnesses and not args.uninstall and not args.yes and sys.stdin.isatty()
    if asking:
        chosen = _interview(targets, args, config, chosen_launcher, plugins)
        if chosen is None:
            return NEEDS_CHOICE
        if args.storage is not None:
            _set_storage(args, config, plugins)
    else:
        chosen = _choose(targets, args, config)
    if not chosen:
        _show_status(_status(targets, args, config))
        if targets and args.uninstall:
            # --yes never picks what to remove, so the hint names the flags.
            note(
                "\nname the harnesses to remove (--yes does not choose them): "
                f"thatch setup --uninstall {_flags(targets)}"
            )
        elif targets:
            note(f"\nname the harnesses to set up: thatch setup {_flags(targets)}")
        return NEEDS_CHOICE
    if not args.json and not args.uninstall and not asking:
        _show_launcher(chosen_launcher)
    # Every harness is planned before any is written: a refusal (a file the
    # harness would ignore) leaves all of them as they were.
    planned = []
    for name in chosen:
        context = _context(args, config, name, chosen_launcher)
        edits = _plan(targets[name], context, state_dir, uninstall=args.uninstall)
        planned.append((targets[name], engine.scope_key(context), edits))
    results = [_one(target, key, edits, state_dir, args) for target, key, edits in planned]
    if not args.dry_run:
        _write_hook_table(targets, config)
    if args.json:
        for result in results:
            result["command"] = list(chosen_launcher.command)
            result["command_reason"] = chosen_launcher.reason
        return emit(True, [storage_result, *results] if storage_result else results, lambda _: None)
    if not args.dry_run and not args.uninstall:
        _next_steps([targets[name] for name in chosen], args)
    return 0


def _set_storage(args: argparse.Namespace, config: Config, plugins: Plugins) -> dict[str, Any]:
    """Write (or, with --dry-run, show) the chosen backend in thatch's config file.

    The backend's plugin checks its table (``[storage.postgres]``: the dsn's
    form, the schema's name) before anything is written.
    """
    choice = storage.choose(args.storage, args.dsn, args.schema)
    path = config.paths.config_file
    storage.keeps_server(choice, config.sections, os.environ)
    before = storage.read_file(path)
    after = storage.edited(before, choice, path)
    if choice.backend != storage.LOCAL:
        table = plugins.config_tables().get(f"storage.{choice.backend}")
        if table is None:
            raise PluginMissingError(
                f"no storage plugin is loaded that keeps backend '{choice.backend}'; "
                f"{plugins.selection.why_not(choice.backend)}"
            )
        try:
            table.read(tomllib.loads(after), path)
        except ConfigError as exc:
            raise InvalidInputError(
                f"--storage {choice.backend}: {exc} (nothing was written)"
            ) from None
    changed = after != before
    result: dict[str, Any] = {
        "storage": choice.backend,
        "config_file": str(path),
        "changed": changed,
    }
    if args.dry_run:
        if not args.json:
            print(diff.diff([FileEdit(path, before or None, after)]), end="")
        return result
    if changed:
        storage.write_file(path, after)
    if not args.json:
        state = "set" if changed else "already set"
        print(f"storage: {choice.describe()} ({state} in {path})")
        parts = [part for part in STORAGE_PARTS if part in config.storage_parts]
        if parts:
            note(
                f"note: [storage] {', '.join(parts)} still name their own backend in {path}; "
                "remove those lines for every part to follow the choice"
            )
        if changed:
            _migrate_hint(storage.current(config.sections), choice, config)
    return result


def _migrate_hint(
    before: storage.StorageChoice, after: storage.StorageChoice, config: Config
) -> None:
    """How to copy the data the old backend keeps: setup moves none of it."""
    db = shlex.quote(str(config.db_path))
    if before.backend == storage.LOCAL and after.backend != storage.LOCAL:
        if not config.db_path.is_file():
            return
        schema = f" --to-schema {after.schema}" if after.schema else ""
        to = shlex.quote(after.dsn or "postgresql://...")
        note(f"copy the data kept so far with: thatch migrate --from {db} --to {to}{schema}")
    elif before.backend != storage.LOCAL and after.backend == storage.LOCAL:
        schema = f" --from-schema {before.schema}" if before.schema else ""
        source = shlex.quote(before.dsn or "postgresql://...")
        note(f"copy the server's data with: thatch migrate --from {source}{schema} --to {db}")


def _ask_storage(args: argparse.Namespace, config: Config, plugins: Plugins) -> bool:
    """Ask where the data lives, when a server backend is installed. False: the user stopped."""
    servers = [b for b in storage.SERVERS if f"storage.{b}" in plugins.config_tables()]
    if not servers or args.storage is not None:
        return True
    now = storage.current(config.sections)
    default = "p" if now.backend in servers else "s"
    hint = "S/p" if default == "s" else "s/P"
    answer = ask(
        "keep thatch's data in SQLite on this machine, or on a PostgreSQL server?",
        hint,
        default,
        extra="sp",
    )
    if answer is None:
        return False
    if answer == "p":
        shown = f" [{now.dsn}]" if now.dsn else ""
        try:
            dsn = input(f"server, as postgresql://user@host:5432/database{shown}: ").strip()
            schema = input(f"schema [{now.schema or 'thatch'}]: ").strip()
        except EOFError:
            print()
            return False
        args.storage, args.dsn, args.schema = servers[0], dsn or now.dsn, schema or None
    elif now.backend != storage.LOCAL:
        args.storage = storage.LOCAL
    print(f"storage: {'PostgreSQL' if answer == 'p' else 'SQLite on this machine'}\n")
    return True


def _write_hook_table(harnesses: dict[str, Harness], config: Config) -> None:
    """The table the hook commands read (which events wait, their stand-in answers).

    The daemon writes it too when it starts; setup writes it first, so the
    very first session start waits for the daemon it starts.
    """
    from thatch.hooktable import hook_table_path, write_hook_table

    write_hook_table(harnesses.values(), hook_table_path(config))


def _context(
    args: argparse.Namespace,
    config: Config,
    name: str,
    chosen: launcher.Launcher | None = None,
) -> SetupContext:
    scope: Scope = "global" if args.global_scope else "project"
    project = None
    if scope == "project":
        project = Path(args.project or os.getcwd()).expanduser().resolve()
        if not project.is_dir():
            raise InvalidInputError(f"project folder {project} does not exist; pass --project DIR")
    env = {"THATCH_HOME": str(config.paths.home)} if config.paths.home else {}
    command = (chosen or launcher.choose()).command
    return SetupContext(
        scope=scope,
        project=project,
        user_home=Path.home(),
        command=command,
        env=env,
        environ=dict(os.environ),
        briefing=BRIEFING,
    )


def _flags(harnesses: dict[str, Harness]) -> str:
    """Every installed harness's flag: ``--claude --cursor``."""
    return " ".join(f"--{name}" for name in harnesses)


def _choose(targets: dict[str, Harness], args: argparse.Namespace, config: Config) -> list[str]:
    """The harnesses named by flags; else, with --yes, those detected; else none."""
    if args.harnesses:
        return list(dict.fromkeys(args.harnesses))
    if args.uninstall or not args.yes:
        return []  # removing config is never guessed, nor is a choice in a script
    return _detected(targets, args, config)


def _detected(targets: dict[str, Harness], args: argparse.Namespace, config: Config) -> list[str]:
    """The harnesses in use here: found by their plugin, or the one running this command."""
    from thatch.setup.notice import harness_of

    running = harness_of(os.environ, targets)
    return [
        name
        for name, target in targets.items()
        if name == running or target.detect(_context(args, config, name)).found
    ]


def _show_launcher(chosen: launcher.Launcher) -> None:
    print(f"harnesses will run: {shlex.join(chosen.command)}")
    print(f"  because {chosen.reason}")


def _interview(
    targets: dict[str, Harness],
    args: argparse.Namespace,
    config: Config,
    chosen_launcher: launcher.Launcher,
    plugins: Plugins | None = None,
) -> list[str] | None:
    """Ask on a terminal: scope, harnesses, then the plan. None: the user stopped."""
    print(
        "thatch setup connects thatch to your coding agents. For each harness you choose it "
        "registers\nthe MCP server (the memory tools), hooks (nudges on each prompt and tool "
        "call) and short\ninstructions. Nothing is written before you have seen the plan.\n"
    )
    if not args.global_scope and args.project is None:
        here = Path.cwd()
        answer = ask(f"set up for this project ({here}) or for all your projects?", "P/g", "p")
        if answer is None:
            return None
        args.global_scope = answer == "g"
    where = "all your projects (user-level config)" if args.global_scope else "this project"
    print(f"scope: {where}\n")
    if plugins is not None and not _ask_storage(args, config, plugins):
        return None
    detected = set(_detected(targets, args, config))
    chosen = []
    for name, target in targets.items():
        found = " (detected)" if name in detected else ""
        default = "y" if name in detected else "n"
        answer = ask(f"set up {target.title}{found}?", "Y/n" if found else "y/N", default)
        if answer is None:
            return None
        if answer == "y":
            chosen.append(name)
    if not chosen:
        print("nothing chosen; nothing written")
        return None
    print("\nthe plan:")
    _show_launcher(chosen_launcher)
    if getattr(args, "storage", None) is not None:
        print(f"  storage: {args.storage}, in {config.paths.config_file}")
    for name in chosen:
        target = targets[name]
        context = _context(args, config, name)
        edits = _plan(target, context, config.paths.state_dir, uninstall=False)
        changed = [edit for edit in edits if edit.changed]
        print(f"  {target.title} ({engine.scope_key(context)}):")
        for edit in changed:
            verb = "create" if edit.old is None else ("delete" if edit.new is None else "change")
            print(f"    {verb} {edit.path}")
        if not changed:
            print("    nothing to change")
    while True:
        answer = ask("\nwrite these files? (d shows the diff)", "Y/n/d", "y", extra="d")
        if answer is None or answer == "n":
            print("nothing written")
            return None
        if answer == "y":
            return chosen
        for name in chosen:
            edits = _plan(targets[name], _context(args, config, name), config.paths.state_dir)
            print(engine.diff(edits), end="")


def ask(question: str, hint: str, default: str, *, extra: str = "") -> str | None:
    """One answer among y / n (and ``extra``'s letters), asked again until it is one.

    Enter takes ``default``; end of input (Ctrl-D) gives None.
    """
    words = {"y": "y", "yes": "y", "n": "n", "no": "n", "p": "p", "project": "p"}
    words.update({"g": "g", "global": "g"})
    allowed = {letter.lower() for letter in hint.replace("/", "")} | set(extra)
    while True:
        try:
            reply = input(f"{question} [{hint}] ").strip().lower()
        except EOFError:
            print()
            return None
        if not reply:
            return default
        answer = words.get(reply, reply)
        if answer in allowed:
            return answer
        choices = " or ".join(sorted(allowed))
        print(f"please answer {choices} (Enter: {default})")


def _plan(
    target: Harness, context: SetupContext, state_dir: Path, *, uninstall: bool = False
) -> list[engine.FileEdit]:
    key = engine.scope_key(context)
    if uninstall:
        # What an older setup left goes too, though the manifest never recorded it.
        retired = engine.retired_of(target.changes(context))
        return engine.plan_uninstall(state_dir, target.name, key, retired)
    installed = engine.installed(state_dir, target.name, key)
    return engine.plan(target.changes(context), installed, inside=context.project)


def _next_steps(targets: list[Harness], args: argparse.Namespace) -> None:
    titles = " / ".join(target.title for target in targets)
    print(
        f"\nnext: start a new {titles} session"
        + ("" if args.global_scope else " in this project")
        + "; the first prompt starts thatch's daemon.\n"
        "  thatch doctor          checks that every hook and the MCP server can run\n"
        "  thatch setup --status  shows what is set up where"
    )


def _one(
    target: Harness,
    key: str,
    edits: list[engine.FileEdit],
    state_dir: Path,
    args: argparse.Namespace,
) -> dict[str, Any]:
    changed = [edit for edit in edits if edit.changed]
    verb = "uninstall" if args.uninstall else "setup"
    result: dict[str, Any] = {"harness": target.name, "scope": key, "action": verb}
    if args.dry_run or not changed:
        result["changes"] = [str(edit.path) for edit in changed]
        # Why a change is made when the diff alone does not say (a migration, a repair).
        result["notes"] = [note for edit in edits for note in edit.notes]
        if not args.json:
            if changed:
                print(engine.diff(edits), end="")
            else:
                print(f"{target.title} ({key}): nothing to change")
            for line in result["notes"]:
                print(f"note: {line}")
        return result
    report = engine.apply(edits, state_dir=state_dir, target=target.name, scope_key=key)
    result.update(
        written=[str(p) for p in report.written],
        deleted=[str(p) for p in report.deleted],
        backups=[str(p) for p in report.backups],
        notes=list(report.notes),
    )
    if not args.json:
        _show_report(target, key, result)
    return result


def _show_report(target: Harness, key: str, result: dict[str, Any]) -> None:
    done = "removed from" if result["action"] == "uninstall" else "set up in"
    print(f"{target.title} {done} {key}")
    for label, paths in (("wrote", result["written"]), ("deleted", result["deleted"])):
        for path in paths:
            print(f"  {label} {path}")
    if result["backups"]:
        print(f"  backups of the files as they were: {', '.join(result['backups'])}")
    for line in result["notes"]:
        print(f"  note: {line}")


def _status(
    targets: dict[str, Harness], args: argparse.Namespace, config: Config
) -> dict[str, Any]:
    installations = engine.status(config.paths.state_dir)
    harnesses = []
    for name, target in targets.items():
        context = _context(args, config, name)
        detection = target.detect(context)
        harnesses.append(
            {
                "harness": name,
                "title": target.title,
                "detected": detection.found,
                "evidence": list(detection.evidence),
                "problems": list(target.problems(context)),
            }
        )
    return {
        "plugins": sorted(targets),
        "storage": storage.current(config.sections).describe(),
        "harnesses": harnesses,
        "installed": [
            {"harness": i.target, "scope": i.scope, "files": engine.describe(i)}
            for i in installations
        ],
    }


def _show_status(status: dict[str, Any]) -> None:
    print(f"storage: {status['storage']}")
    if not status["plugins"]:
        first, *others = HARNESS_PLUGINS
        print(f"no harness plugins installed: thatch install {first} (or {', '.join(others)})")
    for harness in status["harnesses"]:
        seen = "detected" if harness["detected"] else "not detected"
        evidence = f" ({'; '.join(harness['evidence'])})" if harness["evidence"] else ""
        print(f"{harness['title']}: plugin installed, {seen}{evidence}")
        for problem in harness["problems"]:
            print(f"  - {problem}")
    for install in status["installed"]:
        print(f"set up: {install['harness']} in {install['scope']}")
        for line in install["files"]:
            print(f"  {line}")
