"""``thatch setup``: choose harnesses, then write (or preview, or undo) their config."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from thatch.cli.output import emit, note
from thatch.config import Config
from thatch.errors import InvalidInputError, ThatchError
from thatch.plugins import Plugins
from thatch.setup import engine
from thatch.setup.model import SetupContext, SetupTarget

#: Exit status when there is nothing to do until the user names a harness.
NEEDS_CHOICE = 2


def setup(args: argparse.Namespace) -> int:
    home = getattr(args, "home", None)
    config = Config.load(home)
    targets = {target.name: target for target in Plugins.load(config).setup_targets()}
    state_dir = config.paths.state_dir
    if args.status:
        return emit(args.json, _status(targets, args, config), _show_status)
    chosen = _choose(targets, args, config)
    if not chosen:
        _show_status(_status(targets, args, config))
        note("\nname the harnesses to set up: thatch setup --claude --cursor --opencode")
        return NEEDS_CHOICE
    results = []
    for name in chosen:
        target = targets.get(name)
        if target is None:
            raise ThatchError(
                f"the {name} plugin is not installed; run 'thatch install {name}' first"
            )
        results.append(_one(target, _context(args, config, name), state_dir, args))
    if args.json:
        return emit(True, results, lambda _: None)
    return 0


def thatch_command() -> tuple[str, ...]:
    """How harnesses should run thatch: the bare name when PATH finds this one, else its path."""
    ours = Path(sys.executable).with_name("thatch")
    on_path = shutil.which("thatch")
    if on_path and ours.exists() and Path(on_path).resolve() == ours.resolve():
        return ("thatch",)
    if ours.exists():
        return (str(ours),)
    return (sys.executable, "-m", "thatch")


def _context(args: argparse.Namespace, config: Config, name: str) -> SetupContext:
    scope = "global" if args.global_scope else "project"
    project = None
    if scope == "project":
        project = Path(args.project or os.getcwd()).expanduser().resolve()
        if not project.is_dir():
            raise InvalidInputError(f"project folder {project} does not exist; pass --project DIR")
    env = {"THATCH_HOME": str(config.paths.home)} if config.paths.home else {}
    return SetupContext(
        scope=scope, project=project, user_home=Path.home(), command=thatch_command(), env=env
    )


def _choose(targets: dict[str, SetupTarget], args: argparse.Namespace, config: Config) -> list[str]:
    """The harnesses named by flags; else asked on a terminal; else, with --yes, those detected."""
    if args.harnesses:
        return list(dict.fromkeys(args.harnesses))
    if args.uninstall:
        return []  # removing config is never guessed
    detected = [
        name
        for name, target in targets.items()
        if target.detect(_context(args, config, name)).found
    ]
    if args.yes:
        return detected
    if not sys.stdin.isatty():
        return []
    return [name for name in targets if _ask(targets[name], default=name in detected)]


def _ask(target: SetupTarget, *, default: bool) -> bool:
    hint = "Y/n" if default else "y/N"
    try:
        answer = input(f"set up {target.title}? [{hint}] ").strip().lower()
    except EOFError:
        return False
    return default if not answer else answer.startswith("y")


def _one(
    target: SetupTarget, context: SetupContext, state_dir: Path, args: argparse.Namespace
) -> dict[str, Any]:
    key = engine.scope_key(context)
    if args.uninstall:
        edits = engine.plan_uninstall(state_dir, target.name, key)
    else:
        edits = engine.plan(target.changes(context), engine.installed(state_dir, target.name, key))
    changed = [edit for edit in edits if edit.changed]
    verb = "uninstall" if args.uninstall else "setup"
    result: dict[str, Any] = {"harness": target.name, "scope": key, "action": verb}
    if args.dry_run or not changed:
        result["changes"] = [str(edit.path) for edit in changed]
        if not args.json:
            if changed:
                print(engine.diff(edits), end="")
            else:
                print(f"{target.title} ({key}): nothing to change")
        return result
    if args.uninstall:
        report = engine.uninstall(state_dir, target.name, key)
    else:
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


def _show_report(target: SetupTarget, key: str, result: dict[str, Any]) -> None:
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
    targets: dict[str, SetupTarget], args: argparse.Namespace, config: Config
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
        "harnesses": harnesses,
        "installed": [
            {"harness": i.target, "scope": i.scope, "files": engine.describe(i)}
            for i in installations
        ],
    }


def _show_status(status: dict[str, Any]) -> None:
    if not status["plugins"]:
        print("no harness plugins installed: thatch install claude (or cursor, opencode)")
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
