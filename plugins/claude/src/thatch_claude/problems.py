"""What is missing or broken in a Claude Code setup, each problem with its fix.

Claude Code merges its configuration levels, so a project setup counts what
the user level provides too (a user-scope MCP server, hooks in
``~/.claude/settings.json``); a global setup looks at the user level only.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from thatch.plugin import SetupContext
from thatch.plugin.launcher import program_problem, unrunnable_fix
from thatch.plugin.setup import Briefing

from thatch_claude import HARNESS, legacy
from thatch_claude.files import SERVER_NAME, ClaudeFiles, files_for
from thatch_claude.instructions import BLOCK_NAME, instructions_block, skills
from thatch_claude.target import HOOK_EVENTS

Which = Callable[[str], str | None]

# A leading NAME=value word of a shell command sets a variable; it is not the program.
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def find_problems(context: SetupContext, which: Which) -> list[str]:
    """Every problem of the Claude Code setup in ``context``, each ending with its fix.

    :param context: the scope to check; project scope also counts user-level config.
    :param which: finds a program on PATH (``shutil.which``).
    """
    files = files_for(context)
    fix = _fix(context)
    configs = _Configs()
    # What cannot be started, by why: a bare `thatch` missing from the
    # harness's PATH is one problem, however many entries run it.
    unstartable: dict[str, list[str]] = {}
    found = [
        *_mcp_problems(files, configs, which, fix, unstartable),
        *_hook_problems(files, configs, which, fix, unstartable),
        *_legacy_problems(files, configs, fix),
        *_block_problems(files, fix),
        *_skill_problems(files, context.briefing, fix),
    ]
    unrunnable = f"fix: {unrunnable_fix(_setup_command(context))}"
    found.extend(
        f"{' and '.join(what)} run{'s' if len(what) == 1 else ''} {why}; {unrunnable}"
        for why, what in unstartable.items()
    )
    return [*configs.problems, *found]


def _setup_command(context: SetupContext) -> str:
    if context.scope == "global" or context.project is None:
        return context.run("setup", f"--{HARNESS}", "--global")
    return context.run("setup", f"--{HARNESS}", "--project", str(context.project))


def _fix(context: SetupContext) -> str:
    return f"fix: run `{_setup_command(context)}`"


class _Configs:
    """JSON config files read once each; unreadable ones become problems."""

    def __init__(self) -> None:
        self._loaded: dict[Path, dict[str, Any]] = {}
        self.problems: list[str] = []

    def read(self, path: Path) -> dict[str, Any]:
        if path not in self._loaded:
            self._loaded[path] = self._load(path)
        return self._loaded[path]

    def _load(self, path: Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self.problems.append(
                f"Claude Code cannot use {path}: {exc}; fix the file by hand "
                "(thatch setup never overwrites a file it cannot read)"
            )
            return {}
        if not isinstance(data, dict):
            self.problems.append(
                f"{path} holds {type(data).__name__} instead of a JSON object; fix it by hand"
            )
            return {}
        return data


def _lookup(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


# -- the MCP server -----------------------------------------------------------------
def _mcp_problems(
    files: ClaudeFiles,
    configs: _Configs,
    which: Which,
    fix: str,
    unstartable: dict[str, list[str]],
) -> list[str]:
    user = configs.read(files.user_config)
    servers = [(files.user_config, _lookup(user, "mcpServers", SERVER_NAME))]
    if files.project_key is not None:
        # Local scope (``claude mcp add --scope local``) lives under the project's key.
        local = _lookup(user, "projects", files.project_key, "mcpServers", SERVER_NAME)
        servers.append((files.user_config, local))
    shared = _lookup(configs.read(files.mcp_file), "mcpServers", SERVER_NAME)
    if files.mcp_file != files.user_config:
        servers.append((files.mcp_file, shared))
    registered = [(path, server) for path, server in servers if server is not None]
    if not registered:
        if files.project_key is None:
            where = f"in {files.user_config} (user scope)"
        else:
            where = f"for this project (neither in {files.mcp_file} nor in {files.user_config})"
        return [
            f"Claude Code has no '{SERVER_NAME}' MCP server {where}, "
            f"so the memory tools are missing; {fix}"
        ]
    problems = [
        problem
        for path, server in registered
        if (problem := _server_problem(path, server, which, fix, unstartable)) is not None
    ]
    only_shared = all(path == files.mcp_file for path, _ in registered)
    if only_shared and files.project_key is not None and not _approved(files, configs):
        settings = ", ".join(str(path) for path in _settings_files(files))
        old_place = f"{files.user_config} under {'.'.join(files.approval_keys)}"
        problems.append(
            f"the '{SERVER_NAME}' server in {files.mcp_file} waits for approval "
            f"('claude mcp list' shows it pending): no enabledMcpjsonServers lists it "
            f"(looked in {settings} and {old_place}); {fix}"
        )
    return problems


def _server_problem(
    path: Path, server: Any, which: Which, fix: str, unstartable: dict[str, list[str]]
) -> str | None:
    command = server.get("command") if isinstance(server, Mapping) else None
    if not isinstance(command, str) or not command:
        return f"the '{SERVER_NAME}' MCP server in {path} has no command; {fix}"
    problem = program_problem(command, which)
    if problem is not None:
        unstartable.setdefault(problem, []).append(f"the '{SERVER_NAME}' MCP server in {path}")
    return None


def _approved(files: ClaudeFiles, configs: _Configs) -> bool:
    """Whether the user let Claude Code start the project's ``.mcp.json`` servers.

    Setup writes the approval to ``.claude/settings.local.json``. Older Claude
    Code kept it in ``~/.claude.json`` under the project's key (2.1.197 moves it
    to the local settings when it starts), and ``enableAllProjectMcpServers``
    approves every server, so all of these count.
    """
    listed = _lookup(configs.read(files.user_config), *files.approval_keys)
    if isinstance(listed, list) and SERVER_NAME in listed:
        return True
    for path in _settings_files(files):
        settings = configs.read(path)
        if settings.get("enableAllProjectMcpServers") is True:
            return True
        enabled = settings.get("enabledMcpjsonServers")
        if isinstance(enabled, list) and SERVER_NAME in enabled:
            return True
    return False


# -- hooks --------------------------------------------------------------------------
def _hook_problems(
    files: ClaudeFiles,
    configs: _Configs,
    which: Which,
    fix: str,
    unstartable: dict[str, list[str]],
) -> list[str]:
    # event -> (settings file, program) of each hook that runs ``thatch hook claude EVENT``
    found: dict[str, list[tuple[Path, str]]] = {}
    for path in _settings_files(files):
        for event, command in _hook_commands(configs.read(path)):
            program = _thatch_hook_program(command, event)
            if program is not None:
                found.setdefault(event, []).append((path, program))
    problems = []
    missing = [event for event in HOOK_EVENTS if event not in found]
    if missing:
        places = " or ".join(str(path) for path in _settings_files(files))
        problems.append(
            f"Claude Code runs no thatch hook for {', '.join(missing)} (looked in {places}), "
            f"so thatch misses those events and cannot nudge; {fix}"
        )
    if "PostToolUse" in found and "PostToolBatch" in found:
        path = found["PostToolUse"][0][0]
        problems.append(
            f"both PostToolUse and PostToolBatch run thatch, so each tool call is queued "
            f"twice; fix: remove the PostToolUse hook running thatch from {path}"
        )
    # One problem per file and program, not per event: all the hooks usually share both.
    broken: dict[tuple[Path, str], list[str]] = {}
    for event, hooks in found.items():
        for path, program in hooks:
            problem = program_problem(program, which)
            if problem is not None:
                broken.setdefault((path, problem), []).append(event)
    for (path, problem), events in broken.items():
        unstartable.setdefault(problem, []).append(
            f"the thatch hooks for {', '.join(events)} in {path}"
        )
    return problems


def _settings_files(files: ClaudeFiles) -> list[Path]:
    """The settings files whose hooks Claude Code runs for this scope, project level first."""
    user = files.user_settings
    if files.settings == user:
        return [user]
    return [files.settings, files.settings.with_name("settings.local.json"), user]


def _hook_commands(settings: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """``(event, command)`` for every command hook in one settings file."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, Mapping):
        return
    for event, entries in hooks.items():
        for entry in entries if isinstance(entries, list) else ():
            inner = entry.get("hooks") if isinstance(entry, Mapping) else None
            for hook in inner if isinstance(inner, list) else ():
                command = hook.get("command") if isinstance(hook, Mapping) else None
                if isinstance(command, str):
                    yield str(event), command


def _thatch_hook_program(command: str, event: str) -> str | None:
    """The program of ``command`` if it runs ``... hook claude EVENT``, else None.

    The program is the first word after any ``NAME=value`` assignments:
    ``thatch``, or the absolute path setup wrote when thatch was not on PATH.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    wanted = ["hook", HARNESS, event]
    if not any(words[i : i + 3] == wanted for i in range(len(words) - 2)):
        return None
    return next(word for word in words if not _ASSIGNMENT.match(word))


# -- what an older setup left, and what changed since setup ---------------------------
def _legacy_problems(files: ClaudeFiles, configs: _Configs, fix: str) -> list[str]:
    """Hooks and the MCP server of an older thatch setup, which today's setup replaces."""
    problems = []
    for path in _settings_files(files):
        old = sorted({command for _, command in legacy.old_hooks(configs.read(path))})
        if old:
            shown = ", ".join(f"`{command}`" for command in old)
            problems.append(
                f"{path} still has hooks of an older thatch setup ({shown}), which today's "
                f"thatch does not answer; {fix} (it replaces them)"
            )
    for path in dict.fromkeys([files.mcp_file, files.user_config]):
        if legacy.old_server(configs.read(path)) is not None:
            problems.append(
                f"the '{SERVER_NAME}' MCP server in {path} is an older thatch setup's and does "
                f"not start today's server; {fix} (it replaces it)"
            )
    return problems


def _block_problems(files: ClaudeFiles, fix: str) -> list[str]:
    """thatch's CLAUDE.md block: an older one, a lost end line, or text edited since setup."""
    from thatch.plugin import blocks

    path = files.instructions
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    problems = []
    if blocks.legacy_blocks(text):
        problems.append(
            f"{path} has thatch's block from an older setup; {fix} (it replaces the block)"
        )
    if blocks.unclosed(text, BLOCK_NAME):
        problems.append(
            f"{path} has the line '{blocks.begin_marker(BLOCK_NAME)}' but lost its end line "
            f"'{blocks.end_marker(BLOCK_NAME)}'; {fix} (it mends the block and keeps your text)"
        )
        return problems
    span = blocks.find(text, BLOCK_NAME, str(path))
    if span is not None and text[span[0] : span[1]].replace("\r\n", "\n") != blocks.render(
        BLOCK_NAME, instructions_block()
    ):
        problems.append(
            f"thatch's block in {path} differs from what this version writes (edited, or "
            f"from an older version); {fix} (it rewrites the block)"
        )
    return problems


def _skill_problems(files: ClaudeFiles, briefing: Briefing, fix: str) -> list[str]:
    """``thatch-*`` skills that differ from this version's, or that it no longer ships."""
    stale = []
    shipped = skills(briefing)
    for skill in shipped:
        path = files.skills / skill.name / "SKILL.md"
        try:
            if path.read_text(encoding="utf-8") != skill.content:
                stale.append(skill.name)
        except (OSError, UnicodeDecodeError):
            continue  # missing: the setup check for the skills is the manifest's
    shipped_names = {skill.name for skill in shipped}
    gone = [folder.name for folder in legacy.stale_skill_folders(files.skills, shipped_names)]
    problems = []
    if stale:
        problems.append(
            f"the skill{'s' if len(stale) > 1 else ''} {', '.join(stale)} in {files.skills} "
            f"differ{'' if len(stale) > 1 else 's'} from this version's; {fix} (it rewrites them)"
        )
    if gone:
        problems.append(
            f"{files.skills} has thatch skills this version no longer ships ({', '.join(gone)}); "
            f"{fix} (it removes those holding only their SKILL.md)"
        )
    return problems
