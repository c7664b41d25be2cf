"""What is missing or broken in an opencode setup, each problem with its fix.

``thatch mcp`` asks this when opencode starts it, with its own idea of the
command (bare ``thatch``), so the checks look for thatch's server and plugin
by what they run, whatever program path setup wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

from thatch.plugin import InvalidInputError, SetupContext
from thatch.plugin.launcher import program_problem, unrunnable_fix
from thatch.plugin.setup import Briefing, compare_installed

from thatch_opencode import HARNESS
from thatch_opencode.instructions import BLOCK_NAME
from thatch_opencode.jsplugin import rendered_command, rendered_template_id, template_id
from thatch_opencode.target import CONFIG_NAMES, OpencodePaths

Which = Callable[[str], str | None]


def find_problems(context: SetupContext, paths: OpencodePaths, which: Which) -> list[str]:
    """Every problem of the opencode files for ``context`` (empty: set up well)."""
    fix = _fix(context)
    unrunnable = f"fix: {unrunnable_fix(_setup_command(context))}"
    configs, found = _read_configs(paths.config_folder, fix)
    found.extend(_server_problems(configs, paths, fix, which, unrunnable))
    found.extend(_plugin_problems(paths.plugin, fix, which, unrunnable))
    if context.scope == "project":
        found.extend(_block_problems(paths.instructions, fix))
    else:
        found.extend(_instructions_problems(configs, paths, fix))
    found.extend(_agent_problems(paths, context.briefing, fix))
    return found


def _setup_command(context: SetupContext) -> str:
    if context.scope == "global":
        return context.run("setup", f"--{HARNESS}", "--global")
    return context.run("setup", f"--{HARNESS}", "--project", str(context.project))


def _fix(context: SetupContext) -> str:
    """The command that repairs this scope's setup, as a sentence ending."""
    return f"fix: run `{_setup_command(context)}`"


def _read_configs(folder: Path, fix: str) -> tuple[dict[Path, dict[str, Any]], list[str]]:
    """Each config file of ``folder`` that holds an object (opencode merges them all)."""
    from thatch.plugin import jsonc

    configs: dict[Path, dict[str, Any]] = {}
    problems: list[str] = []
    for name in CONFIG_NAMES:
        path = folder / name
        try:
            data = jsonc.loads(path.read_text(encoding="utf-8"), str(path))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path} cannot be read ({exc}); make it readable, then {fix}")
            continue
        except InvalidInputError as exc:
            # The parser's message names the line and column and says what to do.
            problems.append(f"opencode cannot read its config: {exc}")
            continue
        if data is None:
            continue
        if not isinstance(data, dict):
            problems.append(f"{path} must hold a JSON object; fix it, then {fix}")
            continue
        configs[path] = data
    return configs, problems


def _server_problems(
    configs: dict[Path, dict[str, Any]],
    paths: OpencodePaths,
    fix: str,
    which: Which,
    unrunnable: str,
) -> list[str]:
    servers = [
        (path, data["mcp"]["thatch"])
        for path, data in configs.items()
        if isinstance(data.get("mcp"), dict) and "thatch" in data["mcp"]
    ]
    if not servers:
        return [
            f"{paths.config} does not register the thatch MCP server, so memory tools are off; "
            f"{fix}"
        ]
    # opencode reads opencode.json, then opencode.jsonc over it: the first found wins.
    path, server = servers[0]
    if not isinstance(server, dict):
        return [f'{path}: "mcp"."thatch" must be an object; {fix}']
    command = server.get("command")
    if server.get("type") != "local" or not _is_command(command) or command[-1] != "mcp":
        return [f'{path}: "mcp"."thatch" does not run \'thatch mcp\' as a local server; {fix}']
    if server.get("enabled") is False:
        return [
            f'{path}: the thatch MCP server is disabled ("enabled": false); '
            "set it to true to use memory tools"
        ]
    return _unrunnable(path, command[0], unrunnable, which)


def _plugin_problems(plugin: Path, fix: str, which: Which, unrunnable: str) -> list[str]:
    try:
        source = plugin.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [f"{plugin} is missing, so opencode never sends events to thatch (no nudges); {fix}"]
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{plugin} cannot be read ({exc}); {fix}"]
    if rendered_template_id(source) != template_id():
        return [f"{plugin} was written by another version of thatch-opencode; {fix}"]
    command = rendered_command(source)
    if command is None:
        return [f"{plugin} has no command to run thatch; {fix}"]
    return _unrunnable(plugin, command[0], unrunnable, which)


def _block_problems(agents: Path, fix: str) -> list[str]:
    from thatch.plugin.blocks import begin_marker

    try:
        text = agents.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{agents} cannot be read ({exc}); {fix}"]
    if begin_marker(BLOCK_NAME) not in text:
        return [f"{agents} has no thatch instructions block; {fix}"]
    return []


def _instructions_problems(
    configs: dict[Path, dict[str, Any]], paths: OpencodePaths, fix: str
) -> list[str]:
    wanted = str(paths.instructions)
    listed = any(
        isinstance(data.get("instructions"), list) and wanted in data["instructions"]
        for data in configs.values()
    )
    if not listed:
        return [f'{paths.config} does not list {wanted} under "instructions"; {fix}']
    if not paths.instructions.is_file():
        return [f'{wanted} is missing (opencode lists it under "instructions"); {fix}']
    return []


def _agent_problems(paths: OpencodePaths, briefing: Briefing, fix: str) -> list[str]:
    """One problem for the missing workflow agents and one for those out of date."""
    missing, stale = compare_installed(paths.workflow_agents(briefing))
    found = []
    if missing:
        found.append(
            f"the thatch workflow agents {', '.join(missing)} are missing from {paths.agents}, "
            f"so the agent cannot delegate to them; {fix}"
        )
    if stale:
        found.append(f"the thatch workflow agents {', '.join(stale)} are out of date; {fix}")
    return found


def _is_command(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _unrunnable(where: Path, program: str, fix: str, which: Which) -> list[str]:
    """A problem when ``program`` (a bare name or a path) cannot be run by opencode."""
    problem = program_problem(program, which)
    return [] if problem is None else [f"{where} runs {problem}; {fix}"]
