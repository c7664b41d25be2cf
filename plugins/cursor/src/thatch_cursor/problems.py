"""What is missing or broken in a Cursor setup, each problem with its fix.

``thatch mcp`` asks this when Cursor starts it, with its own idea of the
command (bare ``thatch``), so the checks look for thatch's hooks and server
by their arguments, whatever program path setup wrote.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thatch.plugin import SetupContext
from thatch.plugin.launcher import program_problem, unrunnable_fix
from thatch.plugin.setup import compare_installed

from thatch_cursor import HARNESS, jsonfile
from thatch_cursor.rules import rule_text
from thatch_cursor.target import HOOKED_EVENTS, CursorPaths

Which = Callable[[str], str | None]

#: ``NAME=value`` before the program: setup sets ``THATCH_HOME`` that way in hooks.
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def find_problems(context: SetupContext, paths: CursorPaths, which: Which) -> list[str]:
    """Every problem of the Cursor files for ``context`` (empty: set up well)."""
    fix = _fix(context)
    unrunnable = f"fix: {unrunnable_fix(_setup_command(context))}"
    found = _hook_problems(paths.hooks, fix, which, unrunnable)
    found.extend(_mcp_problems(paths.mcp, fix, which, unrunnable))
    if paths.rule is not None:
        found.extend(_rule_problems(paths.rule, rule_text(context.briefing), fix))
        rules = paths.workflow_rules(context.briefing)
        found.extend(_workflow_problems(rules, paths.rule.parent, fix))
    return found


def _setup_command(context: SetupContext) -> str:
    if context.scope == "global":
        return context.run("setup", f"--{HARNESS}", "--global")
    return context.run("setup", f"--{HARNESS}", "--project", str(context.project))


def _fix(context: SetupContext) -> str:
    """The command that repairs this scope's setup, as a sentence ending."""
    return f"fix: run `{_setup_command(context)}`"


def _hook_problems(path: Path, fix: str, which: Which, unrunnable: str) -> list[str]:
    data, problem = _read(path, fix, "Cursor's hooks are not set up")
    if problem:
        return [problem]
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return [f'{path} has no "hooks" object, so Cursor never runs thatch; {fix}']
    found: list[str] = []
    missing: list[str] = []
    doubled: list[str] = []
    programs: list[str] = []
    for event in HOOKED_EVENTS:
        argvs = [argv for argv in _commands(hooks.get(event)) if _runs_hook(argv, event)]
        if not argvs:
            missing.append(event)
        elif len(argvs) > 1:
            doubled.append(event)
        programs.extend(argv[0] for argv in argvs)
    if missing:
        found.append(f"{path} does not run thatch on {', '.join(missing)}; {fix}")
    if doubled:
        found.append(
            f"{path} runs thatch more than once on {', '.join(doubled)}; "
            "keep one 'hook cursor' entry per event"
        )
    found.extend(_unrunnable(path, programs, unrunnable, which))
    return found


def _mcp_problems(path: Path, fix: str, which: Which, unrunnable: str) -> list[str]:
    data, problem = _read(path, fix, "Cursor has no thatch MCP server")
    if problem:
        return [problem]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    server = servers.get("thatch") if isinstance(servers, dict) else None
    if not isinstance(server, dict):
        return [f"{path} does not register the thatch MCP server, so memory tools are off; {fix}"]
    command, args = server.get("command"), server.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list) or not args or args[-1] != "mcp":
        return [f"{path}: the \"thatch\" server does not run 'thatch mcp'; {fix}"]
    return _unrunnable(path, [command], unrunnable, which)


def _rule_problems(path: Path, wanted: str, fix: str) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [
            f"the Cursor rule {path} is missing, so the agent is not told how to use thatch; {fix}"
        ]
    except (OSError, UnicodeDecodeError) as exc:
        return [f"the Cursor rule {path} cannot be read ({exc}); {fix}"]
    if text != wanted:
        return [f"the Cursor rule {path} is out of date; {fix}"]
    return []


def _workflow_problems(rules: dict[Path, str], folder: Path, fix: str) -> list[str]:
    """One problem for the missing workflow rules and one for those out of date."""
    missing, stale = compare_installed(rules)
    found = []
    if missing:
        found.append(
            f"the thatch workflow rules {', '.join(missing)} are missing from {folder}, "
            f"so the agent cannot pull them in; {fix}"
        )
    if stale:
        found.append(f"the thatch workflow rules {', '.join(stale)} are out of date; {fix}")
    return found


def _read(path: Path, fix: str, absent: str) -> tuple[Any, str | None]:
    """The file's data, or a problem saying why there is none."""
    try:
        data = jsonfile.load(path)
    except ValueError as exc:
        # The reader's message already names the file, the spot and the fix.
        return None, str(exc)
    if data is jsonfile.MISSING:
        return None, f"{absent}: {path} does not exist; {fix}"
    return data, None


def _commands(entries: Any) -> list[list[str]]:
    """The argument lists of a hooks.json event's entries, without leading assignments.

    Entries that are not shell words (an unclosed quote) are skipped.
    """
    if not isinstance(entries, list):
        return []
    argvs = []
    for entry in entries:
        command = entry.get("command") if isinstance(entry, dict) else None
        if not isinstance(command, str):
            continue
        try:
            argv = shlex.split(command)
        except ValueError:
            continue
        while argv and _ASSIGNMENT.match(argv[0]):
            argv = argv[1:]
        if argv:
            argvs.append(argv)
    return argvs


def _runs_hook(argv: list[str], event: str) -> bool:
    """Whether ``argv`` is thatch's hook command for ``event`` (any program path)."""
    return len(argv) >= 4 and argv[-3:-1] == ["hook", HARNESS] and argv[-1].lower() == event.lower()


def _unrunnable(path: Path, programs: list[str], fix: str, which: Which) -> list[str]:
    """A problem for each distinct program that Cursor cannot start."""
    problems = (program_problem(program, which) for program in dict.fromkeys(programs))
    return [f"{path} runs {problem}; {fix}" for problem in problems if problem is not None]
