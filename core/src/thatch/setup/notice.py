"""Telling the agent (through ``thatch mcp``) that its harness's setup is incomplete."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from thatch.setup.model import SetupContext, SetupTarget


def harness_of(environ: Mapping[str, str]) -> str | None:
    """The harness that started this process, from its environment."""
    named = environ.get("THATCH_HARNESS")
    if named:
        return named
    if environ.get("CURSOR_VERSION"):
        return "cursor"
    if environ.get("CLAUDE_PROJECT_DIR") or environ.get("CLAUDECODE"):
        return "claude"
    if environ.get("OPENCODE"):
        return "opencode"
    return None


def notice_for(home: str | None, environ: Mapping[str, str]) -> str:
    """The notice for the harness that started ``thatch mcp`` (empty when set up well)."""
    name = harness_of(environ)
    if name is None:
        return ""
    from thatch.config import Config
    from thatch.plugins import Plugins

    config = Config.load(home, environ)
    targets = {target.name: target for target in Plugins.load(config, environ).setup_targets()}
    target = targets.get(name)
    if target is None:
        return (
            f"thatch: the {name} plugin is not installed, so hooks and nudges for this "
            f"harness do not work. Tell the user to run: thatch install {name} && "
            f"thatch setup --{name}"
        )
    problems = _problems(target, environ)
    if not problems:
        return ""
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        f"thatch: the {target.title} setup is incomplete; memory tools work, but:\n{listed}\n"
        f"Tell the user to run: thatch setup --{name}"
    )


def _problems(target: SetupTarget, environ: Mapping[str, str]) -> list[str]:
    """The project setup's problems, unless either setup has none (either one suffices)."""
    from thatch.runtime import project_folder

    project = Path(project_folder(environ, None) or os.getcwd())
    user_home = Path(environ.get("HOME") or Path.home())
    found: list[str] = []
    for scope, folder in (("project", project), ("global", None)):
        context = SetupContext(
            scope=scope, project=folder, user_home=user_home, command=("thatch",)
        )
        problems = list(target.problems(context))
        if not problems:
            return []
        found = found or problems
    return found
