"""What an older thatch setup left in Claude Code's files, recognised by its shape.

Nothing records what an older setup wrote, so its entries are known by what
they run:

- a hook whose program is thatch (``thatch``, a path ending in ``/thatch``,
  ``uv run ... thatch`` or ``python -m thatch``) with a subcommand other than
  ``hook``: an unknown one (``thatch echo``) fails, and an old hook command
  (``thatch reminder``) would answer each event a second time next to
  today's ``thatch hook claude EVENT``;
- an ``mcpServers.thatch`` entry whose program is thatch with a subcommand
  other than ``mcp``;
- a CLAUDE.md block between the older markers (see :mod:`thatch.plugin.blocks`);
- a ``thatch-*`` skill this version no longer ships, when its folder holds
  nothing but its ``SKILL.md``.

``thatch setup`` takes them out as it writes today's entries; uninstall
takes them out too.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from thatch.plugin import blocks
from thatch.plugin.launcher import subcommand as subcommand_of_arguments
from thatch.plugin.setup import (
    MIGRATED,
    Retired,
    RetiredBlock,
    RetiredEntry,
    RetiredFile,
    RetiredItem,
    SetupContext,
)

from thatch_claude.files import SERVER_NAME, ClaudeFiles, files_for
from thatch_claude.instructions import skills

#: The subcommand today's hooks run.
HOOK_SUBCOMMAND = "hook"
#: What a Claude Code reader of the file is called (it reads JSON strictly).
STRICT_READER = "Claude Code"

# A leading NAME=value word of a shell command sets a variable; it is not the program.
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def retired(context: SetupContext) -> list[Retired]:
    """Everything of an older setup in the files ``context``'s setup writes."""
    files = files_for(context)
    found: list[Retired] = []
    for path in _hook_files(files):
        found.extend(_retired_hooks(path, _read_json(path)))
    server = old_server(_read_json(files.mcp_file))
    if server is not None:
        reason = f"replaced the '{SERVER_NAME}' MCP server running `{_shown(server)}`: {MIGRATED}"
        found.append(
            RetiredEntry(
                files.mcp_file,
                ("mcpServers", SERVER_NAME),
                server,
                reason,
                strict_for=STRICT_READER,
            )
        )
    found.extend(_retired_blocks(files.instructions))
    shipped = {skill.name for skill in skills(context.briefing)}
    found.extend(_retired_skills(files.skills, shipped))
    return found


def subcommand(command: str) -> str | None:
    """The thatch subcommand a shell command runs (``""``: none); None when it is not thatch."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return _thatch_subcommand([word for word in words if not _ASSIGNMENT.match(word)])


def is_old_hook(command: str) -> bool:
    """Whether a hook command is thatch's, but not today's ``thatch hook ...``."""
    found = subcommand(command)
    return found is not None and found != HOOK_SUBCOMMAND


def old_hooks(settings: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """``(event, command)`` of every hook in ``settings`` an older setup left."""
    for event, entry in _entries(settings):
        for hook in _hooks_of(entry):
            if is_old_hook(hook["command"]):
                yield event, hook["command"]


def _thatch_subcommand(words: list[str]) -> str | None:
    if not words:
        return None
    program = os.path.basename(words[0])
    if program == "thatch":
        rest = words[1:]
    elif program == "uv" and "run" in words and "thatch" in words:
        rest = words[words.index("thatch", words.index("run")) + 1 :]
    elif program.startswith("python") and words[1:3] == ["-m", "thatch"]:
        rest = words[3:]
    else:
        return None
    return subcommand_of_arguments(rest) or ""


def _hook_files(files: ClaudeFiles) -> list[Path]:
    if files.local_settings is None:
        return [files.settings]
    return [files.settings, files.local_settings]


def _read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; empty when missing or unreadable (the planner says why)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _entries(settings: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    hooks = settings.get("hooks")
    if not isinstance(hooks, Mapping):
        return
    for event, entries in hooks.items():
        for entry in entries if isinstance(entries, list) else ():
            yield str(event), entry


def _hooks_of(entry: Any) -> list[Mapping[str, Any]]:
    inner = entry.get("hooks") if isinstance(entry, Mapping) else None
    return [
        hook
        for hook in (inner if isinstance(inner, list) else ())
        if isinstance(hook, Mapping) and isinstance(hook.get("command"), str)
    ]


def _retired_hooks(path: Path, settings: Mapping[str, Any]) -> Iterator[RetiredItem]:
    for event, entry in _entries(settings):
        old = [hook for hook in _hooks_of(entry) if is_old_hook(hook["command"])]
        if not old:
            continue
        commands = ", ".join(f"`{hook['command']}`" for hook in old)
        reason = f"removed the {event} hook {commands}: {MIGRATED}"
        others = [hook for hook in entry["hooks"] if hook not in old]
        keep = {**entry, "hooks": others} if others else None
        yield RetiredItem(path, ("hooks", event), entry, keep, reason, STRICT_READER)


def old_server(config: Mapping[str, Any]) -> Any:
    """The ``mcpServers.thatch`` entry of ``config`` if an older setup wrote it, else None."""
    servers = config.get("mcpServers")
    server = servers.get(SERVER_NAME) if isinstance(servers, Mapping) else None
    if not isinstance(server, Mapping):
        return None
    command, args = server.get("command"), server.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        return None
    words = [command, *(str(arg) for arg in args)]
    found = _thatch_subcommand(words)
    return server if found is not None and found != "mcp" else None


def _shown(server: Mapping[str, Any]) -> str:
    return shlex.join([server["command"], *(str(arg) for arg in server.get("args", []))])


def _retired_blocks(path: Path) -> list[RetiredBlock]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [
        RetiredBlock(path, begin, end, f"replaced the block {begin} … {end}: {MIGRATED}")
        for begin, end in blocks.legacy_blocks(text)
    ]


def stale_skill_folders(skills_folder: Path, shipped: Collection[str]) -> list[Path]:
    """The ``thatch-*`` skill folders in ``skills_folder`` that are not ``shipped`` (by name)."""
    try:
        folders = sorted(skills_folder.iterdir())
    except OSError:
        return []
    return [
        folder
        for folder in folders
        if folder.name.startswith("thatch-") and folder.name not in shipped and folder.is_dir()
    ]


def _retired_skills(skills_folder: Path, shipped: Collection[str]) -> list[RetiredFile]:
    found = []
    for folder in stale_skill_folders(skills_folder, shipped):
        skill = folder / "SKILL.md"
        try:
            if [entry.name for entry in folder.iterdir()] != ["SKILL.md"]:
                continue  # something else is in there: the user's, so the folder stays
            content = skill.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        reason = f"removed the skill {folder.name}, which this version of thatch no longer ships"
        found.append(RetiredFile(skill, content, reason))
    return found
